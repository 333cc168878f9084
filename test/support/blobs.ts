/** Bytes and streams for the blob store tests: the contract's own (odbrest/testing), and crash-test blobs. */
import { patternBytes, sameBytes, streamOf } from '../../src/testing/blobs.js';

export { endlessStream, failingStream, patternBytes, readAll, sameBytes, sha256Hex, streamOf } from '../../src/testing/blobs.js';

/** A self-describing blob for crash tests: `seed` (4 bytes, big-endian), then `patternBytes(size, seed)`, in 64 KiB chunks. */
export function blobOfSeed(seed: number, size: number): ReadableStream<Uint8Array> {
  const bytes = new Uint8Array(4 + size);
  new DataView(bytes.buffer).setUint32(0, seed);
  bytes.set(patternBytes(size, seed), 4);
  return streamOf(bytes);
}

/** The seed of a blob made by `blobOfSeed`, or `undefined` when the bytes are not exactly such a blob. */
export function seedOfBlob(bytes: Uint8Array): number | undefined {
  if (bytes.length < 4) return undefined;
  const seed = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0);
  return sameBytes(bytes.subarray(4), patternBytes(bytes.length - 4, seed)) ? seed : undefined;
}
