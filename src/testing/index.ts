/**
 * `odbrest/testing`: the store contracts every shipped store passes, for hosts' own stores.
 *
 *   import * as vitest from 'vitest';
 *   import { storeContracts } from 'odbrest/testing';
 *   const { objectStoreContract, keyValueStoreContract, blobStoreContract } = storeContracts(vitest);
 *   objectStoreContract('MyObjectStore', { create: async () => new MyObjectStore() });
 *   keyValueStoreContract('MyKeyValueStore', async () => new MyKeyValueStore());
 *   blobStoreContract('MyBlobStore', { create: async () => new MyBlobStore() });
 */
import type { KeyValueStore } from '../storage/types.js';
import { blobStoreContract, type BlobStoreHarness } from './blob-store.js';
import { keyValueStoreContract, realClock, type ContractClock } from './key-value-store.js';
import { objectStoreContract, type ObjectStoreHarness } from './object-store.js';
import type { TestApi } from './test-api.js';

export interface StoreContracts {
  /** Registers the ObjectStore suite; `create` makes a new, empty store per test (see `ObjectStoreHarness`). */
  objectStoreContract(name: string, harness: ObjectStoreHarness): void;
  /** Registers the KeyValueStore suite; expiry is checked in real time unless `clock` moves the store's own. */
  keyValueStoreContract(name: string, create: () => Promise<KeyValueStore>, clock?: ContractClock): void;
  /** Registers the BlobStore suite; `create` makes a new, empty store per test (see `BlobStoreHarness`). */
  blobStoreContract(name: string, harness: BlobStoreHarness): void;
}

/** The suites bound to a test runner's `describe`, `it`, `expect` and `afterEach` (vitest's). */
export function storeContracts(test: TestApi): StoreContracts {
  return {
    objectStoreContract: (name, harness) => objectStoreContract(name, harness, test),
    keyValueStoreContract: (name, create, clock = realClock) => keyValueStoreContract(name, create, clock, test),
    blobStoreContract: (name, harness) => blobStoreContract(name, harness, test),
  };
}

export { realClock };
export type * from './object-store.js';
export type { BlobStoreHarness } from './blob-store.js';
export type { ContractClock } from './key-value-store.js';
export type { TestApi } from './test-api.js';
