import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { FileObjectStore } from '../../stores/file-store.js';
import { objectStoreContract } from './object-store.js';

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
// The same contract with compaction after every few KB, so listings are also checked across rewrites.
objectStoreContract('FileObjectStore, compacting often', {
  create: () => openAt(join(dir, `store-${files++}.journal`), 4096),
  reopen: (store) => reopen(store, 4096),
});
