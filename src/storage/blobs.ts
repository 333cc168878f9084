/**
 * The BlobStore interface (the bytes of files, beside the object store) and the pieces every
 * implementation shares: metering an incoming stream (size, SHA-256, size limit), cutting it into
 * pieces of a fixed size, resolving a byte range, and a pull stream that reads one piece at a time.
 * Only web-standard APIs: these run in every runtime the core supports.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { BlobTooLargeError, StorageUnavailableError, StoreValueError } from './errors.js';

/** Ids a blob store accepts: 1 to 100 of `[A-Za-z0-9_-]`. Stores may rely on it (file names, keys). */
export const BLOB_ID = /^[A-Za-z0-9_-]{1,100}$/;

export interface BlobPutOptions {
  /**
   * The most bytes the blob may have. Once the stream carries more, `put` stops reading, cancels the
   * stream, keeps nothing and throws `BlobTooLargeError` (the route's `413`, before the rest is read).
   */
  maxBytes?: number;
}

/** What `put` answers once the blob is stored. */
export interface BlobWritten {
  size: number;
  /** SHA-256 of the bytes, lowercase hex, computed while they streamed in (the file's `Sha256` and `ETag`). */
  sha256: string;
}

export interface BlobStat {
  size: number;
  /** Epoch milliseconds of the write (or move) that stored the blob. */
  storeTime: number;
}

/**
 * A byte range to read: bytes `start` up to (not including) `end` (default: the blob's end), or the
 * last `suffix` bytes. Clipped to the blob: a range past the end reads fewer bytes or none.
 */
export type BlobRange = { start: number; end?: number } | { suffix: number };

/** An opened blob: its whole size, the clipped range `[start, end)` and a stream of exactly those bytes. */
export interface BlobRead {
  size: number;
  start: number;
  end: number;
  /**
   * The bytes, read as the consumer pulls them. Read it to the end or cancel it: until then the store
   * may hold a resource (an open file). Empty when the clipped range is (a route answers `416` then).
   */
  stream: ReadableStream<Uint8Array>;
}

/**
 * Where file bytes live. Small and storage-neutral, like `ObjectStore`; `test/contracts/blob-store.ts`
 * is the suite every implementation passes. Ids match `BLOB_ID`; a store that cannot find a blob
 * answers `undefined` or `false` (never throws for a missing or malformed id, except `put` and
 * `move`'s target, which refuse a malformed one with `StoreValueError`). Backend trouble is
 * `StorageUnavailableError`. A stream given to `put` that errors makes `put` reject with that error.
 */
export interface BlobStore {
  /**
   * Stores the bytes of `source` under `id`, replacing any blob there. Nothing is visible under `id`
   * until every byte is durable; readers see the old blob or the new one, never a mix. If `put` fails
   * (the source errors, `maxBytes` is passed, the backend fails), nothing of it is kept.
   */
  put(id: string, source: ReadableStream<Uint8Array>, options?: BlobPutOptions): Promise<BlobWritten>;
  /** Opens the blob, or a range of it; `undefined` when there is none. */
  get(id: string, range?: BlobRange): Promise<BlobRead | undefined>;
  stat(id: string): Promise<BlobStat | undefined>;
  /**
   * Atomically makes blob `from` the blob `to` (replacing any blob `to`) and removes `from`; answers
   * `false` when there is no blob `from`. The blob keeps its store time. An upload is put under its own id and moved to the file's id
   * once the file object is written, so a file's bytes are replaced in one step.
   */
  move(from: string, to: string): Promise<boolean>;
  /** Answers whether there was a blob. */
  delete(id: string): Promise<boolean>;
  /**
   * Deletes the blobs whose id starts with `prefix` and whose store time is before `before` (epoch
   * ms), and what interrupted writes left behind; answers how many blobs it deleted. Drops unfinished
   * uploads (the routes put uploads under a prefix of their own).
   */
  sweep(prefix: string, before: number): Promise<number>;
  close?(): Promise<void>;
}

/** An incremental hash: `@noble/hashes` and `node:crypto`'s `createHash` both fit. */
export interface IncrementalHash {
  update(data: Uint8Array): unknown;
  digest(): Uint8Array;
}

export interface BlobMeterOptions extends BlobPutOptions {
  /** Another SHA-256 implementation (Node-only stores pass `node:crypto`'s, about 15 times faster). */
  sha256?: () => IncrementalHash;
}

/** Counts and hashes the chunks of a blob stream as a store reads them, and enforces `maxBytes`. */
export class BlobMeter {
  readonly #hash: IncrementalHash;
  readonly #maxBytes: number;
  #size = 0;
  #failure: unknown;

