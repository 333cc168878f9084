/** The BlobStore contract on S3-compatible storage: S3BlobStore against s3rver, a real S3 protocol server this file starts. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3_CREDENTIALS, S3Server } from '../../scripts/s3-server.mjs';
import { S3_MIN_PART_BYTES, S3BlobStore } from '../../stores/blob-s3.js';
import { pieces } from '../../src/index.js';
import { patternBytes, readAll, sameBytes, streamOf } from '../support/blobs.js';
import { blobStoreContract } from './suites.js';

const server = new S3Server();
beforeAll(() => server.start());
afterAll(async () => {
  await server.stop();
  await server.remove();
});

let stores = 0;
const prefixes = new WeakMap<object, string>();
async function open(prefix: string, partBytes?: number) {
  const store = await S3BlobStore.open({ bucket: 'odbrest', prefix, endpoint: server.endpoint, forcePathStyle: true, partBytes, ...S3_CREDENTIALS });
  prefixes.set(store, prefix);
  return store;
}

blobStoreContract('S3BlobStore', {
  create: () => open(`contract-${stores++}/`),
  reopen: async (store) => open(prefixes.get(store)!),
  // the multipart uploads a failed put left (ListMultipartUploads)
  leftovers: async (store) => (await server.uploads()).filter((upload) => upload.key.startsWith(prefixes.get(store)!)).length,
});

describe('S3BlobStore', () => {
  it('sends a blob of several parts as a multipart upload, and a failed one leaves no upload behind', async () => {
    const store = await open('parts/', S3_MIN_PART_BYTES);
    const bytes = patternBytes(11 * 1024 * 1024 + 7, 3); // three parts of 5 MiB
    await store.put('big', streamOf(bytes, [1_000_000]));
    expect(sameBytes(await readAll((await store.get('big'))!.stream), bytes)).toBe(true);
    const range = (await store.get('big', { start: 5 * 1024 * 1024 - 3, end: 5 * 1024 * 1024 + 3 }))!;
    expect(sameBytes(await readAll(range.stream), bytes.subarray(5 * 1024 * 1024 - 3, 5 * 1024 * 1024 + 3))).toBe(true);
    const gone = new Error('the client went away');
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 7 * 1024 * 1024)); // past the first part
      },
      pull(controller) {
        controller.error(gone);
      },
    });
    await expect(store.put('big', failing)).rejects.toBe(gone);
    expect(await server.uploads()).toEqual([]);
    expect(sameBytes(await readAll((await store.get('big'))!.stream), bytes)).toBe(true);
  });

  it('cuts an upload into parts in two buffers taken in turn (pieces with buffers), however many parts', async () => {
    const bytes = patternBytes(5 * 1000 + 7, 4);
    const seen: Array<{ buffer: ArrayBufferLike; copy: Uint8Array }> = [];
    for await (const piece of pieces(streamOf(bytes, [333]) as unknown as AsyncIterable<Uint8Array>, 1000, 2)) seen.push({ buffer: piece.buffer, copy: piece.slice() });
    expect(seen.map(({ copy }) => copy.length)).toEqual([1000, 1000, 1000, 1000, 1000, 7]);
    expect(sameBytes(new Uint8Array(Buffer.concat(seen.map(({ copy }) => copy))), bytes)).toBe(true);
    expect(new Set(seen.map(({ buffer }) => buffer)).size).toBe(2);
    expect(seen[2]!.buffer).toBe(seen[0]!.buffer);
    expect(seen[3]!.buffer).toBe(seen[1]!.buffer);
  });

  it('sweep aborts the multipart uploads a crashed process left under the prefix', async () => {
    const store = await open('crashed/');
    // an upload started by a process that died before it could abort it
    const { AwsClient } = await import('aws4fetch');
    const client = new AwsClient({ ...S3_CREDENTIALS, service: 's3', region: 'us-east-1' });
    expect((await client.fetch(`${server.endpoint}/odbrest/crashed/upload-x?uploads=`, { method: 'POST' })).status).toBe(200);
    expect((await server.uploads()).map((upload) => upload.key)).toEqual(['crashed/upload-x']);
    expect(await store.sweep('upload-', Date.now() - 60_000)).toBe(0);
    expect(await server.uploads()).toHaveLength(1); // younger than the cut: perhaps still under way
    expect(await store.sweep('upload-', Date.now() + 60_000)).toBe(0);
    expect(await server.uploads()).toEqual([]);
  });

  it('answers StorageUnavailableError while the storage is unreachable, and works again when it is back', async () => {
    const store = await open('outage/');
    await store.put('kept', streamOf(patternBytes(1000)));
    await server.stop();
    try {
      await expect(store.put('new', streamOf(patternBytes(1000)))).rejects.toMatchObject({ name: 'StorageUnavailableError' });
      await expect(store.get('kept')).rejects.toMatchObject({ name: 'StorageUnavailableError' });
    } finally {
      await server.start();
    }
    expect(await store.stat('new')).toBeUndefined();
    expect(sameBytes(await readAll((await store.get('kept'))!.stream), patternBytes(1000))).toBe(true);
  });

  it('names the missing credentials and a wrong bucket or part size', async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    try {
      await expect(S3BlobStore.open({ bucket: 'odbrest' })).rejects.toThrow('S3BlobStore needs credentials');
    } finally {
      Object.assign(process.env, saved.id === undefined ? {} : { AWS_ACCESS_KEY_ID: saved.id }, saved.secret === undefined ? {} : { AWS_SECRET_ACCESS_KEY: saved.secret });
    }
    await expect(S3BlobStore.open({ bucket: 'No_Such', ...S3_CREDENTIALS })).rejects.toThrow('bucket must be an S3 bucket name');
    await expect(S3BlobStore.open({ bucket: 'odbrest', partBytes: 1024, ...S3_CREDENTIALS })).rejects.toThrow('partBytes must be a whole number of at least 5 MiB');
  });
});
