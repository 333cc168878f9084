import { MemoryObjectStore, type ClassCount, type FindQuery, type FindResult, type ObjectInput, type ObjectStore, type ReferencingQuery, type StoredObject, type Where } from '../src/index.js';
import { FolderLock } from './folder-lock.js';
import { Journal, RECORD_HEADER } from './journal.js';

export interface FileObjectStoreOptions {
  /**
   * The journal file; created (with its directory entry synced) when missing. One process per file:
   * opening takes `<path>.lock`, and a second process is refused (`StoreLockedError`) until the first closes or ends.
   */
  path: string;
  /**
   * Compact once the file is at least this large and more than half of it is replaced or deleted
   * records. Default 16 MiB.
   */
  compactMinBytes?: number;
  /** Clock for `storeTime` (whole seconds, strictly increasing per object, also across reopens), for tests. */
  now?: () => number;
}

type PutRecord = ['p', string, string, number, StoredObject['fields']];
/** A journal record: a stored object, the deletion of one, or several stored objects written as one (`putMany`). */
type JournalRecord = PutRecord | ['d', string] | ['m', PutRecord[]];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The payload of a put record, `["p", id, className, storeTime, fields]`, from the fields' JSON. */
function putPayload(id: string, className: string, storeTime: number, fieldsJson: string): Uint8Array {
  return encoder.encode(`["p",${JSON.stringify(id)},${JSON.stringify(className)},${JSON.stringify(storeTime)},${fieldsJson}]`);
}

/**
 * The in-process object store made durable: every object lives in memory (reads never touch the
 * disk), and every write is appended to a checksummed journal and fsynced before it is acknowledged
 * and becomes visible. Concurrent writes share one fsync (group commit). When replaced and deleted
 * records make up more than half of the file, it is rewritten with only the live objects and renamed
 * over the old one, so a crash at any point leaves either the old or the new file, both complete.
 *
 * On open, the journal is replayed; a torn last record from a crash is dropped (`droppedBytes`).
 */
export class FileObjectStore implements ObjectStore {
  readonly systemName = 'odbrest.file';
  readonly #memory: MemoryObjectStore;
  readonly #now: () => number;
  readonly #compactMinBytes: number;
  readonly #opening: Promise<Journal>;
  #lock: FolderLock | undefined;
  /** Ids chosen for creates whose record is not yet durable, so two creates never pick the same. */
  readonly #pendingIds = new Set<string>();
  /** Per id, the settling of its last queued write (see `#oneAtATime`). */
  readonly #writing = new Map<string, Promise<void>>();
  /** Size in the file of each live object's latest record, to know how much of the file is garbage. */
  readonly #recordBytes = new Map<string, number>();
  #liveBytes = 0;
  #compaction: Promise<void> | undefined;
  #nextCompactionAt: number;
  #droppedBytes = 0;
  #compactions = 0;

  constructor(options: FileObjectStoreOptions) {
    this.#now = options.now ?? Date.now;
    this.#memory = new MemoryObjectStore({ now: this.#now });
    this.#compactMinBytes = options.compactMinBytes ?? 16 * 1024 * 1024;
    this.#nextCompactionAt = this.#compactMinBytes;
    this.#opening = this.#open(options.path);
    this.#opening.catch(() => undefined); // reported by every operation instead
  }

  /** Opens the store and waits until its journal has been read. */
  static async open(options: FileObjectStoreOptions): Promise<FileObjectStore> {
    const store = new FileObjectStore(options);
    await store.#opening;
    return store;
  }

  /** Bytes of a torn last record that were dropped on open (0 after a clean shutdown). */
  get droppedBytes(): number {
    return this.#droppedBytes;
  }

  /** Compactions finished since the store was opened (for monitoring). */
  get compactions(): number {
    return this.#compactions;
  }

