import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { FolderLock, StoreLockedError } from './folder-lock.js';
import { syncDirectory, writeAll } from './journal.js';
import {
  BlobMeter,
  invalidBlobId,
  pieceStream,
  refuseStream,
  resolveRange,
  StorageUnavailableError,
  type BlobPutOptions,
  type BlobRange,
  type BlobRead,
  type BlobStat,
  type BlobStore,
  type BlobWritten,
} from '../src/index.js';

export interface FolderBlobStoreOptions {
  /**
   * The folder (created when missing). One process at a time unless `shared`: opening takes
   * `<folder>/.lock`, and a second process is refused (`StoreLockedError`) until the first closes or ends.
   */
  path: string;
  /**
   * Several instances use this folder on purpose (a folder every instance mounts, docs/scaling.md):
   * no lock is taken. The store keeps nothing in memory and every write is a rename, so instances
   * sharing it see each other's blobs. Default false.
   */
  shared?: boolean;
  /**
   * Temporary files of writes interrupted by a crash are deleted once they are this old (on open and
   * by `sweep`); younger ones may belong to another process still writing. Default one hour.
   */
  staleTempMs?: number;
}

/** Bytes per read of a download (measured with bench/blobs.bench.mjs: 256 KiB reads stream about 1.5 times as fast as 64 KiB ones). */
const READ_BYTES = 256 * 1024;
const TEMP_PREFIX = '.tmp-';

/**
 * BlobStore in a folder on disk, one file per blob. A write goes to a temporary file (`.tmp-...`),
 * which is fsynced, renamed to its final name, and the folder fsynced: a crash at any point leaves the
 * old blob or the new one under the final name, never a part of one. File names are the ids in hex,
 * so ids that differ only in case stay apart on case-insensitive file systems (macOS, Windows).
 *
 * Streams both ways with back-pressure: a write awaits each chunk on disk before reading the next; a
 * download reads a piece when its consumer asks. A download keeps reading the blob it opened even if
 * the blob is replaced or deleted meanwhile (the open file outlives its name).
 */
export class FolderBlobStore implements BlobStore {
  readonly #dir: string;
  readonly #staleTempMs: number;
  readonly #opening: Promise<void>;
  readonly #shared: boolean;
  #lock: FolderLock | undefined;

