/** Bytes and streams the blob-store contract writes and reads (web streams only: every runtime). */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

/** `size` pseudo-random bytes from `seed` (xorshift32: fast, repeatable, no two blobs alike). */
export function patternBytes(size: number, seed = 1): Uint8Array {
  const bytes = new Uint8Array(size);
  let x = seed | 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return bytes;
}

/** A stream of `bytes` in chunks of the given sizes, cycled (a copy each, as a network body gives). */
export function streamOf(bytes: Uint8Array, chunkSizes: number[] = [65_536]): ReadableStream<Uint8Array> {
  let offset = 0;
  let turn = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      const size = chunkSizes[turn++ % chunkSizes.length]!;
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

/** Every byte of `stream`, joined. */
export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** SHA-256 of `bytes`, lower-case hex (what a blob store answers as `sha256`). */
export const sha256Hex = (bytes: Uint8Array): string => bytesToHex(sha256(bytes));

/**
 * An endless stream of `chunkBytes` chunks that records how many bytes it gave and whether it was
 * cancelled (to check that a store stops reading at its limit).
 */
export function endlessStream(chunkBytes = 1000) {
  const state = { given: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(new Uint8Array(chunkBytes).fill(7));
      state.given += chunkBytes;
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

/** A stream that gives `bytes` and then fails with `error`, as a body does when its client disconnects. */
export function failingStream(bytes: Uint8Array, error: Error, chunkBytes = 65_536): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.error(error);
      controller.enqueue(bytes.slice(offset, offset + chunkBytes));
      offset += chunkBytes;
    },
  });
}

/** `actual` holds exactly the bytes of `expected` (compared in a loop: `toEqual` walks large arrays slowly). */
export function sameBytes(actual: Uint8Array | undefined, expected: Uint8Array): boolean {
  if (actual === undefined || actual.length !== expected.length) return false;
  for (let i = 0; i < actual.length; i++) if (actual[i] !== expected[i]) return false;
  return true;
}
