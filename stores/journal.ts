import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';

/**
 * An append-only journal file of checksummed records, written with group commit.
 *
 * File: the 8-byte magic `ODBJRNL1`, then records of `u32le length, u32le crc32(payload), payload`.
 * A record is acknowledged only after it and every record before it are on disk (`fdatasync`). A crash
 * can leave a torn last record (short, or with a wrong checksum): reading stops there and the file is
 * cut back to the last whole record, so later appends never land behind garbage.
 *
 * Node's `fs` module only: Bun and Deno provide it too.
 */
const MAGIC = new TextEncoder().encode('ODBJRNL1');
/** Bytes in front of each record's payload: its length and checksum. */
export const RECORD_HEADER = 8;
/** Larger lengths are taken as a torn header rather than believed (one record is one object). */
const MAX_RECORD = 1 << 30;

export interface ReadResult {
  payloads: Uint8Array[];
  /** Bytes of a torn tail that were cut off (0 after a clean shutdown). */
  droppedBytes: number;
}

type Item =
  | { bytes: Uint8Array; apply: () => unknown; resolve: (value: any) => void; reject: (error: unknown) => void }
  | { task: () => Promise<unknown>; resolve: (value: any) => void; reject: (error: unknown) => void };

export class Journal {
  #handle: FileHandle;
  #size: number;
  readonly #queue: Item[] = [];
  #running: Promise<void> | undefined;
  #broken: Error | undefined;
  #closed = false;

  private constructor(
    readonly path: string,
    handle: FileHandle,
    size: number,
  ) {
    this.#handle = handle;
    this.#size = size;
  }

