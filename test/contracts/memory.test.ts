import { MemoryKeyValueStore } from '../../src/storage/memory-kv.js';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.js';
import { testClock } from '../helpers.js';
import { keyValueStoreContract } from './suites.js';
import { objectStoreContract } from './suites.js';

objectStoreContract('MemoryObjectStore', { create: async (options) => new MemoryObjectStore(options) });

const clock = testClock();
keyValueStoreContract('MemoryKeyValueStore', async () => new MemoryKeyValueStore({ now: clock.now }), {
  advance: async (ms) => clock.advance(ms),
});
