/**
 * `odbrest/testing`: the store contracts every shipped store passes, for hosts' own stores.
 *
 *   import * as vitest from 'vitest';
 *   import { storeContracts } from 'odbrest/testing';
 *   const { objectStoreContract, keyValueStoreContract } = storeContracts(vitest);
 *   objectStoreContract('MyObjectStore', { create: async () => new MyObjectStore() });
 *   keyValueStoreContract('MyKeyValueStore', async () => new MyKeyValueStore());
 */
import type { KeyValueStore } from '../storage/types.js';
import { keyValueStoreContract, realClock, type ContractClock } from './key-value-store.js';
import { objectStoreContract, type ObjectStoreHarness } from './object-store.js';
import type { TestApi } from './test-api.js';

export interface StoreContracts {
  /** Registers the ObjectStore suite; `create` makes a new, empty store per test (see `ObjectStoreHarness`). */
  objectStoreContract(name: string, harness: ObjectStoreHarness): void;
  /** Registers the KeyValueStore suite; expiry is checked in real time unless `clock` moves the store's own. */
  keyValueStoreContract(name: string, create: () => Promise<KeyValueStore>, clock?: ContractClock): void;
}

/** The suites bound to a test runner's `describe`, `it`, `expect` and `afterEach` (vitest's). */
export function storeContracts(test: TestApi): StoreContracts {
  return {
    objectStoreContract: (name, harness) => objectStoreContract(name, harness, test),
    keyValueStoreContract: (name, create, clock = realClock) => keyValueStoreContract(name, create, clock, test),
  };
}

export { realClock };
export type * from './object-store.js';
export type { ContractClock } from './key-value-store.js';
export type { TestApi } from './test-api.js';
