import { LRUCache } from 'lru-cache';
import type { KeyValueStore } from './types.js';

export interface MemoryKeyValueStoreOptions {
  /** Most entries kept; the least recently used go first. Default 1,000,000; memory is taken as entries arrive. */
  maxEntries?: number;
  /** Clock for expiry, so tests can move time. */
  now?: () => number;
}

interface Entry {
  value: string;
  expiresAt: number;
}

/**
 * The default KeyValueStore: a bounded LRU map in this process. Expiry is checked against the
 * injected clock on every read. Every operation runs without awaiting in between, so each is atomic.
 */
export class MemoryKeyValueStore implements KeyValueStore {
  readonly #entries: LRUCache<string, Entry>;
  readonly #now: () => number;

  constructor(options: MemoryKeyValueStoreOptions = {}) {
    // `maxSize` counted in entries, not `max`: lru-cache allocates its `max` slots up front (28 MB for 1,000,000).
    this.#entries = new LRUCache({ maxSize: options.maxEntries ?? 1_000_000, sizeCalculation: () => 1 });
    this.#now = options.now ?? Date.now;
  }

  /** Live and expired entries not yet collected (for tests and metrics). */
  get size(): number {
    return this.#entries.size;
  }

  async get(key: string): Promise<string | undefined> {
    return this.#live(key)?.value;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.#entries.set(key, { value, expiresAt: this.#now() + ttlMs });
  }

  async compareAndSet(key: string, expected: string | undefined, value: string, ttlMs: number): Promise<boolean> {
    if (this.#live(key)?.value !== expected) return false;
    this.#entries.set(key, { value, expiresAt: this.#now() + ttlMs });
    return true;
  }

  async take(key: string): Promise<string | undefined> {
    const entry = this.#live(key);
    if (entry) this.#entries.delete(key);
    return entry?.value;
  }

  async delete(key: string): Promise<boolean> {
    const existed = this.#live(key) !== undefined;
    this.#entries.delete(key);
    return existed;
  }

  async increment(key: string, ttlMs: number): Promise<number> {
    const entry = this.#live(key);
    if (!entry) {
      this.#entries.set(key, { value: '1', expiresAt: this.#now() + ttlMs });
      return 1;
    }
    entry.value = String(Number(entry.value) + 1);
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

  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