  async #open(path: string): Promise<Journal> {
    const lock = await FolderLock.take(`${path}.lock`, `the file store ${path}`);
    let journal: Journal | undefined;
    try {
      const opened = await Journal.open(path);
      journal = opened.journal;
      for (const payload of opened.read.payloads) this.#apply(JSON.parse(decoder.decode(payload)) as JournalRecord, payload.length);
      this.#droppedBytes = opened.read.droppedBytes;
    } catch (error) {
      await journal?.close();
      await lock.release();
      throw error;
    }
    this.#lock = lock;
    return journal;
  }

  async get(id: string): Promise<StoredObject | undefined> {
    await this.#opening;
    return this.#memory.get(id);
  }

  async getMany(ids: readonly string[]): Promise<StoredObject[]> {
    await this.#opening;
    return this.#memory.getMany(ids);
  }

  async find(query: FindQuery): Promise<FindResult> {
    await this.#opening;
    return this.#memory.find(query);
  }

  async count(className: string, where?: Where): Promise<number> {
    await this.#opening;
    return this.#memory.count(className, where);
  }

  /** A field index kept in memory (the journal holds objects only; it is built again at start). */
  async ensureIndex(className: string, field: string): Promise<void> {
    await this.#opening;
    return this.#memory.ensureIndex(className, field);
  }

  async classNames(): Promise<string[]> {
    await this.#opening;
    return this.#memory.classNames();
  }

  async classCounts(): Promise<ClassCount[]> {
    await this.#opening;
    return this.#memory.classCounts();
  }

  async referencing(id: string, query?: ReferencingQuery): Promise<FindResult> {
    await this.#opening;
    return this.#memory.referencing(id, query);
  }

  async put(input: ObjectInput): Promise<StoredObject> {
    const journal = await this.#opening;
    const given = input.id;
    if (given !== undefined) return this.#oneAtATime(given, () => this.#write(journal, input, given));
    let id: string;
    do id = this.#memory.freeId();
    while (this.#pendingIds.has(id));
    this.#pendingIds.add(id);
    try {
      return await this.#write(journal, input, id);
    } finally {
      this.#pendingIds.delete(id);
    }
  }

  /**
   * Checks the write against the object as it is in memory and queues its record, in one synchronous
   * step. Writes of one id run one at a time (`#oneAtATime`), so memory then holds every earlier write
   * of this id: the check sees them, and the store time follows theirs.
   */
  async #write(journal: Journal, input: ObjectInput, id: string): Promise<StoredObject> {
    const storeTime = this.#memory.checkWrite(input);
    // Serialized once: the same JSON goes to disk and (parsed back) into memory, so the object read
    // after a restart is exactly the one read before it.
    const fieldsJson = JSON.stringify(input.fields);
    const payload = putPayload(id, input.className, storeTime, fieldsJson);
    const record: JournalRecord = ['p', id, input.className, storeTime, JSON.parse(fieldsJson)];
    const stored = await journal.append(payload, () => {
      this.#apply(record, payload.length);
      return { id, className: input.className, storeTime, fields: JSON.parse(fieldsJson) };
    });
    this.#compactIfWorthIt(journal);
    return stored;
  }

  /** All or nothing: the writes are checked together and go to the journal as one record. */
  async putMany(inputs: readonly ObjectInput[]): Promise<StoredObject[]> {
    const journal = await this.#opening;
    const given = inputs.flatMap((input) => (input.id === undefined ? [] : [input.id]));
    return this.#allAtATime(given, async () => {
      const planned = this.#memory.checkMany(inputs.map((input) => (input.id === undefined ? { ...input, id: this.#freeId() } : input)));
      const parts = planned.map((object) => `["p",${JSON.stringify(object.id)},${JSON.stringify(object.className)},${JSON.stringify(object.storeTime)},${JSON.stringify(object.fields)}]`);
      const payload = encoder.encode(`["m",[${parts.join(',')}]]`);
      const record = JSON.parse(decoder.decode(payload)) as JournalRecord;
      const stored = await journal.append(payload, () => {
        this.#apply(record, payload.length);
        return planned.map((object, i) => ({ ...object, fields: JSON.parse(JSON.stringify((record as ['m', PutRecord[]])[1][i]![4])) as StoredObject['fields'] }));
      });
      this.#compactIfWorthIt(journal);
      return stored;
    });
  }

  #freeId(): string {
    let id: string;
    do id = this.#memory.freeId();
    while (this.#pendingIds.has(id));
    return id;
  }

  /** `#oneAtATime` for several ids at once: runs once every earlier write of each has settled. */
  #allAtATime<T>(ids: readonly string[], task: () => Promise<T>): Promise<T> {
    const previous = ids.flatMap((id) => {
      const pending = this.#writing.get(id);
      return pending ? [pending] : [];
    });
    const result = previous.length > 0 ? Promise.all(previous).then(task) : task();
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    for (const id of ids) this.#writing.set(id, settled);
    void settled.then(() => {
      for (const id of ids) if (this.#writing.get(id) === settled) this.#writing.delete(id);
    });
    return result;
  }

  async delete(id: string): Promise<boolean> {
    const journal = await this.#opening;
    return this.#oneAtATime(id, async () => {
      if (!this.#memory.has(id)) return false;
      const payload = encoder.encode(JSON.stringify(['d', id]));
      const existed = await journal.append(payload, () => this.#apply(['d', id], payload.length));
      this.#compactIfWorthIt(journal);
      return existed;
    });
  }

  /**
   * Runs `task` once every earlier write of `id` has been applied or has failed: a check against
   * memory is then a check against the latest version, and the check and the write stay one step.
   */
  #oneAtATime<T>(id: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#writing.get(id);
    const result = previous ? previous.then(task) : task();
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.#writing.set(id, settled);
    void settled.then(() => {
      if (this.#writing.get(id) === settled) this.#writing.delete(id);
    });
    return result;
  }

  /** Rewrites the file now with only the live objects. Normally automatic; useful before a backup. */
  async compact(): Promise<void> {
    const journal = await this.#opening;
    await (this.#compaction ?? this.#startCompaction(journal));
  }

  async close(): Promise<void> {
    const journal = await this.#opening;
    await this.#compaction?.catch(() => undefined);
    await journal.close();
    await this.#lock?.release();
    this.#lock = undefined;
  }

  /** Applies a durable record to memory; answers whether a deleted object existed. */
  #apply(record: JournalRecord, payloadBytes: number): boolean {
    if (record[0] === 'm') {
      // each object counts its share of the record (compaction rewrites them one by one)
      for (const put of record[1]) this.#apply(put, Math.ceil(payloadBytes / record[1].length));
      return true;
    }
    const id = record[1];
    this.#liveBytes -= this.#recordBytes.get(id) ?? 0;
    if (record[0] === 'd') {
      this.#recordBytes.delete(id);
      return this.#memory.remove(id);
    }
    const [, , className, storeTime, fields] = record;
    this.#memory.load({ id, className, storeTime, fields });
    this.#recordBytes.set(id, payloadBytes + RECORD_HEADER);
    this.#liveBytes += payloadBytes + RECORD_HEADER;
    return true;
  }

  #compactIfWorthIt(journal: Journal): void {
    if (this.#compaction || journal.size < this.#nextCompactionAt || journal.size < 2 * this.#liveBytes) return;
    this.#startCompaction(journal).catch(() => {
      // the journal is intact; try again after another compactMinBytes were written
      this.#nextCompactionAt = journal.size + this.#compactMinBytes;
    });
  }

  #startCompaction(journal: Journal): Promise<void> {
    const memory = this.#memory;
    const compaction = journal.compact(function* () {
      for (const object of memory.objects()) {
        yield putPayload(object.id, object.className, object.storeTime, JSON.stringify(object.fields));
      }
    });
    this.#compaction = compaction.then(() => void this.#compactions++).finally(() => (this.#compaction = undefined));
    return this.#compaction;
  }
}
export { FolderBlobStore, type FolderBlobStoreOptions } from './blob-folder.js';
export { StoreLockedError, type LockHolder } from './folder-lock.js';
