import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { FileObjectStore } from '../../stores/file-store.js';
import { objectStoreContract } from './suites.js';

const dir = mkdtempSync(join(tmpdir(), 'odbrest-file-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const paths = new WeakMap<object, string>();

async function openAt(path: string, compactMinBytes?: number) {
  const store = await FileObjectStore.open({ path, compactMinBytes });
  paths.set(store, path);
  return store;
}
const reopen = async (store: object, compactMinBytes?: number) => {
  await (store as FileObjectStore).close();
  return openAt(paths.get(store)!, compactMinBytes);
};

objectStoreContract('FileObjectStore', { create: () => openAt(join(dir, `store-${files++}.journal`)), reopen });
// The same contract with the journal rewritten before every reopen, so what the contract checks after
// a restart is read back from a compacted file (the size threshold alone never trips on its small files).
objectStoreContract('FileObjectStore, compacted before each reopen', {
  create: () => openAt(join(dir, `store-${files++}.journal`), 4096),
  reopen: async (store) => {
    const file = store as FileObjectStore;
    const before = file.compactions;
    await file.compact();
    expect(file.compactions).toBe(before + 1);
    return reopen(store, 4096);
  },
});
