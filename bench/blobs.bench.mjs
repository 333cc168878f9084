// Blob store benches, against the built package (dist/): FolderBlobStore write and read throughput
// (MiB/s) of a 256 MiB blob, each as a ratio against copying the same bytes with fs streams in the
// same run (written with fs.createWriteStream and fsynced, as the store fsyncs; read with
// fs.createReadStream). The store's figures include its SHA-256 of every byte. Rounds alternate;
// the ratio is the median of the rounds' ratios.
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FolderBlobStore } from '../dist/file-store.js';
import { median } from './common.mjs';

const MiB = 1024 * 1024;
const SIZE = 256 * MiB;
const CHUNK = 64 * 1024; // what a Node request body delivers
const ROUNDS = 5;

/** The same `SIZE` bytes every time, as fresh 64 KiB chunks (an upload's body). */
function* chunks() {
  const block = new Uint8Array(16 * CHUNK);
  for (let i = 0; i < block.length; i++) block[i] = (i * 2654435761) >>> 24;
  for (let given = 0; given < SIZE; given += CHUNK) yield block.slice(given % block.length, (given % block.length) + CHUNK);
}

const webStream = () => ReadableStream.from(chunks());

async function drainWeb(stream) {
  const reader = stream.getReader();
  let size = 0;
  for (let next = await reader.read(); !next.done; next = await reader.read()) size += next.value.length;
  return size;
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
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-blob-bench-'));
  try {
    const store = await FolderBlobStore.open({ path: join(dir, 'blobs') });
    const copy = join(dir, 'copy');
    const storeWrite = () => store.put('bench', webStream());
    const fsWrite = async () => {
      await pipeline(Readable.from(chunks()), createWriteStream(copy));
      const handle = await open(copy, 'r+');
      await handle.datasync();
      await handle.close();
    };
    const storeRead = async () => {
      if ((await drainWeb((await store.get('bench')).stream)) !== SIZE) throw new Error('short read');
    };
    const fsRead = async () => {
      if ((await drainNode(createReadStream(copy))) !== SIZE) throw new Error('short read');
    };
    const rows = [];
    for (const [label, ours, reference] of [
      ['write (put, fsynced, SHA-256)', storeWrite, fsWrite],
      ['read (get, whole blob)', storeRead, fsRead],
    ]) {
      const a = [];
      const b = [];
      for (let round = 0; round < ROUNDS; round++) {
        a.push(await rate(ours));
        b.push(await rate(reference));
      }
      rows.push({
        name: `FolderBlobStore ${label}, 256 MiB (reference: fs streams)`,
        value: median(a),
        unit: 'MiB/s',
        reference: median(b),
        ratio: median(a.map((x, i) => x / b[i])),
      });
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
