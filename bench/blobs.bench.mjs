// Blob store benches, against the built package (dist/): FolderBlobStore write and read throughput
// (MiB/s) of a 256 MiB blob, each as a ratio against copying the same bytes with fs streams in the
// same run (written with fs.createWriteStream and fsynced, as the store fsyncs; read with
// fs.createReadStream). The store's figures include its SHA-256 of every byte. Rounds alternate;
// the ratio is the median of the rounds' ratios.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FolderBlobStore } from '../dist/file-store.js';
import { chunks, fsCopy, MiB, throughputRows } from './throughput.mjs';

const SIZE = 256 * MiB;

async function drainWeb(stream) {
  const reader = stream.getReader();
  let size = 0;
  for (let next = await reader.read(); !next.done; next = await reader.read()) size += next.value.length;
  return size;
}

export default async function bench() {
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-blob-bench-'));
  try {
    const store = await FolderBlobStore.open({ path: join(dir, 'blobs') });
    const copy = fsCopy(join(dir, 'copy'), SIZE);
    const storeWrite = () => store.put('bench', ReadableStream.from(chunks(SIZE)));
    const storeRead = async () => {
      if ((await drainWeb((await store.get('bench')).stream)) !== SIZE) throw new Error('short read');
    };
    return await throughputRows(
      [
        ['write (put, fsynced, SHA-256)', storeWrite, copy.write],
        ['read (get, whole blob)', storeRead, copy.read],
      ],
      { size: SIZE, rounds: 5, name: (label) => `FolderBlobStore ${label}, 256 MiB (reference: fs streams)` },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
