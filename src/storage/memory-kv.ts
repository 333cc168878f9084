import { lruCache } from '../caches.js';
import { StorageUnavailableError } from './errors.js';
import { KV_PARTITIONS, type KvPartition } from './keys.js';
import type { KeyValueStore } from './types.js';

export interface MemoryKeyValueStoreOptions {
  /** Most entries of keys no partition names; the least recently used go first. Default 100,000. */
  maxEntries?: number;
  /**
   * Kinds of state by key prefix, each with its own bound, so that one kind never pushes out another
   * (a flood of OAuth states or failed-login counters never evicts a live session). Default: the
   * service's own kinds (`KV_PARTITIONS`).
   */
  partitions?: Readonly<Record<string, KvPartition>>;
  /** Clock for expiry, so tests can move time. */
  now?: () => number;
}

interface Entry {
  value: string;
  expiresAt: number;
}

/** Entries of one kind. Memory is taken as entries arrive: nothing is allocated up front. */
interface Partition {
  get(key: string): Entry | undefined;
  /** Stores an entry; `false` when the partition is full and refuses new keys. */
  set(key: string, entry: Entry): boolean;
  delete(key: string): void;
  readonly size: number;
}

/** Least recently used entries go first. */
function evicting(maxEntries: number): Partition {
  const entries = lruCache<string, Entry>(maxEntries);
  return {
    get: (key) => entries.get(key),
    set: (key, entry) => (entries.set(key, entry), true),
    delete: (key) => void entries.delete(key),
    get size() {
      return entries.size;
    },
  };
}

/** Live entries are never pushed out: when full, expired ones are swept (at most once a second), then new keys are refused. */
function refusing(maxEntries: number, now: () => number): Partition {
  const entries = new Map<string, Entry>();
  let sweptAt = -Infinity;
  const sweep = () => {
    const time = now();
    if (time - sweptAt < 1000) return;
    sweptAt = time;
    for (const [key, entry] of entries) if (entry.expiresAt <= time) entries.delete(key);
  };
  return {
    get: (key) => entries.get(key),
    set: (key, entry) => {
      if (entries.size >= maxEntries && !entries.has(key)) sweep();
      if (entries.size >= maxEntries && !entries.has(key)) return false;
      entries.set(key, entry);
      return true;
    },
    delete: (key) => void entries.delete(key),
    get size() {
      return entries.size;
    },
  };
}

/**
 * The default KeyValueStore: bounded maps in this process, one per kind of state. Expiry is checked
 * against the injected clock on every read. Every operation runs without awaiting in between, so
 * each is atomic.
 */
export class MemoryKeyValueStore implements KeyValueStore {
  readonly systemName: string = 'odbrest.memory';
  readonly #now: () => number;
  readonly #partitions: Array<[prefix: string, partition: Partition, bound: number]>;
  readonly #rest: Partition;
  /** Lines by key: members in the order they came (a Map keeps insertion order), each with the end of its time. */
  readonly #lines = new Map<string, Map<string, number>>();
  readonly #lineWatchers = new Set<(key: string) => void>();

  constructor(options: MemoryKeyValueStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#partitions = Object.entries(options.partitions ?? KV_PARTITIONS).map(([prefix, { maxEntries, whenFull }]) => [
      prefix,
      whenFull === 'refuse' ? refusing(maxEntries, this.#now) : evicting(maxEntries),
      maxEntries,
    ]);
    this.#rest = evicting(options.maxEntries ?? 100_000);
  }

  /** Live and expired entries not yet collected (for tests and metrics). */
  get size(): number {
    return this.#partitions.reduce((sum, [, partition]) => sum + partition.size, this.#rest.size);
  }

  async get(key: string): Promise<string | undefined> {
    return this.#live(key)?.value;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.#store(key, value, ttlMs);
  }

  async compareAndSet(key: string, expected: string | undefined, value: string, ttlMs: number): Promise<boolean> {
    if (this.#live(key)?.value !== expected) return false;
    this.#store(key, value, ttlMs);
    return true;
  }

  async take(key: string): Promise<string | undefined> {
    const entry = this.#live(key);
    if (entry) this.#of(key).delete(key);
    return entry?.value;
  }

  async delete(key: string): Promise<boolean> {
    const existed = this.#live(key) !== undefined;
    this.#of(key).delete(key);
    return existed;
  }

  async increment(key: string, ttlMs: number, by = 1): Promise<number> {
    const entry = this.#live(key);
    if (!entry) {
      if (by < 0) return 0;
      this.#store(key, String(by), ttlMs);
      return by;
    }
    entry.value = String(Number(entry.value) + by);
    return Number(entry.value);
  }

  async ttl(key: string): Promise<number> {
    const entry = this.#live(key);
    return entry ? entry.expiresAt - this.#now() : 0;
  }

  async expire(key: string, ttlMs: number): Promise<boolean> {
    const entry = this.#live(key);
    if (!entry) return false;
    entry.expiresAt = this.#now() + ttlMs;
    return true;
  }

  async getAndExpire(key: string, ttlMs: number): Promise<string | undefined> {
    return this.getAndExpireNow(key, ttlMs);
  }

  getAndExpireNow(key: string, ttlMs: number): string | undefined {
    const entry = this.#live(key);
    if (entry) entry.expiresAt = this.#now() + ttlMs;
    return entry?.value;
  }

  async lineUp(key: string, member: string, ttlMs: number): Promise<number> {
    let line = this.#lines.get(key);
    if (!line) this.#lines.set(key, (line = new Map()));
    const now = this.#now();
    line.set(member, now + ttlMs); // a member already standing keeps its place
    let ahead = 0;
    for (const [other, expiresAt] of line) {
      if (other === member) break;
      if (expiresAt <= now) line.delete(other);
      else ahead++;
    }
    return ahead;
  }

  async leaveLine(key: string, member: string): Promise<void> {
    const line = this.#lines.get(key);
    if (!line?.delete(member)) return;
    if (line.size === 0) this.#lines.delete(key);
    for (const listener of this.#lineWatchers) listener(key);
  }

  async watchLines(listener: (key: string) => void): Promise<() => void> {
    const watcher = (key: string) => listener(key);
    this.#lineWatchers.add(watcher);
    return () => void this.#lineWatchers.delete(watcher);
  }

  #of(key: string): Partition {
    for (const [prefix, partition] of this.#partitions) if (key.startsWith(prefix)) return partition;
    return this.#rest;
  }

  #store(key: string, value: string, ttlMs: number): void {
    if (this.#of(key).set(key, { value, expiresAt: this.#now() + ttlMs })) return;
    const bound = this.#partitions.find(([prefix]) => key.startsWith(prefix))![2];
    throw new StorageUnavailableError(`the in-memory store holds the most entries of this kind it may (${bound}); retry later`);
  }

  #live(key: string): Entry | undefined {
    const partition = this.#of(key);
    const entry = partition.get(key);
    if (entry && entry.expiresAt <= this.#now()) {
      partition.delete(key);
      return undefined;
    }
    return entry;
  }
}