  /** Opens (or creates) the journal at `path` and reads every whole record in it. */
  static async open(path: string): Promise<{ journal: Journal; read: ReadResult }> {
    await rm(`${path}.compact`, { force: true }); // a compaction that did not finish; the journal is intact
    let handle: FileHandle;
    try {
      handle = await open(path, 'r+');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      handle = await open(path, 'wx+');
      await syncDirectory(path);
    }
    try {
      const data = new Uint8Array(await handle.readFile());
      const { payloads, end } = parse(data, path);
      if (end === 0) {
        // new, or torn while its magic was written
        await handle.truncate(0);
        await writeAll(handle, MAGIC, 0);
        await handle.datasync();
      } else if (end < data.length) {
        await handle.truncate(end);
        await handle.datasync();
      }
      return { journal: new Journal(path, handle, Math.max(end, MAGIC.length)), read: { payloads, droppedBytes: data.length - end } };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Bytes in the file. */
  get size(): number {
    return this.#size;
  }

  /**
   * Appends one record. Once it is durable, `apply` runs (in append order, so the caller's in-memory
   * state changes in the same order as the file) and its result resolves the promise.
   */
  append<T>(payload: Uint8Array, apply: () => T): Promise<T> {
    return this.#enqueue((resolve, reject) => ({ bytes: frame(payload), apply, resolve, reject }));
  }

  /**
   * Replaces the file with one holding only `payloads` (the live state), atomically: written to a
   * side file, synced, renamed over the journal. It runs between batches, so no append interleaves,
   * and `payloads` is read then, after every earlier append was applied.
   */
  compact(payloads: () => Iterable<Uint8Array>): Promise<void> {
    return this.#enqueue((resolve, reject) => ({ task: () => this.#rewrite(payloads()), resolve, reject }));
  }

  async close(): Promise<void> {
    while (this.#running) await this.#running;
    if (this.#closed) return;
    this.#closed = true;
    this.#broken ??= new Error(`journal ${this.path} is closed`);
    await this.#handle.close();
  }

  #enqueue<T>(make: (resolve: (value: T) => void, reject: (error: unknown) => void) => Item): Promise<T> {
    if (this.#broken) return Promise.reject(this.#broken);
    return new Promise<T>((resolve, reject) => {
      this.#queue.push(make(resolve, reject));
      this.#running ??= this.#drain().finally(() => (this.#running = undefined));
    });
  }

  /** Writes queued records in batches (one write and one fdatasync each) and runs queued tasks. */
  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const first = this.#queue[0]!;
      if ('task' in first) {
        this.#queue.shift();
        await first.task().then(first.resolve, first.reject);
        continue;
      }
      let count = 1;
      while (count < this.#queue.length && !('task' in this.#queue[count]!)) count++;
      const batch = this.#queue.splice(0, count) as Array<Extract<Item, { bytes: Uint8Array }>>;
      try {
        if (this.#broken) throw this.#broken;
        const bytes = concat(batch.map((item) => item.bytes));
        await writeAll(this.#handle, bytes, this.#size);
        await this.#handle.datasync();
        this.#size += bytes.length;
      } catch (error) {
        await this.#cutBack(error);
        for (const item of batch) item.reject(error);
        continue;
      }
      for (const item of batch) {
        try {
          item.resolve(item.apply());
        } catch (error) {
          item.reject(error);
        }
      }
    }
  }

  async #rewrite(payloads: Iterable<Uint8Array>): Promise<void> {
    if (this.#broken) throw this.#broken;
    const side = `${this.path}.compact`;
    let size = 0;
    try {
      const out = await open(side, 'w');
      try {
        let chunk: Uint8Array[] = [MAGIC];
        let chunkBytes = 0;
        const flush = async () => {
          const bytes = concat(chunk);
          await writeAll(out, bytes, size);
          size += bytes.length;
          chunk = [];
          chunkBytes = 0;
        };
        for (const payload of payloads) {
          const framed = frame(payload);
          chunk.push(framed);
          chunkBytes += framed.length;
          if (chunkBytes >= 1 << 20) await flush();
        }
        await flush();
        await out.datasync();
      } finally {
        await out.close();
      }
    } catch (error) {
      await rm(side, { force: true }).catch(() => undefined);
      throw error; // the journal itself is untouched
    }
    await rename(side, this.path);
    await syncDirectory(this.path);
    const old = this.#handle;
    try {
      this.#handle = await open(this.path, 'r+');
    } catch (cause) {
      this.#broken = new Error(`journal ${this.path} could not be reopened after compaction`, { cause });
      throw this.#broken;
    } finally {
      await old.close();
    }
    this.#size = size;
  }

  /** Cuts a partly written batch off again; if even that fails, refuses all further writes. */
  async #cutBack(cause: unknown): Promise<void> {
    if (this.#broken) return;
    try {
      await this.#handle.truncate(this.#size);
      await this.#handle.datasync();
    } catch {
      this.#broken = new Error(`journal ${this.path} could not be written and is closed for writes`, { cause });
    }
  }
}

function parse(data: Uint8Array, path: string): { payloads: Uint8Array[]; end: number } {
  if (data.length < MAGIC.length) {
    if (!startsWith(MAGIC, data)) throw new Error(`${path} is not an odbrest journal`);
    return { payloads: [], end: 0 }; // empty, or its magic was torn
  }
  if (!startsWith(data, MAGIC)) throw new Error(`${path} is not an odbrest journal`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const payloads: Uint8Array[] = [];
  let offset = MAGIC.length;
  while (offset + RECORD_HEADER <= data.length) {
    const length = view.getUint32(offset, true);
    const checksum = view.getUint32(offset + 4, true);
    const start = offset + RECORD_HEADER;
    // No record is empty: a zero length is a run of zeros from a crash that extended the file, not data.
    if (length === 0 || length > MAX_RECORD || start + length > data.length) break;
    const payload = data.subarray(start, start + length);
    if (crc32(payload) !== checksum) break;
    payloads.push(payload);
    offset = start + length;
  }
  return { payloads, end: offset };
}

function frame(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(RECORD_HEADER + payload.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, payload.length, true);
  view.setUint32(4, crc32(payload), true);
  out.set(payload, RECORD_HEADER);
  return out;
}

export async function writeAll(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, position + written);
    written += bytesWritten;
  }
}

/** Makes a created or renamed file's directory entry durable (not possible, nor needed, on Windows). */
export async function syncDirectory(path: string): Promise<void> {
  let dir: FileHandle | undefined;
  try {
    dir = await open(dirname(path), 'r');
    await dir.sync();
  } catch {
    // directories cannot be opened for sync on some platforms
  } finally {
    await dir?.close();
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  if (data.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}
