// File upload and download throughput (MiB/s) over real HTTP on loopback: the Node adapter serving a
// 256 MiB file from the disk blob store (FolderBlobStore), each as a ratio against copying the same
// bytes with fs streams in the same run (written with fs.createWriteStream and fsynced, as the store
// fsyncs; read with fs.createReadStream). The upload is the three steps of PROTOCOL.md 6.6 with a raw
// body (the store hashes every byte); the download is `GET /v1/file/{id}`. Client and server share
// this process. Rounds alternate; the ratio is the median of the rounds' ratios.
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createService } from '../dist/index.js';
import { FolderBlobStore } from '../dist/file-store.js';
import { serve } from '../dist/node.js';
import { APP_KEY, demoData, loginAlice, median } from './common.mjs';

const MiB = 1024 * 1024;
const SIZE = 256 * MiB;
const CHUNK = 64 * 1024;
const ROUNDS = 5;

/** The same `SIZE` bytes every time, as fresh 64 KiB chunks. */
function* chunks() {
  const block = new Uint8Array(16 * CHUNK);
  for (let i = 0; i < block.length; i++) block[i] = (i * 2654435761) >>> 24;
  for (let given = 0; given < SIZE; given += CHUNK) yield block.slice(given % block.length, (given % block.length) + CHUNK);
}

/** One HTTP exchange over loopback; answers the status and the body (JSON parsed, or only its length). */
function send(port, method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, async (response) => {
      const parts = [];
      let size = 0;
      for await (const chunk of response) {
        size += chunk.length;
        if (response.headers['content-type']?.startsWith('application/json')) parts.push(chunk);
      }
      resolve({ status: response.statusCode, size, json: parts.length ? JSON.parse(Buffer.concat(parts).toString()) : undefined });
    });
    req.once('error', reject);
    if (body) pipeline(body, req).catch(reject);
    else req.end();
  });
}

async function drainNode(stream) {
  let size = 0;
  for await (const chunk of stream) size += chunk.length;
  return size;
}

/** MiB/s of one call of `fn`. */
async function rate(fn) {
  const start = performance.now();
  await fn();
  return SIZE / MiB / ((performance.now() - start) / 1000);
}

export default async function bench() {
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-files-bench-'));
  const service = createService({
    data: demoData(),
    users: { passwordIterations: 1000 },
    access: { rules: { Document: { create: ['*'], delete: ['*'] } } },
    files: { blobs: await FolderBlobStore.open({ path: join(dir, 'blobs') }), maxUploadBytes: SIZE },
    onError: (error) => console.error(error),
  });
  await service.ready;
  const server = await serve(service, { port: 0, hostname: '127.0.0.1' });
  const { port } = server.address();
  try {
    const base = `http://127.0.0.1:${port}`;
    const headers = { appkey: APP_KEY, sessionId: await loginAlice({ fetch: (r) => fetch(r) }, base) };
    const copy = join(dir, 'copy');
    let fileId;
    const upload = async () => {
      if (fileId) await send(port, 'DELETE', `/v1/object/${fileId}`, headers); // its bytes go too
      const { uploadId } = (await send(port, 'GET', '/v1/uploadFile', headers)).json.data;
      const body = Readable.from(chunks());
      const sent = await send(port, 'POST', `/v1/uploadFile/${uploadId}?name=bench.bin`, { ...headers, 'content-type': 'application/octet-stream', 'content-length': SIZE }, body);
      if (sent.json?.data?.size !== SIZE) throw new Error(`upload failed: ${JSON.stringify(sent.json)}`);
      fileId = (await send(port, 'PATCH', `/v1/uploadFile/${uploadId}`, headers)).json.data['~ObjectID'];
    };
    const fsWrite = async () => {
      await pipeline(Readable.from(chunks()), createWriteStream(copy));
      const handle = await open(copy, 'r+');
      await handle.datasync();
      await handle.close();
    };
    const download = async () => {
      const got = await send(port, 'GET', `/v1/file/${fileId}`, headers);
      if (got.status !== 200 || got.size !== SIZE) throw new Error(`download failed: ${got.status}, ${got.size} bytes`);
    };
    const fsRead = async () => {
      if ((await drainNode(createReadStream(copy))) !== SIZE) throw new Error('short read');
    };
    const rows = [];
    for (const [label, ours, reference] of [
      ['upload (3 steps, raw body, fsynced, SHA-256)', upload, fsWrite],
      ['download (GET /v1/file)', download, fsRead],
    ]) {
      const a = [];
      const b = [];
      for (let round = 0; round < ROUNDS; round++) {
        a.push(await rate(ours));
        b.push(await rate(reference));
      }
      rows.push({
        name: `file ${label} over loopback HTTP, Node adapter, FolderBlobStore, 256 MiB (reference: fs streams)`,
        value: median(a),
        unit: 'MiB/s',
        reference: median(b),
        ratio: median(a.map((x, i) => x / b[i])),
      });
    }
    return rows;
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
