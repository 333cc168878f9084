/**
 * The PostgreSQL object store's in-process cache of rows by id, kept exact by notifications: the
 * table's triggers send `pg_notify(channel, ':' || id)` for every row updated or deleted (in the
 * writing transaction, so it is delivered at commit), and one connection of its own per store LISTENs
 * and evicts. While that connection is not listening the cache is empty and bypassed.
 */
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import type { StoredObject } from '../src/index.js';
import { positionOf } from './session-scope.js';

export interface PostgresCacheOptions {
  /** Most objects kept. Default 10,000. */
  maxObjects?: number;
  /** Most bytes kept (the JSON text of the fields plus a fixed overhead per object). Default 32 MiB. */
  maxBytes?: number;
  /**
   * Told when the cache starts listening, goes deaf (and is cleared), evicts on a change, or a read
   * waits for a round trip on the listening connection before it answers from the cache; for metrics and tests.
   */
  onEvent?: (event: PostgresCacheEvent) => void;
  /**
   * What a read answered from the cache reflects (docs/scaling.md):
   * - `session` (default): every write of the reading session, whichever instance answered it. A
   *   session's writes record their WAL position with the session (`ObjectStore.inSession`); a read
   *   answers from the cache at once when the notifications this instance applied have passed that
   *   position, and otherwise after one round trip on the listening connection. Another session's
   *   write is seen once its notification arrived (the notification lag). Reads outside any session
   *   (the service's own, events) are answered as in `strong`.
   * - `strong`: every write answered anywhere before the read began: one round trip on the listening
   *   connection per read, sent after the read began (shared by the reads waiting meanwhile).
   *   `read-your-writes` is its earlier name.
   * - `eventual`: at once; another instance's write is seen once its notification arrived, also by
   *   the session that wrote it.
   */
  consistency?: CacheConsistency;
}

export type CacheConsistency = 'session' | 'strong' | 'eventual' | 'read-your-writes';

export type PostgresCacheEvent = { kind: 'listening' } | { kind: 'deaf'; error?: Error } | { kind: 'changed'; id?: string } | { kind: 'waited' };

/** A row as the store reads it. */
export interface CachedRow {
  id: string;
  class_name: string;
  store_time: string;
  body: string;
}

/** A row as the cache keeps it: with the object the store made of it, once (frozen: see `ObjectStore.getNow`). */
export interface KeptRow extends CachedRow {
  object?: StoredObject;
}

export const DEFAULT_CACHE = { maxObjects: 10_000, maxBytes: 32 * 1024 * 1024 };
/** Memory of a cached row besides its strings' characters (the row object, the LRU's slots): measured, see docs/stores.md. */
const ROW_OVERHEAD_BYTES = 200;
/** Statements that change more rows than this send one "everything changed" notification instead. */
export const NOTIFY_ALL_ABOVE = 1000;
/** Reconnection delays of the listening connection: doubling from the first to the last. */
const RETRY_FIRST_MS = 100;
const RETRY_LAST_MS = 5000;
/**
 * The listening connection is idle; a query this often (failing after as long) notices one that a
 * firewall or a dead peer dropped without closing it, which would otherwise leave the cache deaf.
 */
const HEARTBEAT_MS = 5000;
/**
 * A round trip on the listening connection: the WAL position (notifications are delivered before its
 * answer). Named apart from the pools' `POSITION_SQL` (`feed_position`), so that it can be told from
 * them in `pg_stat_activity`.
 */
const FEED_SQL = 'SELECT pg_current_wal_insert_lsn()::text AS feed_position';

export interface FeedHandlers {
  listening: () => void;
  deaf: (error?: Error) => void;
  changed: (payload: string) => void;
}

/**
 * A fetch from PostgreSQL in progress, started while listening. A change of one of its ids noticed
 * before it finishes marks that id stale; losing the notifications marks it all stale. Only what is
 * still fresh when it finishes enters the cache.
 */
interface Fill {
  stale: Set<string>;
  dead: boolean;
}

