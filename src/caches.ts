import { LRUCache } from 'lru-cache';

/**
 * Sizes of the per-process caches, in entries, in one place (`ServiceOptions.caches`). Each cache only
 * spares work: the stores stay the authority, so a smaller cache costs time, never correctness.
 */
export interface CacheSizes {
  /** Parsed sessions, reused while the key-value store holds the very same stored form. */
  sessions: number;
  /** Opened Secure-Tokens and the prepared keys of secure sessions. */
  secureSessions: number;
  /** Formatted `~StoreTime` texts (objects keep their store time for long and are read often). */
  storeTimes: number;
}

export const DEFAULT_CACHE_SIZES: Readonly<CacheSizes> = { sessions: 10_000, secureSessions: 10_000, storeTimes: 10_000 };

export function cacheSizes(given: Partial<CacheSizes> = {}): CacheSizes {
  const sizes = { ...DEFAULT_CACHE_SIZES, ...given };
  for (const [name, size] of Object.entries(sizes)) {
    if (!Number.isSafeInteger(size) || size < 1) throw new Error(`caches.${name} must be a positive integer`);
  }
  return sizes;
}

/**
 * An LRU cache of at most `entries` entries that takes memory as entries arrive. (lru-cache's `max`
 * allocates all its slots up front: about 4 ms and 80 KB for 10,000, 28 MB for 1,000,000; a bound
 * counted as `maxSize` in entries does not.)
 */
export function lruCache<K extends {}, V extends {}>(entries: number): LRUCache<K, V> {
  return new LRUCache<K, V>({ maxSize: entries, sizeCalculation: () => 1 });
}