  constructor(options: FolderBlobStoreOptions) {
    this.#dir = options.path;
    this.#shared = options.shared ?? false;
    this.#staleTempMs = options.staleTempMs ?? 60 * 60 * 1000;
    this.#opening = this.#open().catch((error: unknown) => {
      if (error instanceof StoreLockedError) throw error;
      throw new StorageUnavailableError('the blob folder is unavailable', { cause: error });
    });
    this.#opening.catch(() => undefined); // reported by every operation instead
  }

  /** Opens the store: creates the folder, takes its lock and deletes stale temporary files. */
  static async open(options: FolderBlobStoreOptions): Promise<FolderBlobStore> {
    const store = new FolderBlobStore(options);
    await store.#opening;
    return store;
  }

  async #open(): Promise<void> {
    await mkdir(this.#dir, { recursive: true });
    const lock = this.#shared ? undefined : await FolderLock.take(join(this.#dir, '.lock'), `the blob folder ${this.#dir}`);
    try {
      await this.#removeStaleTemps();
    } catch (error) {
      await lock?.release();
      throw error;
    }
    this.#lock = lock;
  }

  /** Gives the folder up to another process (downloads already open read on). */
  async close(): Promise<void> {
    await this.#opening.catch(() => undefined);
    await this.#lock?.release();
    this.#lock = undefined;
  }

  async put(id: string, source: ReadableStream<Uint8Array>, options: BlobPutOptions = {}): Promise<BlobWritten> {
    const refused = invalidBlobId(id);
    if (refused) throw await refuseStream(source, refused);
    try {
      await this.#opening;
    } catch (error) {
      throw await refuseStream(source, error as Error);
    }
    const meter = new BlobMeter({ ...options, sha256: () => createHash('sha256') });
    const temp = join(this.#dir, `${TEMP_PREFIX}${randomBytes(12).toString('hex')}`);
    let handle: FileHandle | undefined;
    let writer: OverlappedWriter | undefined;
    try {
      handle = await disk(open(temp, 'wx', 0o600));
      writer = new OverlappedWriter(handle);
      for await (const chunk of meter.read(source)) await writer.add(chunk);
      await writer.finish();
      await disk(handle.datasync());
      await disk(handle.close());
      handle = undefined;
      await disk(rename(temp, this.#path(id)));
    } catch (error) {
      if (handle === undefined) await refuseStream(source, error as Error); // failed before reading it
      await writer?.settled();
      await handle?.close().catch(() => undefined);
      await rm(temp, { force: true }).catch(() => undefined);
      throw error;
    }
    await syncDirectory(this.#path(id));
    return meter.written();
  }

  async get(id: string, range?: BlobRange): Promise<BlobRead | undefined> {
    if (invalidBlobId(id)) return undefined;
    await this.#opening;
    const handle = await missingIsUndefined(open(this.#path(id), 'r'));
    if (!handle) return undefined;
    try {
      const { size } = await disk(handle.stat());
      const { start, end } = resolveRange(size, range);
      const read = async (offset: number, length: number) => {
        const bytes = new Uint8Array(length);
        let filled = 0;
        while (filled < length) {
          const { bytesRead } = await disk(handle.read(bytes, filled, length - filled, offset + filled));
          if (bytesRead === 0) break; // cut short: pieceStream reports it
          filled += bytesRead;
        }
        return bytes.subarray(0, filled);
      };
      return { size, start, end, stream: pieceStream(read, { start, end }, READ_BYTES, () => handle.close()) };
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
  }

  async stat(id: string): Promise<BlobStat | undefined> {
    if (invalidBlobId(id)) return undefined;
    await this.#opening;
    const found = await missingIsUndefined(stat(this.#path(id)));
    return found && { size: found.size, storeTime: Math.floor(found.mtimeMs) };
  }

  async move(from: string, to: string): Promise<boolean> {
    const refused = invalidBlobId(to);
    if (refused) throw refused;
    if (invalidBlobId(from)) return false;
    await this.#opening;
    if (from === to) return (await this.stat(from)) !== undefined;
    if ((await missingIsUndefined(rename(this.#path(from), this.#path(to)).then(() => true))) === undefined) return false;
    await syncDirectory(this.#path(to));
    return true;
  }

  async delete(id: string): Promise<boolean> {
    if (invalidBlobId(id)) return false;
    await this.#opening;
    if ((await missingIsUndefined(unlink(this.#path(id)).then(() => true))) === undefined) return false;
    await syncDirectory(this.#path(id));
    return true;
  }

  async sweep(prefix: string, before: number): Promise<number> {
    await this.#opening;
    const hexPrefix = Buffer.from(prefix).toString('hex');
    let deleted = 0;
    for (const name of await disk(readdir(this.#dir))) {
      if (!name.startsWith(hexPrefix) || name.startsWith(TEMP_PREFIX)) continue;
      const path = join(this.#dir, name);
      const found = await missingIsUndefined(stat(path));
      if (!found || found.mtimeMs >= before) continue;
      if (await missingIsUndefined(unlink(path).then(() => true))) deleted++;
    }
    await this.#removeStaleTemps();
    if (deleted > 0) await syncDirectory(join(this.#dir, TEMP_PREFIX));
    return deleted;
  }

  /** Deletes temporary files older than `staleTempMs` (left by writers that crashed). */
  async #removeStaleTemps(): Promise<void> {
    const before = Date.now() - this.#staleTempMs;
    for (const name of await disk(readdir(this.#dir))) {
      if (!name.startsWith(TEMP_PREFIX)) continue;
      const path = join(this.#dir, name);
      const found = await missingIsUndefined(stat(path));
      if (found && found.mtimeMs <= before) await rm(path, { force: true });
    }
  }

  #path(id: string): string {
    return join(this.#dir, Buffer.from(id).toString('hex'));
  }
}

/**
 * Appends chunks to a file, each write started once the previous one ended but without waiting for
 * its own end: the next chunk is read (and hashed) while one is on its way to disk. A write per chunk
 * awaited before the next read left an upload waiting on the disk (bench/blobs-http.bench.mjs); one
 * `writev` of gathered chunks was slower still on Linux. The chunks are written as given, not copied.
 */
class OverlappedWriter {
  #position = 0;
  #writing: Promise<void> = Promise.resolve();

  constructor(private readonly handle: FileHandle) {}

  async add(chunk: Uint8Array): Promise<void> {
    await this.#writing; // a failed write throws here, and the upload stops
    this.#writing = disk(writeAll(this.handle, chunk, this.#position));
    this.#writing.catch(() => undefined); // awaited by the next add or finish
    this.#position += chunk.length;
  }

  /** Waits for the last write. */
  async finish(): Promise<void> {
    await this.#writing;
  }

  /** Resolves once no write is on its way, whatever its outcome (before the file is closed after a failure). */
  settled(): Promise<void> {
    return this.#writing.catch(() => undefined);
  }
}

/** A file system failure is the backend's: `StorageUnavailableError` (the full disk, a lost mount). */
async function disk<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    throw new StorageUnavailableError('the blob folder is unavailable', { cause: error });
  }
}

/** `undefined` when the file is not there; other failures as from `disk`. */
async function missingIsUndefined<T>(operation: Promise<T>): Promise<T | undefined> {
  try {
    return await operation;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StorageUnavailableError('the blob folder is unavailable', { cause: error });
  }
}
