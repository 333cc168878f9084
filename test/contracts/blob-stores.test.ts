/** The BlobStore contract on the in-process store and on a folder on disk. */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { MemoryBlobStore } from '../../src/index.js';
import { FolderBlobStore } from '../../stores/file-store.js';
import { blobStoreContract } from './suites.js';

blobStoreContract('MemoryBlobStore', { create: async () => new MemoryBlobStore() });

const dir = mkdtempSync(join(tmpdir(), 'odbrest-blob-folder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let folders = 0;
const paths = new WeakMap<object, string>();

blobStoreContract('FolderBlobStore', {
  create: async () => {
    const path = join(dir, `folder-${folders++}`);
    const store = await FolderBlobStore.open({ path });
    paths.set(store, path);
    return store;
  },
  reopen: async (store) => {
    await store.close?.();
    const again = await FolderBlobStore.open({ path: paths.get(store)! });
    paths.set(again, paths.get(store)!);
    return again;
  },
  leftovers: async (store) => readdirSync(paths.get(store)!).filter((name) => name.startsWith('.tmp-')).length,
});
