import {
  BlobMeter,
  invalidBlobId,
  pieces,
  pieceStream,
  refuseStream,
  resolveRange,
  type BlobPutOptions,
  type BlobRange,
  type BlobRead,
  type BlobStat,
  type BlobStore,
  type BlobWritten,
} from './blobs.js';

export interface MemoryBlobStoreOptions {
  /** Clock for `storeTime`, for tests. */
  now?: () => number;
}

interface MemoryBlob {
  /** The bytes in pieces of `PIECE_BYTES` (the last one shorter). */
  pieces: Uint8Array[];
  size: number;
  storeTime: number;
}

const PIECE_BYTES = 64 * 1024;

/**
 * The default BlobStore: blobs in this process's memory, gone on restart. For development, tests and
 * small deployments; files count against the process's memory, so production hosts use a disk or
 * database store. A blob is stored as it streams in but only becomes visible once complete.
 */
export class MemoryBlobStore implements BlobStore {
  readonly #blobs = new Map<string, MemoryBlob>();
  readonly #now: () => number;

  constructor(options: MemoryBlobStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  async put(id: string, source: ReadableStream<Uint8Array>, options: BlobPutOptions = {}): Promise<BlobWritten> {
    const refused = invalidBlobId(id);
    if (refused) throw await refuseStream(source, refused);
    const meter = new BlobMeter(options);
    const stored: Uint8Array[] = [];
    for await (const piece of pieces(meter.read(source), PIECE_BYTES)) stored.push(piece);
    const written = meter.written();
    this.#blobs.set(id, { pieces: stored, size: written.size, storeTime: this.#now() });
    return written;
  }

  async get(id: string, range?: BlobRange): Promise<BlobRead | undefined> {
    const blob = this.#blobs.get(id);
    if (!blob) return undefined;
    const { start, end } = resolveRange(blob.size, range);
    const read = async (offset: number, length: number) => {
      const at = offset % PIECE_BYTES;
      return blob.pieces[Math.floor(offset / PIECE_BYTES)]!.slice(at, at + length);
    };
    return { size: blob.size, start, end, stream: pieceStream(read, { start, end }, PIECE_BYTES) };
  }

  async stat(id: string): Promise<BlobStat | undefined> {
    const blob = this.#blobs.get(id);
    return blob && { size: blob.size, storeTime: blob.storeTime };
  }

  async move(from: string, to: string): Promise<boolean> {
    const refused = invalidBlobId(to);
    if (refused) throw refused;
    const blob = this.#blobs.get(from);
    if (!blob) return false;
    this.#blobs.delete(from);
    this.#blobs.set(to, blob);
    return true;
  }

  async delete(id: string): Promise<boolean> {
    return this.#blobs.delete(id);
  }

  async sweep(prefix: string, before: number): Promise<number> {
    let deleted = 0;
    for (const [id, blob] of this.#blobs) {
      if (id.startsWith(prefix) && blob.storeTime < before && this.#blobs.delete(id)) deleted++;
    }
    return deleted;
  }
}