  constructor(options: BlobMeterOptions = {}) {
    this.#hash = options.sha256?.() ?? sha256.create();
    this.#maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  }

  /**
   * The chunks of `source`, each counted and hashed before it is handed on. Throws `BlobTooLargeError`
   * on the chunk that passes `maxBytes`. Ending early for any reason (this error, the consumer
   * throwing) cancels `source`, so nothing more is read from the client.
   */
  async *read(source: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
    const reader = source.getReader();
    let finished = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          finished = true;
          return;
        }
        if (!(value instanceof Uint8Array)) throw new StoreValueError('a blob stream must carry Uint8Array chunks');
        this.#size += value.length;
        if (this.#size > this.#maxBytes) throw new BlobTooLargeError(this.#maxBytes);
        if (value.length === 0) continue;
        this.#hash.update(value);
        yield value;
      }
    } catch (error) {
      this.#failure = error;
      throw error;
    } finally {
      if (finished) reader.releaseLock();
      else await reader.cancel().catch(() => undefined);
    }
  }

  /**
   * What `read` failed with (the stream's own error, `BlobTooLargeError`), if it did. A store whose
   * backend wraps errors thrown inside its work rethrows this one instead, so a dropped upload is not
   * mistaken for a storage failure.
   */
  get failure(): unknown {
    return this.#failure;
  }

  /** Size and hash of what `read` passed; call once, after reading to the end. */
  written(): BlobWritten {
    return { size: this.#size, sha256: bytesToHex(this.#hash.digest()) };
  }
}

/**
 * The chunks of `chunks` cut and joined into pieces of exactly `pieceBytes` (the last one shorter,
 * and none for no bytes). Every piece is a copy, so a source that reuses its buffers is safe.
 * `buffers` (at least 2): the pieces take turns in that many buffers instead of a fresh one each, for
 * a consumer done with a piece once it has asked for `buffers` more (a piece being sent while the
 * next fills); memory stays at `buffers` pieces however late the garbage collector frees.
 */
export async function* pieces(chunks: AsyncIterable<Uint8Array>, pieceBytes: number, buffers?: number): AsyncGenerator<Uint8Array> {
  const pool: Uint8Array[] | undefined = buffers === undefined ? undefined : [];
  const size = Math.max(2, buffers ?? 0);
  let turn = 0;
  const next = () => (pool ? (pool[turn++ % size] ??= new Uint8Array(pieceBytes)) : new Uint8Array(pieceBytes));
  let piece = next();
  let filled = 0;
  for await (const chunk of chunks) {
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(pieceBytes - filled, chunk.length - offset);
      piece.set(chunk.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
      if (filled === pieceBytes) {
        yield piece;
        piece = next();
        filled = 0;
      }
    }
  }
  if (filled > 0) yield pool ? piece.subarray(0, filled) : piece.slice(0, filled);
}

/** `range` clipped to a blob of `size` bytes, as `[start, end)`; refuses negative or fractional numbers. */
export function resolveRange(size: number, range?: BlobRange): { start: number; end: number } {
  if (!range) return { start: 0, end: size };
  const numbers = 'suffix' in range ? [range.suffix] : [range.start, range.end ?? size];
  if (!numbers.every((n) => Number.isSafeInteger(n) && n >= 0)) throw new StoreValueError('a byte range needs whole numbers, not negative');
  if ('suffix' in range) return { start: Math.max(0, size - range.suffix), end: size };
  const start = Math.min(range.start, size);
  return { start, end: Math.max(start, Math.min(range.end ?? size, size)) };
}

/**
 * A stream of the bytes `[start, end)` that reads one piece per pull, so a slow consumer holds at
 * most one piece in memory. Pieces end at multiples of `pieceBytes` (a store of fixed-size chunks
 * reads each from one chunk). `read` must answer exactly `length` bytes. `release` runs once, when
 * the stream ends, fails or is cancelled (at once for an empty range).
 */
export function pieceStream(
  read: (offset: number, length: number) => Promise<Uint8Array>,
  range: { start: number; end: number },
  pieceBytes: number,
  release: () => Promise<void> = async () => undefined,
): ReadableStream<Uint8Array> {
  let position = range.start;
  let released: Promise<void> | undefined;
  const finish = () => (released ??= release().catch(() => undefined));
  return new ReadableStream<Uint8Array>(
    {
      async start(controller) {
        if (position < range.end) return;
        await finish();
        controller.close();
      },
      async pull(controller) {
        try {
          const length = Math.min(range.end, (Math.floor(position / pieceBytes) + 1) * pieceBytes) - position;
          const bytes = await read(position, length);
          if (bytes.length !== length) throw new StorageUnavailableError('the blob ended early while it was read');
          position += length;
          controller.enqueue(bytes);
          if (position < range.end) return;
          await finish();
          controller.close();
        } catch (error) {
          await finish();
          controller.error(error);
        }
      },
      cancel: finish,
    },
    { highWaterMark: 1 }, // one piece read ahead: the next read overlaps the consumer's work
  );
}

/** A `StoreValueError` when `id` is not a blob id (see `BLOB_ID`), otherwise `undefined`. */
export function invalidBlobId(id: string): StoreValueError | undefined {
  return BLOB_ID.test(id) ? undefined : new StoreValueError('a blob id is 1 to 100 of A-Z, a-z, 0-9, _ and -');
}

/** Cancels a stream a store refuses before reading it (so the client's body is released); answers `error`. */
export async function refuseStream(source: ReadableStream<Uint8Array>, error: Error): Promise<Error> {
  await source.cancel(error).catch(() => undefined);
  return error;
}