export class RowCache {
  readonly #rows: LRUCache<string, KeptRow>;
  readonly #fills = new Set<Fill>();
  readonly #onEvent: (event: PostgresCacheEvent) => void;
  readonly #feed: ChangeFeed;
  readonly #outside: <T>(work: () => T) => T;

  /** `outside` runs its work outside any request's context: the listening connection is opened there. */
  constructor(options: PostgresCacheOptions, connection: pg.ClientConfig, channel: string, outside: <T>(work: () => T) => T = (work) => work()) {
    this.#outside = outside;
    const maxObjects = options.maxObjects ?? DEFAULT_CACHE.maxObjects;
    const maxBytes = options.maxBytes ?? DEFAULT_CACHE.maxBytes;
    for (const [name, value] of Object.entries({ maxObjects, maxBytes })) {
      if (!Number.isSafeInteger(value) || value < 1) throw new Error(`PostgresObjectStore: cache.${name} must be a positive integer`);
    }
    // `maxSize` counts bytes; objects are bounded by a check on insert (lru-cache's `max` would allocate all its slots up front).
    this.#rows = new LRUCache<string, KeptRow>({ maxSize: maxBytes, sizeCalculation: rowBytes });
    this.#maxObjects = maxObjects;
    const consistency = options.consistency ?? 'session';
    if (!['session', 'strong', 'eventual', 'read-your-writes'].includes(consistency)) {
      throw new Error('PostgresObjectStore: cache.consistency must be "session", "strong" or "eventual"');
    }
    this.consistency = consistency === 'read-your-writes' ? 'strong' : consistency;
    this.#onEvent = options.onEvent ?? (() => undefined);
    this.#feed = new ChangeFeed(connection, channel, {
      listening: () => this.#onEvent({ kind: 'listening' }),
      deaf: (error) => {
        this.#forgetAll();
        this.#onEvent({ kind: 'deaf', error });
      },
      changed: (payload) => {
        if (payload.startsWith(':')) this.evict(payload.slice(1));
        else this.#forgetAll();
        this.#onEvent(payload.startsWith(':') ? { kind: 'changed', id: payload.slice(1) } : { kind: 'changed' });
      },
    });
  }

  readonly #maxObjects: number;
  readonly consistency: 'session' | 'strong' | 'eventual';

  /**
   * The cached rows of `ids` (by id; absent ones are to be fetched), while listening; starts listening
   * on first use. `floor` is the position the read must reflect (`SessionScopes.floor`: `undefined`
   * for a session that never wrote, `null` outside any session). A round trip on the listening
   * connection, sent after this call (one for all reads that begin meanwhile), comes first in
   * `strong` mode, and in `session` mode unless this instance has already applied the notifications
   * up to a position past `floor`: notifications committed before then have evicted what they changed.
   * `synced` is told when such a round trip came first.
   */
  async read(ids: readonly string[], floor: string | undefined | null, synced?: () => void): Promise<Map<string, KeptRow>> {
    const found = new Map<string, KeptRow>();
    if (!this.#feed.listening) {
      this.#outside(() => this.#feed.start());
      return found;
    }
    if (!ids.some((id) => this.#rows.has(id))) return found; // nothing to answer from the cache: no wait
    if (this.#mustSync(floor)) {
      this.#onEvent({ kind: 'waited' });
      if (!(await this.#feed.sync())) return found;
      synced?.();
    }
    return this.#held(ids, found);
  }

  /**
   * `read` without a promise: the cached rows of `ids` when every one of them is cached and no round
   * trip must come first, else `undefined` (then `read`).
   */
  readNow(ids: readonly string[], floor: string | undefined | null): Map<string, KeptRow> | undefined {
    if (!this.#feed.listening || this.#mustSync(floor)) return undefined;
    const found = this.#held(ids, new Map());
    return found.size === ids.length ? found : undefined; // (an id asked twice: `read`)
  }

  /** The row of `id` as cached (no recency kept), when it is exactly `row`'s version: the same store time and text. */
  same(row: CachedRow): KeptRow | undefined {
    const held = this.#feed.listening ? this.#rows.peek(row.id) : undefined;
    return held && held.store_time === row.store_time && held.body === row.body && held.class_name === row.class_name ? held : undefined;
  }

  #held(ids: readonly string[], found: Map<string, KeptRow>): Map<string, KeptRow> {
    for (const id of ids) {
      const row = this.#rows.get(id);
      if (row) found.set(id, row);
    }
    return found;
  }

  #mustSync(floor: string | undefined | null): boolean {
    if (this.consistency === 'eventual') return false;
    if (this.consistency === 'strong' || floor === null) return true;
    return floor !== undefined && !this.#feed.reached(floor);
  }

  /**
   * Fetches rows with `fetch` and keeps those no change overtook: a change of an id noticed while the
   * fetch runs (or the connection lost) means PostgreSQL may have answered the row as it was before.
   * `rowOf` gives the row to keep of each answer (none: the answer is the row); `kept` is told each
   * row kept (the cache's own, to which the store may give its object).
   */
  async fill<T>(fetch: () => Promise<T[]>, rowOf: (answer: T) => CachedRow | undefined = (answer) => answer as CachedRow, kept?: (row: KeptRow, answer: T) => void): Promise<T[]> {
    if (!this.#feed.listening) return fetch();
    const fill: Fill = { stale: new Set(), dead: false };
    this.#fills.add(fill);
    try {
      const answers = await fetch();
      if (!fill.dead && this.#feed.listening) {
        for (const answer of answers) {
          const row = rowOf(answer);
          if (!row || fill.stale.has(row.id)) continue;
          const held = this.#keep(row);
          if (held) kept?.(held, answer);
        }
      }
      return answers;
    } finally {
      this.#fills.delete(fill);
    }
  }

  /** Forgets `id`, also for the fetches in progress (after a write of this instance, or a notification). */
  evict(id: string): void {
    this.#rows.delete(id);
    for (const fill of this.#fills) fill.stale.add(id);
  }

  async close(): Promise<void> {
    this.#forgetAll();
    await this.#feed.close();
  }

  /** Keeps `row` (a copy of its own columns) unless a newer version is held; answers what is held now for it, if it is `row`'s version. */
  #keep(row: CachedRow): KeptRow | undefined {
    const held = this.#rows.peek(row.id);
    // A row fetched later may already be here: never replace a newer version with an older one.
    if (held && Number(held.store_time) > Number(row.store_time)) return undefined;
    // the same version again keeps its object (and the texts the serializer keeps for it)
    if (held && held.store_time === row.store_time && held.body === row.body && held.class_name === row.class_name) return this.#rows.get(row.id);
    const { id, class_name, store_time, body } = row; // only the row's own columns, not the caller's object
    if (!held && this.#rows.size >= this.#maxObjects) this.#rows.pop();
    const kept: KeptRow = { id, class_name, store_time, body };
    this.#rows.set(id, kept);
    return kept;
  }

  #forgetAll(): void {
    this.#rows.clear();
    for (const fill of this.#fills) fill.dead = true;
  }
}

function rowBytes(row: CachedRow): number {
  return row.id.length + row.class_name.length + row.store_time.length + row.body.length + ROW_OVERHEAD_BYTES;
}

/**
 * One connection of its own that LISTENs on the channel; reconnects with doubling delays when it
 * drops. `listening` is true only from the moment LISTEN took effect until the connection is lost.
 */
export class ChangeFeed {
  readonly #connection: pg.ClientConfig;
  readonly #channel: string;
  readonly #on: FeedHandlers;
  #client: pg.Client | undefined;
  #started = false;
  #closed = false;
  #retryMs = RETRY_FIRST_MS;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  listening = false;
  /**
   * The WAL position answered by the last round trip on the listening connection (`positionOf`).
   * Every write whose position a session read after its commit (`POSITION_SQL`) before it is lower,
   * and has had its notifications handled.
   */
  #applied: string | undefined;
  /** The next round trip for `sync`, not yet sent: reads that begin meanwhile share it. */
  #next: Promise<boolean> | undefined;
  /** The last round trip on the listening connection: one at a time (pg queues overlapping queries, and is to stop doing so). */
  #chain: Promise<unknown> = Promise.resolve();

  constructor(connection: pg.ClientConfig, channel: string, on: FeedHandlers) {
    this.#connection = connection;
    this.#channel = channel;
    this.#on = on;
  }

  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    void this.#connect();
  }

  /**
   * Resolves `true` after a round trip on the listening connection that was sent after this call:
   * PostgreSQL delivers every notification committed before that query before its answer (and `pg`
   * handles each before the query resolves). `false` when the connection is not listening, or lost.
   * The reads that call it while a round trip is waiting to be sent share that one.
   */
  sync(): Promise<boolean> {
    const client = this.#client;
    if (!client || !this.listening) return Promise.resolve(false);
    const next = (this.#next ??= this.#round(client, () => {
      if (this.#next === next) this.#next = undefined; // sent: later reads need the next one
    }).then(
      () => this.listening && this.#client === client,
      () => false,
    ));
    return next;
  }

  /**
   * Whether the notifications of every write that a session saw answered, and whose position it then
   * read (`POSITION_SQL`, after the commit), at or before `position`, have been handled: only when the
   * last round trip read a later position (it then ran after that read, so after those commits had
   * signalled their notifications). An equal position is not enough: a commit is visible to others
   * (its transaction no longer in progress) a moment before it signals its listeners, and a round
   * trip in that moment reads the commit's position, with no WAL written since, yet gets no
   * notification before its answer. Taking it as passed answered a cached object older than the
   * session's own write (the failover soak: a read on B, 7 ms before B heard of the session's move
   * to the recycle bin on A, at the very position of that write).
   */
  reached(position: string): boolean {
    return this.#applied !== undefined && this.#applied > position;
  }

  /** One round trip on `client`, after the one in flight; `sending` is called as it is sent. Raises `applied`. */
  #round(client: pg.Client, sending?: () => void): Promise<void> {
    const run = this.#chain
      .then(() => {
        sending?.();
        return client.query<{ feed_position: string }>(FEED_SQL);
      })
      .then((answer) => {
        if (this.#client !== client || !this.listening) return;
        this.#applied = positionOf(answer.rows[0]!.feed_position);
      });
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearInterval(this.#heartbeat);
    this.listening = false;
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ ...this.#connection, keepAlive: true, query_timeout: HEARTBEAT_MS });
    this.#client = client;
    let lost = false;
    const lose = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (this.#client !== client) return; // closed
      this.#client = undefined;
      const wasListening = this.listening;
      this.listening = false;
      this.#next = undefined;
      this.#applied = undefined;
      clearInterval(this.#heartbeat);
      client.end().catch(() => undefined);
      if (wasListening) this.#on.deaf(error);
      this.#retry();
    };
    client.on('error', lose);
    client.on('end', () => lose());
    client.on('notification', (message) => {
      if (this.#client === client && this.listening) this.#on.changed(message.payload ?? '*');
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.#channel}"`);
    } catch (error) {
      lose(error as Error);
      return;
    }
    if (lost || this.#client !== client) return;
    this.listening = true;
    this.#retryMs = RETRY_FIRST_MS;
    this.#heartbeat = setInterval(() => void this.#round(client).catch(lose), HEARTBEAT_MS);
    this.#heartbeat.unref?.();
    this.#on.listening();
  }

  #retry(): void {
    if (this.#closed) return;
    const delay = this.#retryMs;
    this.#retryMs = Math.min(RETRY_LAST_MS, this.#retryMs * 2);
    this.#timer = setTimeout(() => void this.#connect(), delay);
    this.#timer.unref?.();
  }
}
