import type { LRUCache } from 'lru-cache';
import { lruCache } from '../caches.js';
import { kvKeys } from '../storage/keys.js';
import type { KeyValueStore } from '../storage/types.js';
import { ApiError } from '../http/errors.js';
import { gone, rejected } from './refusals.js';
import { acceptCounter, decodeWindowRecord, emptyWindow, encodeWindowRecord, type WindowRecord } from './replay.js';

interface Pending {
  n: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function refusal(n: number, why: 'replayed' | 'out of window') {
  return rejected(why === 'replayed' ? `Secure-Counter ${n} was already used` : `Secure-Counter ${n} is below the replay window`);
}

/**
 * Stores the empty window of a new secure session, living until the session's end (`end`, epoch ms).
 * Written before the login answers, so no message of the session can find it missing.
 */
export async function startWindow(kv: KeyValueStore, sessionId: string, end: number, now: number): Promise<void> {
  await kv.set(kvKeys.replayWindow(sessionId), encodeWindowRecord({ window: emptyWindow(), end }), Math.max(1, end - now));
}

/**
 * Records message numbers in a session's replay window, a small record of its own in the key-value
 * store (`kvKeys.replayWindow`), with the store's compare-and-set, several at a time (group commit):
 * at most one update per session runs in this process, and the numbers that arrive meanwhile are
 * applied together by the next one. One read-modify-write per request would queue concurrent requests
 * of one session behind each other, or turn a burst into a storm of failed compare-and-sets; the
 * compare-and-set still makes every update atomic across processes. An update starts from the record
 * as this process last wrote it, so the compare-and-set is the only store operation while no
 * other instance changed it. A missing record (the session ended, or never was a secure one) accepts
 * nothing.
 */
export class WindowUpdates {
  /** Sessions with an update running, each with the numbers waiting for the next one. */
  readonly #waiting = new Map<string, Pending[]>();
  /** Each session's record as this process last wrote it: the stored string and what it says. */
  readonly #known: LRUCache<string, { raw: string; record: WindowRecord }>;

  constructor(
    private readonly kv: KeyValueStore,
    private readonly now: () => number,
    cacheSize: number,
  ) {
    this.#known = lruCache(cacheSize);
  }

  /** Accepts `n` once; rejects with `205` (a used or too old number) or `201` (no window: no live secure session). */
  accept(sessionId: string, n: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiting = this.#waiting.get(sessionId);
      if (waiting) {
        waiting.push({ n, resolve, reject });
        return;
      }
      this.#waiting.set(sessionId, []);
      void this.#apply(sessionId, [{ n, resolve, reject }]);
    });
  }

  async #apply(sessionId: string, batch: Pending[]): Promise<void> {
    try {
      const outcomes = await this.#record(sessionId, batch);
      batch.forEach((pending, i) => {
        const outcome = outcomes[i]!;
        if (outcome === 'ok') pending.resolve();
        else pending.reject(refusal(pending.n, outcome));
      });
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    }
    const next = this.#waiting.get(sessionId)!;
    if (next.length === 0) {
      this.#waiting.delete(sessionId);
      return;
    }
    this.#waiting.set(sessionId, []);
    void this.#apply(sessionId, next);
  }

  /**
   * Applies the batch's numbers in order to the stored record, retried when another instance changed
   * it in between. Refusals need no write: a record only gains numbers, so one found used or too old
   * in an older copy is so in the newest too.
   */
  async #record(sessionId: string, batch: Pending[]): Promise<Array<'replayed' | 'out of window' | 'ok'>> {
    const key = kvKeys.replayWindow(sessionId);
    let known = this.#known.get(sessionId);
    for (let attempt = 0; attempt < 100; attempt++) {
      const raw = known?.raw ?? (await this.kv.get(key));
      const record = known?.record ?? (raw === undefined ? undefined : decodeWindowRecord(raw));
      const ttl = record ? record.end - this.now() : 0;
      if (!record || ttl <= 0) {
        this.#known.delete(sessionId);
        throw gone();
      }
      let window = record.window;
      const outcomes = batch.map(({ n }) => {
        const result = acceptCounter(window, n);
        if ('refused' in result) return result.refused;
        window = result.window;
        return 'ok' as const;
      });
      if (window === record.window) return outcomes;
      const written = { window, end: record.end };
      const next = encodeWindowRecord(written);
      if (await this.kv.compareAndSet(key, raw, next, ttl)) {
        this.#known.set(sessionId, { raw: next, record: written });
        return outcomes;
      }
      this.#known.delete(sessionId);
      known = undefined;
    }
    throw new ApiError('503', 'session is too busy, retry later');
  }
}
