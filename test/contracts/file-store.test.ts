import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { FileObjectStore } from '../../stores/file-store.js';
import { objectStoreContract, type ObjectStoreHarnessOptions } from './suites.js';

const dir = mkdtempSync(join(tmpdir(), 'odbrest-file-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
/** Where each store lives and the clock it was opened with, to open it again the same way. */
const opened = new WeakMap<object, { path: string; options: ObjectStoreHarnessOptions }>();

async function openAt(path: string, options: ObjectStoreHarnessOptions = {}, compactMinBytes?: number) {
  const store = await FileObjectStore.open({ path, compactMinBytes, now: options.now });
  opened.set(store, { path, options });
  return store;
}
const reopen = async (store: object, compactMinBytes?: number) => {
  await (store as FileObjectStore).close();
  const { path, options } = opened.get(store)!;
  return openAt(path, options, compactMinBytes);
};

objectStoreContract('FileObjectStore', { create: (options) => openAt(join(dir, `store-${files++}.journal`), options), reopen });
// The same contract with the journal rewritten before every reopen, so what the contract checks after
// a restart is read back from a compacted file (the size threshold alone never trips on its small files).
objectStoreContract('FileObjectStore, compacted before each reopen', {
  create: (options) => openAt(join(dir, `store-${files++}.journal`), options, 4096),
  reopen: async (store) => {
    const file = store as FileObjectStore;
    const before = file.compactions;
    await file.compact();
    expect(file.compactions).toBe(before + 1);
    return reopen(store, 4096);
  },
});
