/**
 * The store subpaths load by name from the built package, as ESM and as CommonJS, and an outage in
 * one of them is answered 503 by the core: the error class is shared between the bundles, not copied.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { freePort } from './support/processes.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;

const request = `new Request('http://x/v1/login', { method: 'POST', headers: { appkey: 'k', 'content-type': 'application/json' },
  body: JSON.stringify({ user: 'alice', pass: 'x', appNames: ['crm'] }) })`;
const body = (port: number) => `
  const service = createService({ kv: new RedisKeyValueStore({ url: 'redis://127.0.0.1:${port}' }) });
  service.fetch(${request}).then((r) => r.json()).then(async (answer) => {
    console.log(JSON.stringify({ answer, stores: [typeof FileObjectStore, typeof PostgresObjectStore] }));
    await service.close();
  });`;
const expected = {
  answer: { status: { internalStatus: '503', statusMessage: 'storage unavailable, retry later' }, data: {} },
  stores: ['function', 'function'],
};

test('ESM: odbrest/redis, odbrest/postgres and odbrest/file-store import by name; outages answer 503', async () => {
  const imports = `import { createService } from 'odbrest'; import { RedisKeyValueStore } from 'odbrest/redis';
    import { PostgresObjectStore } from 'odbrest/postgres'; import { FileObjectStore } from 'odbrest/file-store';`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', imports + body(await freePort())], { cwd: root });
  expect(JSON.parse(stdout)).toEqual(expected);
});

test('CommonJS: the same through require', async () => {
  const requires = `const { createService } = require('odbrest'); const { RedisKeyValueStore } = require('odbrest/redis');
    const { PostgresObjectStore } = require('odbrest/postgres'); const { FileObjectStore } = require('odbrest/file-store');`;
  const { stdout } = await run(process.execPath, ['-e', requires + body(await freePort())], { cwd: root });
  expect(JSON.parse(stdout)).toEqual(expected);
});

/** Puts 11 bytes with a limit of 10 into each blob store from the built package; prints what was thrown. */
const blobBody = (dir: string) => `
  const stores = [new MemoryBlobStore(), new FolderBlobStore({ path: ${JSON.stringify(dir)} }), new PostgresBlobStore({ connectionString: 'postgres://postgres@127.0.0.1:1/x' })];
  Promise.all(stores.slice(0, 2).map((store) => store.put('big', new Blob([new Uint8Array(11)]).stream(), { maxBytes: 10 }).catch((e) => e instanceof BlobTooLargeError)))
    .then((tooLarge) => console.log(JSON.stringify({ tooLarge, types: stores.map((store) => typeof store.put) })))
    .finally(() => stores[2].close());`;
const blobExpected = { tooLarge: [true, true], types: ['function', 'function', 'function'] };

test('ESM and CommonJS: the blob stores load from odbrest/file-store and odbrest/postgres; their errors are the core\'s classes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'odbrest-package-blobs-'));
  try {
    const imports = `import { MemoryBlobStore, BlobTooLargeError } from 'odbrest'; import { FolderBlobStore } from 'odbrest/file-store';
      import { PostgresBlobStore } from 'odbrest/postgres';`;
    const esm = await run(process.execPath, ['--input-type=module', '-e', imports + blobBody(join(dir, 'esm'))], { cwd: root });
    expect(JSON.parse(esm.stdout)).toEqual(blobExpected);
    const requires = `const { MemoryBlobStore, BlobTooLargeError } = require('odbrest'); const { FolderBlobStore } = require('odbrest/file-store');
      const { PostgresBlobStore } = require('odbrest/postgres');`;
    const cjs = await run(process.execPath, ['-e', requires + blobBody(join(dir, 'cjs'))], { cwd: root });
    expect(JSON.parse(cjs.stdout)).toEqual(blobExpected);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
