// Pieces of the byte-throughput benches (blobs, blobs-http): the bytes they move, the fs streams
// reference, and alternating rounds turned into rows.
import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { median } from './common.mjs';

export const MiB = 1024 * 1024;
/** What a Node request body delivers at a time. */
export const CHUNK = 64 * 1024;

/** The same `size` bytes every time, as fresh 64 KiB chunks (an upload's body). */
export function* chunks(size) {
  const block = new Uint8Array(16 * CHUNK);
  for (let i = 0; i < block.length; i++) block[i] = (i * 2654435761) >>> 24;
  for (let given = 0; given < size; given += CHUNK) yield block.slice(given % block.length, (given % block.length) + CHUNK);
}

export async function drainNode(stream) {
  let size = 0;
  for await (const chunk of stream) size += chunk.length;
  return size;
}

/** The reference: `size` bytes written to `path` with fs streams and fsynced (as the blob stores fsync), and read back. */
export function fsCopy(path, size) {
  return {
    async write() {
      await pipeline(Readable.from(chunks(size)), createWriteStream(path));
      const handle = await open(path, 'r+');
      await handle.datasync();
      await handle.close();
    },
    async read() {
      if ((await drainNode(createReadStream(path))) !== size) throw new Error('short read');
    },
  };
}

/**
 * One row per `[label, ours, reference]`: MiB/s of moving `size` bytes, from `rounds` rounds that run
 * each once in turn; `value` and `reference` are medians, `ratio` the median of the rounds' ratios.
 */
export async function throughputRows(cases, { size, rounds, name }) {
  const rate = async (fn) => {
    const start = performance.now();
    await fn();
    return size / MiB / ((performance.now() - start) / 1000);
  };
  const rows = [];
  for (const [label, ours, reference] of cases) {
    const a = [];
    const b = [];
    for (let round = 0; round < rounds; round++) {
      a.push(await rate(ours));
      b.push(await rate(reference));
    }
    rows.push({ name: name(label), value: median(a), unit: 'MiB/s', reference: median(b), ratio: median(a.map((x, i) => x / b[i])) });
  }
  return rows;
}

/** One HTTP exchange over loopback; answers the status and the body (JSON parsed, or only its length). */
export function send(port, method, path, headers, body) {
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
