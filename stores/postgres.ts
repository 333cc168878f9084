import pg from 'pg';
import {
  followsReferences,
  newObjectId,
  StoreConflictError,
  StoreValueError,
  type FindQuery,
  type FindResult,
  type ObjectInput,
  type ClassCount,
  type ClassRules,
  type Violations,
  type ObjectStore,
  type ReferencingQuery,
  type StoredObject,
  type Where,
} from '../src/index.js';
import { checkIdentifiers, hash, inTransaction, onConnection, openPool, type PostgresPoolOptions } from './pg-common.js';
import { DEFAULT_CACHE, NOTIFY_ALL_ABOVE, RowCache, type KeptRow, type PostgresCacheOptions } from './pg-cache.js';
import { Replicas, type PostgresReplicaOptions } from './pg-replicas.js';
import { positionOf, POSITION_SQL, SessionScopes } from './session-scope.js';
import { checkIndexedFields, countLockKey, createSql, EXISTING_SQL, refsFunction, upgradeSql, type Existing, type TableNames } from './postgres-schema.js';
import { containment, indexedColumn, orderKeys, Params, textFunctionSql, whereSql, type IndexedFields } from './postgres-sql.js';
import { buildIndex, indexValid, type IndexBuild, type IndexTarget } from './pg-index-build.js';
import { DeclaredIndexes } from './pg-declared-indexes.js';
import { violationsSql } from './pg-violations.js';

export interface PostgresObjectStoreOptions extends PostgresPoolOptions {
  /** Schema of the table, created on first use. Default `public`. */
  schema?: string;
  /**
   * Table of objects, created on first use with its companions `<table>_stats`, `<table>_counts` and
   * `<table>_seq`. Default `odbrest_store` (tables of the earlier `json` layout are refused).
   */
  table?: string;
  /**
   * Fields to index with btrees (plain identifiers, e.g. `['City', 'Revenue']`): a generated column and
   * its indexes each, added at start when missing. Equality and `$in` filters on them and `orderBy` them
   * (ascending, or descending with `reverseOrder`) are then answered from those indexes, pages and deep
   * page starts included. Each costs its writes some time and the table some space.
   */
  indexedFields?: readonly string[];
  /** Clock for `storeTime`, for tests. */
  now?: () => number;
  /**
   * Objects read by id (`get`, `getMany`) are kept in process and evicted when any instance changes
   * them (PostgreSQL notifications, listened to on one connection of this store's own, outside the
   * pool). Default on: 10,000 objects, 32 MiB. `false` reads every object from PostgreSQL.
   */
  cache?: PostgresCacheOptions | false;
  /**
   * PostgreSQL streaming replicas of the primary (`postgres://` URLs, or pools of your own) that
   * answer listings and totals: a session's read goes to one that has replayed the session's writes
   * and keeps up with the primary (`replica.maxLagMs`), else to the primary; reads outside any session
   * go to the primary. A replica that fails is skipped and tried again later (docs/scaling.md).
   */
  replicas?: ReadonlyArray<string | pg.Pool>;
  /** How the replicas are checked. */
  replica?: PostgresReplicaOptions;
  /**
   * `$text` is answered from a trigram index (the `pg_trgm` extension, created when missing and
   * allowed). On a table that already holds rows the index is built after start without blocking
   * writes (`CREATE INDEX CONCURRENTLY`); until then, and without the extension, `$text` reads the
   * rows. Default `true`; `false` never creates the extension or the index.
   */
  textIndex?: boolean;
}

/**
 * Filtered totals of at least this many objects, of filters made of equalities, references and `$in`,
 * are kept up to date by the writes (at most `MAX_MAINTAINED` per class); others are cached per class
 * version. Smaller totals are cheap to count again.
 */
const MAINTAIN_FROM = 1000;
const MAX_MAINTAINED = 32;
/** Listings (class, filter, direction) and page starts per listing that `PageStarts` remembers. */
const MAX_LISTINGS = 500;
const MAX_STARTS = 200;

interface Row {
  id: string;
  class_name: string;
  store_time: string;
  body: string;
}

/** A listing's answer: the first row always carries the class version and the total; page rows follow. */
interface ListingRow {
  /** The class version (every write raises it), for cached totals. */
  v: string;
  /** The version that page starts are valid at: the class's moves when unfiltered (see the stats), else `v`. */
  pv: string;
  /** The answering server's start (`pg_postmaster_start_time()`): versions of another server, or timeline, are not comparable. */
  srv: string;
  total: string;
  cached: string | null;
  id: string | null;
  store_time: string | null;
  body: string | null;
  seq: string | null;
  /** With `alsoCount`: its total, and the cached one (NULL when it was counted). */
  also?: string;
  also_cached?: string | null;
}

/**
 * ObjectStore on PostgreSQL. One table: `id` (primary key), `seq` (creation order; a replaced object
 * keeps it), `class_name`, `store_time` (epoch ms, whole seconds), `data` (the fields as `jsonb`, for
 * filters, under a GIN index) and `body` (the same fields as JSON text, exactly as written, so answers
 * keep the order of members, which `jsonb` loses). A btree on `(class_name, seq)` serves pages in order.
 *
 * Totals never scan the class: statement triggers keep per class the number of objects and a version
 * (`<table>_stats`, which every write to the class raises, in the write's own transaction), and
 * filtered totals are cached in `<table>_counts` under the version they were counted at. Both are
 * read in the same statement (one snapshot) as the page, so every instance sharing the table answers
 * exact totals. Deep pages in creation order start from the position learned from earlier pages of
 * the same listing at the same version (keyset paging), or else skip through the index.
 *
 * PostgreSQL cannot hold the character U+0000 in text, so a field value containing it is refused.
 */
export class PostgresObjectStore implements ObjectStore {
  readonly systemName = 'postgresql';
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #schema: string;
  readonly #name: string;
  readonly #table: string;
  readonly #stats: string;
  readonly #counts: string;
  readonly #sequence: string;
  readonly #tableHash: string;
  readonly #names: TableNames;
  /** The host's `indexedFields`, each with its generated column. */
  readonly #indexed: IndexedFields;
  readonly #declared: DeclaredIndexes;
  readonly #now: () => number;
  readonly #starts = new PageStarts();
  readonly #cache: RowCache | undefined;
  readonly #scopes = new SessionScopes();
  readonly #replicas: Replicas | undefined;
  /** Whether a session's writes tell their position (only something that reads it needs it). */
  readonly #positions: boolean;
  #setup: Promise<void> | undefined;
  readonly #textIndexWanted: boolean;
  readonly #connection: pg.ClientConfig;
  /** The trigram index's concurrent build, started after the setup committed (a table that held rows). */
  #textIndexBuild: IndexBuild | undefined;

  constructor(options: PostgresObjectStoreOptions = {}) {
    const schema = options.schema ?? 'public';
    const table = options.table ?? 'odbrest_store';
    checkIdentifiers('PostgresObjectStore', schema, table);
    this.#schema = schema;
    this.#name = table;
    this.#table = `"${schema}"."${table}"`;
    this.#stats = `"${schema}"."${table}_stats"`;
    this.#counts = `"${schema}"."${table}_counts"`;
    this.#sequence = `"${schema}"."${table}_seq"`;
    this.#tableHash = hash(this.#table);
    this.#names = { schema, name: table, table: this.#table, stats: this.#stats, counts: this.#counts, sequence: this.#sequence };
    checkIndexedFields(table, options.indexedFields ?? []);
    this.#indexed = new Map((options.indexedFields ?? []).map((field) => [field, indexedColumn(field)]));
    this.#now = options.now ?? Date.now;
    ({ pool: this.#pool, owned: this.#ownsPool } = openPool(options));
    this.#textIndexWanted = options.textIndex !== false;
    this.#connection = options.pool?.options ?? { connectionString: options.connectionString, connectionTimeoutMillis: options.connectTimeoutMs ?? 2000 };
    this.#declared = new DeclaredIndexes(this.#pool, this.#connection, this.#names, this.#indexed);
    if (options.cache !== false) {
      this.#cache = new RowCache(options.cache ?? DEFAULT_CACHE, this.#connection, this.#channel(), (work) => this.#scopes.outside(work));
    }
    if (options.replicas?.length) {
      this.#replicas = new Replicas(options.replicas, options, this.#pool, options.replica ?? {}, (work) => this.#scopes.outside(work));
    }
    this.#positions = this.#cache?.consistency === 'session' || this.#replicas !== undefined;
    // only a cache in `session` consistency and replicas read the position (the request context costs every request some CPU)
    if (this.#positions) this.inSession = (position, work, wrote) => this.#scopes.run(position, work, wrote);
  }

  /**
   * Session consistency (`ObjectStore.inSession`), with the cache's `session` consistency (the
   * default): reads by id answer from the cache once this instance applied the notifications past
   * the session's position, and a write made in `work` tells `wrote` its WAL position, read on its
   * connection after it committed.
   */
  readonly inSession?: <T>(position: string | undefined, work: () => Promise<T>, wrote: (position: string) => Promise<void>) => Promise<T>;

  async get(id: string): Promise<StoredObject | undefined> {
    const cached = (await this.#cacheRead([id]))?.get(id);
    if (cached) return toObject(cached);
    const fetch = () => this.#query<Row>(`SELECT id, class_name, store_time, body FROM ${this.#table} WHERE id = $1`, [id], 'get');
    const rows = await (this.#cache ? this.#cache.fill(fetch) : fetch());
    return rows[0] && toObject(rows[0]);
  }

  async getMany(ids: readonly string[]): Promise<StoredObject[]> {
    if (ids.length === 0) return [];
    const byId = new Map<string, Row>(await this.#cacheRead(ids));
    const missing = ids.filter((id) => !byId.has(id));
    if (missing.length > 0) {
      const fetch = () => this.#query<Row>(`SELECT id, class_name, store_time, body FROM ${this.#table} WHERE id = ANY($1::text[])`, [missing], 'get_many');
      for (const row of await (this.#cache ? this.#cache.fill(fetch) : fetch())) byId.set(row.id, row);
    }
    return ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [toObject(row)] : [];
    });
  }

  /**
   * `get` without a promise where the cache holds the object and the session needs no round trip
   * first: the cache's own object, frozen (made once per version, so the serializer keeps its text).
   */
  getNow(id: string): StoredObject | undefined | Promise<StoredObject | undefined> {
    const row = this.#cacheNow([id])?.get(id);
    return row ? frozenOf(row) : this.get(id);
  }

  /** `getMany` as `getNow` is `get`: at once when the cache holds every one of `ids`. */
  getManyNow(ids: readonly string[]): StoredObject[] | Promise<StoredObject[]> {
    const rows = ids.length > 0 ? this.#cacheNow(ids) : undefined;
    return rows ? ids.map((id) => frozenOf(rows.get(id)!)) : this.getMany(ids);
  }

  /** The cached rows of `ids`, as fresh as the session needs (`RowCache.read`). */
  async #cacheRead(ids: readonly string[]): Promise<Map<string, Row> | undefined> {
    if (!this.#cache) return undefined;
    const floor = this.#scopes.floor();
    return this.#cache.read(ids, floor, floor ? () => this.#scopes.passed(floor) : undefined);
  }

  /** `#cacheRead` without a promise: all of `ids` when cached and no round trip must come first (`RowCache.readNow`). */
  #cacheNow(ids: readonly string[]): Map<string, KeptRow> | undefined {
    return this.#cache?.readNow(ids, this.#scopes.floor());
  }

  async find(query: FindQuery): Promise<FindResult> {
    const listing = this.#listingSql(query);
    const read = () => this.#read<ListingRow>(listing.sql, listing.params);
    // a page the caller only reads (a listing's answer) shares the objects the cache keeps for reads by
    // id, and their texts: rows of the primary fill it as `getMany`'s do; a replica's may be older than
    // what the cache heard of, so they are only matched against it (`RowCache.same`)
    const cache = query.frozen ? this.#cache : undefined;
    const kept = new Map<ListingRow, KeptRow>();
    const rows = cache && !this.#replicas ? await cache.fill(read, (row) => cachedRow(row, query.className), (held, row) => kept.set(row, held)) : await read();
    const head = rows[0]!;
    const total = Number(head.total);
    // Remembering the total saves later listings a count; failing to (a deadlock with another listing
    // dropping stale totals, a lost connection) leaves it uncounted, and this listing stands.
    const alsoCounted = head.also === undefined ? undefined : Number(head.also);
    const counted: Promise<void>[] = [];
    if (listing.filterKey !== undefined && head.cached === null) counted.push(this.#cacheCount(query, listing.filterKey, head.v, total));
    if (listing.alsoKey !== undefined && head.also_cached === null) counted.push(this.#cacheCount({ className: query.className, where: query.alsoCount }, listing.alsoKey, head.v, alsoCounted!));
    await Promise.all(counted.map((done) => done.catch(() => undefined)));
    const page = head.id === null ? [] : rows;
    if (listing.startsKey !== undefined && page.length > 0) {
      const offset = query.offset!;
      const at = { version: head.pv, server: head.srv };
      this.#starts.learn(listing.startsKey, at, offset, page[0]!.seq!);
      if (query.limit !== undefined && page.length > query.limit) this.#starts.learn(listing.startsKey, at, offset + query.limit, page[query.limit]!.seq!);
    }
    const objects = page.slice(0, query.limit ?? page.length).map((row) => {
      const own = cachedRow(row, query.className)!;
      const held = cache && (kept.get(row) ?? cache.same(own));
      return held ? frozenOf(held) : toObject(own);
    });
    return alsoCounted === undefined ? { objects, total } : { objects, total, alsoCounted };
  }

  async count(className: string, where?: Where): Promise<number> {
    return (await this.find({ className, where, limit: 0 })).total;
  }

  async classNames(): Promise<string[]> {
    const rows = await this.#read<{ class_name: string }>(`SELECT DISTINCT class_name FROM ${this.#table} ORDER BY class_name`, []);
    return rows.map((row) => row.class_name);
  }

  /** One statement over the class (its `(class_name, seq)` index), each field read once per row: the count of rows breaking `rules` and the first ids. */
  async violations(className: string, rules: ClassRules, limit: number): Promise<Violations> {
    const params = new Params(className, limit);
    const rows = await this.#query<{ n: string; id: string }>(violationsSql(this.#table, rules, params), params.values);
    return { count: Number(rows[0]?.n ?? 0), ids: rows.map((row) => row.id) };
  }

  /**
   * Two partial btree indexes over the class's rows (equality and order on `field`), built with
   * `CREATE INDEX CONCURRENTLY`, so writes go on (pg-declared-indexes.ts); resolves once listings of
   * the class use them. A field of the host's `indexedFields` has its indexes already.
   */
  async ensureIndex(className: string, field: string): Promise<void> {
    await this.#ensureSchema();
    await this.#declared.ensure(className, field);
  }

  /** Exact, from the per-class stats the triggers keep (no class is read). */
  async classCounts(): Promise<ClassCount[]> {
    const rows = await this.#query<{ class_name: string; n: string }>(
      `SELECT class_name, sum(n)::int8 AS n FROM ${this.#stats} GROUP BY class_name HAVING sum(n) > 0 ORDER BY class_name`,
      [],
    );
    return rows.map((row) => ({ className: row.class_name, count: Number(row.n) }));
  }

  async referencing(id: string, query: ReferencingQuery = {}): Promise<FindResult> {
    const { sql, params } = this.#referencingSql(id, query);
    const rows = await this.#query<{ total: string; id: string | null; class_name: string; store_time: string; body: string }>(sql, params);
    const objects = rows.filter((row) => row.id !== null).map((row) => toObject(row as Row));
    return { objects, total: Number(rows[0]?.total ?? 0) };
  }

  /** The objects referencing `id`, found through the `_refs` GIN index, and their total, in one statement. */
  #referencingSql(id: string, query: ReferencingQuery): { sql: string; params: unknown[] } {
    const params = new Params(id);
    params.table = this.#table;
    params.textFunction = this.#textFunction();
    const from = `FROM ${this.#table} WHERE ${refsFunction(this.#names)}(data) @> ARRAY[$1::text]${whereSql(query.where, params, this.#indexed)}`;
    const offset = Math.max(0, Math.floor(query.offset ?? 0));
    const limit = query.limit === undefined ? undefined : Math.max(0, Math.floor(query.limit));
    if (limit === 0) return { sql: `SELECT count(*) AS total, NULL AS id ${from}`, params: params.values };
    const paging = `${limit === undefined ? '' : ` LIMIT ${limit}`}${offset > 0 ? ` OFFSET ${offset}` : ''}`;
    // the matches first, from the index (materialized: walking the class index in page order and testing
    // each row would read every class for an id few objects reference), then the page of them
    const sql = `WITH m AS MATERIALIZED (SELECT id, class_name, seq ${from})
      SELECT (SELECT count(*) FROM m) AS total, o.id, o.class_name, o.store_time, o.body
      FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT id, class_name, seq FROM m ORDER BY class_name, seq${paging}) p ON true
      LEFT JOIN ${this.#table} o ON o.id = p.id ORDER BY p.class_name, p.seq`;
    return { sql, params: params.values };
  }

  /**
   * One statement for a listing: the class's stats, the total (from the stats, the count cache at the
   * current version, or counted), and the page. `filterKey` is set when the total is a filtered one;
   * `startsKey` when the page may be started from a learned position (creation order, offset > 0).
   */
  #listingSql(query: FindQuery): { sql: string; params: unknown[]; filterKey?: string; startsKey?: string; alsoKey?: string } {
    const params = new Params(query.className);
    params.table = this.#table;
    params.textFunction = this.#textFunction();
    const indexed = this.#declared.indexedOf(query.className);
    const conditions = whereSql(query.where, params, indexed);
    const filtered = conditions !== '';
    // a filter through references depends on other classes' objects, which the class's version does
    // not follow: its total and page starts are never cached
    const filterKey = filtered && !followsReferences(query.where) ? JSON.stringify(query.where) : undefined;
    const stats = `WITH st AS (SELECT coalesce(sum(n), 0)::int8 AS n, coalesce(sum(version), 0)::int8 AS v, coalesce(sum(moves), 0)::int8 AS m
      FROM ${this.#stats} WHERE class_name = $1)`;
    /** A filtered total kept in the counts table (maintained, or counted at this version), else NULL. */
    const cachedSql = (key: string | undefined) =>
      key === undefined ? 'NULL::int8' : `(SELECT c.n FROM ${this.#counts} c WHERE c.class_name = $1 AND c.filter = ${params.add(key)} AND (c.conds IS NOT NULL OR c.version = st.v))`;
    // the caller's second total (`alsoCount`), from the same snapshot
    const also = query.alsoCount && whereSql(query.alsoCount, params, indexed);
    const alsoKey = query.alsoCount && !followsReferences(query.alsoCount) ? JSON.stringify(query.alsoCount) : undefined;
    const alsoLookup = also === undefined ? '' : `, ${cachedSql(alsoKey)} AS also_cached`;
    const alsoColumns = also === undefined ? '' : `, also_cached, COALESCE(also_cached, (SELECT count(*) FROM ${this.#table} WHERE class_name = $1${also})) AS also`;
    // OFFSET 0 keeps the cache lookups one subquery (flattened, they would run once per use of their
    // column); a count runs only when the cache has no total: COALESCE evaluates lazily.
    const head = filtered
      ? `${stats}, head AS (SELECT v, v AS pv, cached, COALESCE(cached, (SELECT count(*) FROM ${this.#table} WHERE class_name = $1${conditions})) AS total${alsoColumns}
          FROM (SELECT st.v, ${cachedSql(filterKey)} AS cached${alsoLookup} FROM st OFFSET 0) s)`
      : `${stats}, head AS (SELECT v, m AS pv, n AS cached, n AS total${alsoColumns} FROM (SELECT st.*${alsoLookup} FROM st OFFSET 0) s)`;
    const alsoOut = also === undefined ? '' : ', head.also_cached, head.also';
    if (query.limit === 0) return { sql: `${head} SELECT v, pv, total, cached, NULL AS id${alsoOut} FROM head`, params: params.values, filterKey, alsoKey };

    const keys = orderKeys(query.orderBy, query.reverse ?? false, params, indexed);
    const offset = Math.max(0, Math.floor(query.offset ?? 0));
    const limit = query.limit === undefined ? undefined : Math.max(0, Math.floor(query.limit));
    const select = keys.map((key, i) => (key.expr === 'seq' ? 'seq' : `${key.expr} AS k${i}`));
    const order = (prefix: string) => keys.map((key, i) => `${prefix}${key.expr === 'seq' ? 'seq' : `k${i}`} ${key.dir}`).join(', ');
    // a page past the matches is empty without a scan: the total (one row, known first) gates the page
    // and the search for its start (PostgreSQL tests a condition on outer values alone once, first)
    let from = `FROM ${this.#table} WHERE class_name = $1${conditions}${offset > 0 ? ` AND head.total > ${offset}` : ''}`;
    let paging = '';
    // Creation order: a page starts at the seq of the row at `offset` (learned from an earlier page, or
    // found through the index) instead of carrying `offset` rows through the page; it takes one row
    // more than asked, whose seq is where the next page starts.
    const startsKey = query.orderBy || (filtered && filterKey === undefined) ? undefined : `${keys[0]!.dir} ${filterKey ?? ''}`;
    if (startsKey !== undefined && offset > 0) {
      const find = `(SELECT seq ${from} ORDER BY seq ${keys[0]!.dir} OFFSET ${offset} LIMIT 1)`;
      const known = this.#starts.get(startsKey, offset);
      // learned on this server at this version: after a failover the promoted replica's versions may
      // reach the same numbers by other writes (the lost ones), so a start learned on another server
      // is found again (a replica's too: it costs that page its shortcut, never its rows)
      const start = known
        ? `CASE WHEN head.pv = ${params.add(known.version)}::int8 AND pg_postmaster_start_time() = ${params.add(known.server)}::timestamptz THEN ${params.add(known.seq)}::int8 ELSE ${find} END`
        : find;
      from += ` AND seq ${keys[0]!.dir === 'ASC' ? '>=' : '<='} ${start}`;
    } else if (offset > 0) paging = ` OFFSET ${offset}`;
    if (limit !== undefined) paging = ` LIMIT ${startsKey === undefined ? limit : limit + 1}${paging}`;
    const page = `SELECT id, store_time, body, ${select.join(', ')} ${from} ORDER BY ${order('')}${paging}`;
    const sql = `${head} SELECT head.v, head.pv, pg_postmaster_start_time()::text AS srv, head.total, head.cached, p.id, p.store_time, p.body, p.seq${alsoOut}
      FROM head LEFT JOIN LATERAL (${page}) p ON true ORDER BY ${order('p.')}`;
    return { sql, params: params.values, filterKey, startsKey, alsoKey };
  }

  /**
   * Remembers a filtered total counted at class version `version`. A large total of a filter the trigger
   * can test becomes maintained (`conds`): under the exclusive count lock of the class, so that every
   * write either committed before (then the version moved on and nothing is stored) or waits and then
   * updates it. Otherwise it is cached for that version, and totals of older versions are dropped.
   */
  async #cacheCount(query: FindQuery, filterKey: string, version: string, total: number): Promise<void> {
    const conds = total >= MAINTAIN_FROM ? containment(query.where!) : undefined;
    const values = [query.className, filterKey, version, total];
    if (conds === undefined) {
      await this.#query(
        `WITH stale AS (DELETE FROM ${this.#counts} WHERE class_name = $1 AND version < $3::int8 AND conds IS NULL)
         INSERT INTO ${this.#counts} AS c (class_name, filter, version, n) VALUES ($1, $2, $3, $4)
         ON CONFLICT (class_name, filter) DO UPDATE SET version = EXCLUDED.version, n = EXCLUDED.n WHERE c.version < EXCLUDED.version AND c.conds IS NULL`,
        values,
        'cache_count',
      );
      return;
    }
    await this.#run((client) =>
      inTransaction(client, async () => {
        await client.query(`SELECT pg_advisory_xact_lock(${countLockKey(this.#names)}, hashtext($1))`, [query.className]);
        await client.query(
          `INSERT INTO ${this.#counts} AS c (class_name, filter, version, n, conds)
           SELECT $1, $2, $3, $4, $5::jsonb WHERE (SELECT coalesce(sum(version), 0) FROM ${this.#stats} WHERE class_name = $1) = $3::int8
             AND (SELECT count(*) FROM ${this.#counts} WHERE class_name = $1 AND conds IS NOT NULL) < ${MAX_MAINTAINED}
           ON CONFLICT (class_name, filter) DO UPDATE SET version = EXCLUDED.version, n = EXCLUDED.n, conds = EXCLUDED.conds WHERE c.conds IS NULL`,
          [...values, conds],
        );
      }),
    );
  }

  async put(input: ObjectInput): Promise<StoredObject> {
    if (input.id === undefined) return this.#put(input); // a new id is in no cache
    try {
      return await this.#put(input);
    } finally {
      // whether it was written, refused or its outcome is unknown: the next read asks PostgreSQL
      this.#cache?.evict(input.id);
    }
  }

  async #put(input: ObjectInput): Promise<StoredObject> {
    const json = JSON.stringify(input.fields);
    // an escaped NUL (an odd number of backslashes before u0000) in the JSON text
    if (/(^|[^\\])(\\\\)*\\u0000/.test(json)) {
      throw new StoreValueError('a field value contains the character U+0000, which PostgreSQL cannot store');
    }
    const expected = input.ifStoreTime;
    const now = importedTimeOf(input) ?? Math.floor(this.#now() / 1000) * 1000;
    const write = async (purpose: string, sql: string, id: string, extra: unknown[] = []) => {
      const rows = await this.#query<{ store_time: string }>(sql, [id, input.className, now, json, ...extra], purpose, true).catch(refuseValue);
      return rows[0] && { id, className: input.className, storeTime: Number(rows[0].store_time), fields: JSON.parse(json) as StoredObject['fields'] };
    };
    const insert = `INSERT INTO ${this.#table} (id, class_name, store_time, data, body) VALUES ($1, $2, $3, $4::text::jsonb, $4::text)`;
    if (input.id === undefined) {
      if (typeof expected === 'number') throw new StoreConflictError();
      for (;;) {
        const created = await write('create', `${insert} ON CONFLICT (id) DO NOTHING RETURNING store_time`, newObjectId());
        if (created) return created; // otherwise the random id was taken: draw again
      }
    }
    let stored: StoredObject | undefined;
    if (expected === undefined) {
      // A replaced object keeps its place in creation order, unless it moves to another class.
      stored = await write(
        'put',
        `${insert} ON CONFLICT (id) DO UPDATE SET seq = CASE WHEN o.class_name = EXCLUDED.class_name THEN o.seq ELSE EXCLUDED.seq END,
           class_name = EXCLUDED.class_name, data = EXCLUDED.data, body = EXCLUDED.body, store_time = GREATEST(EXCLUDED.store_time, o.store_time + 1000)
         RETURNING store_time`.replace(`INSERT INTO ${this.#table}`, `INSERT INTO ${this.#table} AS o`),
        input.id,
      );
    } else if (expected === null) {
      stored = await write('put_new', `${insert} ON CONFLICT (id) DO NOTHING RETURNING store_time`, input.id);
    } else {
      stored = await write(
        'put_if',
        `UPDATE ${this.#table} SET seq = CASE WHEN class_name = $2 THEN seq ELSE nextval('${this.#sequence}') END,
           class_name = $2, data = $4::text::jsonb, body = $4::text, store_time = GREATEST($3::int8, store_time + 1000)
         WHERE id = $1 AND store_time = $5::int8 RETURNING store_time`,
        input.id,
        [expected],
      );
    }
    if (!stored) throw new StoreConflictError();
    return stored;
  }

  /**
   * All or nothing, in one transaction: the conditional updates (the bulk `PATCH`'s) as one statement
   * over arrays of ids, bodies and expected store times; any other input as `put` writes it.
   */
  async putMany(inputs: readonly ObjectInput[]): Promise<StoredObject[]> {
    if (inputs.length === 0) return [];
    const jsons = inputs.map((input) => {
      const json = JSON.stringify(input.fields);
      if (/(^|[^\\])(\\\\)*\\u0000/.test(json)) throw new StoreValueError('a field value contains the character U+0000, which PostgreSQL cannot store');
      return json;
    });
    const ids = inputs.map((input) => input.id).filter((id): id is string => id !== undefined);
    if (new Set(ids).size !== ids.length) throw new Error('putMany: an id appears twice');
    for (const input of inputs) importedTimeOf(input);
    const now = Math.floor(this.#now() / 1000) * 1000;
    const table = this.#table;
    try {
      return await this.#write((client) =>
        inTransaction(client, async () => {
          const out: StoredObject[] = new Array(inputs.length);
          const conditional = inputs.flatMap((input, i) => (typeof input.ifStoreTime === 'number' && input.id !== undefined ? [i] : []));
          // in slices: the statement trigger joins a statement's old and new rows, whose cost grows with the square of their number
          for (let start = 0; start < conditional.length; start += PUT_MANY_SLICE) {
            const slice = conditional.slice(start, start + PUT_MANY_SLICE);
            const result = await client
              .query<{ id: string; store_time: string }>({
                name: this.#statement('put_many'),
                text: `UPDATE ${table} AS o SET seq = CASE WHEN o.class_name = i.class_name THEN o.seq ELSE nextval('${this.#sequence}') END,
                  class_name = i.class_name, data = i.body::jsonb, body = i.body, store_time = GREATEST($5::int8, o.store_time + 1000)
                  FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[]) AS i(id, class_name, body, expected)
                  WHERE o.id = i.id AND o.store_time = i.expected RETURNING o.id, o.store_time`,
                values: [slice.map((i) => inputs[i]!.id), slice.map((i) => inputs[i]!.className), slice.map((i) => jsons[i]), slice.map((i) => inputs[i]!.ifStoreTime), now],
              })
              .catch(refuseValue);
            if (result.rows.length !== slice.length) throw new StoreConflictError();
            const times = new Map(result.rows.map((row) => [row.id, Number(row.store_time)]));
            for (const i of slice) out[i] = { id: inputs[i]!.id!, className: inputs[i]!.className, storeTime: times.get(inputs[i]!.id!)!, fields: JSON.parse(jsons[i]!) as StoredObject['fields'] };
          }
          const insert = `INSERT INTO ${table} AS o (id, class_name, store_time, data, body) VALUES ($1, $2, $3, $4::text::jsonb, $4::text)`;
          const isNew = (i: number) => inputs[i]!.ifStoreTime === null && inputs[i]!.id !== undefined;
          for (let i = 0; i < inputs.length; i++) {
            if (out[i]) continue;
            const input = inputs[i]!;
            if (isNew(i)) {
              // a run of new objects with their ids (an import's): one statement per slice, in input order
              const run: number[] = [];
              for (let j = i; j < inputs.length && run.length < INSERT_MANY_SLICE && !out[j] && isNew(j); j++) run.push(j);
              const rows = (
                await client
                  .query<{ id: string; store_time: string }>({
                    name: this.#statement('insert_many'),
                    text: `INSERT INTO ${table} (id, class_name, store_time, data, body)
                      SELECT i.id, i.class_name, i.store_time, i.body::jsonb, i.body
                      FROM unnest($1::text[], $2::text[], $3::int8[], $4::text[]) WITH ORDINALITY AS i(id, class_name, store_time, body, n) ORDER BY i.n
                      ON CONFLICT (id) DO NOTHING RETURNING id, store_time`,
                    values: [run.map((k) => inputs[k]!.id), run.map((k) => inputs[k]!.className), run.map((k) => inputs[k]!.importedStoreTime ?? now), run.map((k) => jsons[k])],
                  })
                  .catch(refuseValue)
              ).rows;
              if (rows.length !== run.length) throw new StoreConflictError(); // an id is taken
              const times = new Map(rows.map((row) => [row.id, Number(row.store_time)]));
              for (const k of run) out[k] = { id: inputs[k]!.id!, className: inputs[k]!.className, storeTime: times.get(inputs[k]!.id!)!, fields: JSON.parse(jsons[k]!) as StoredObject['fields'] };
              i = run[run.length - 1]!;
              continue;
            }
            if (input.id === undefined && typeof input.ifStoreTime === 'number') throw new StoreConflictError();
            const sql =
              input.ifStoreTime === undefined && input.id !== undefined
                ? `${insert} ON CONFLICT (id) DO UPDATE SET seq = CASE WHEN o.class_name = EXCLUDED.class_name THEN o.seq ELSE EXCLUDED.seq END,
                   class_name = EXCLUDED.class_name, data = EXCLUDED.data, body = EXCLUDED.body, store_time = GREATEST(EXCLUDED.store_time, o.store_time + 1000) RETURNING store_time`
                : `${insert} ON CONFLICT (id) DO NOTHING RETURNING store_time`;
            for (;;) {
              const id = input.id ?? newObjectId();
              const rows = (await client.query<{ store_time: string }>(sql, [id, input.className, input.importedStoreTime ?? now, jsons[i]]).catch(refuseValue)).rows;
              if (rows[0]) {
                out[i] = { id, className: input.className, storeTime: Number(rows[0].store_time), fields: JSON.parse(jsons[i]!) as StoredObject['fields'] };
                break;
              }
              if (input.id !== undefined) throw new StoreConflictError(); // ifStoreTime null: the id is taken
            }
          }
          return out;
        }),
      );
    } finally {
      for (const id of ids) this.#cache?.evict(id);
    }
  }

  async delete(id: string): Promise<boolean> {
    try {
      const result = await this.#write((client) => client.query({ name: this.#statement('delete'), text: `DELETE FROM ${this.#table} WHERE id = $1`, values: [id] }));
      return result.rowCount === 1;
    } finally {
      this.#cache?.evict(id);
    }
  }

  /** PostgreSQL's plan (EXPLAIN, JSON format) of the statement a listing runs (page and total), to check that indexes serve it. */
  async explain(query: FindQuery): Promise<unknown> {
    const { sql, params } = this.#listingSql(query);
    return (await this.#query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, params))[0]!['QUERY PLAN'];
  }

  /** The plan of the statement `referencing` runs, to check that the `_refs` index serves it. */
  async explainReferencing(id: string, query: ReferencingQuery = {}): Promise<unknown> {
    const { sql, params } = this.#referencingSql(id, query);
    return (await this.#query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, params))[0]!['QUERY PLAN'];
  }

  async close(): Promise<void> {
    await this.#textIndexBuild?.stop();
    await this.#declared.stop();
    await this.#cache?.close();
    await this.#replicas?.close();
    if (this.#ownsPool) await this.#pool.end();
  }

  /** The notification channel of this table (a name of at most 63 bytes, whatever the schema and table). */
  #channel(): string {
    return `odbrest_${this.#tableHash}_${hash(`${this.#table}#changes`)}`;
  }

  /**
   * Creates the schema, tables, indexes and triggers once, or brings an existing table up to date (under
   * an advisory lock, so instances may race).
   */
  #ensureSchema(): Promise<void> {
    let textIndexLater: IndexTarget | undefined;
    this.#setup ??= this.#run(
      (client) =>
        inTransaction(client, async () => {
          await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`odbrest:${this.#table}`]);
          const found = await client.query<{ table: string | null; stats: string | null }>(`SELECT to_regclass($1) AS table, to_regclass($2) AS stats`, [
            this.#table,
            this.#stats,
          ]);
          if (found.rows[0]!.table !== null && found.rows[0]!.stats === null) {
            throw new Error(`PostgresObjectStore: ${this.#table} has an earlier layout (json fields, no ${this.#stats}); give a new table name`);
          }
          if (found.rows[0]!.table === null) for (const statement of createSql(this.#names)) await client.query(statement);
          const existing = (await client.query<{ columns: string[]; indexes: string[] }>(EXISTING_SQL, [this.#schema, this.#name])).rows[0]!;
          const have: Existing = { columns: new Set(existing.columns), indexes: new Set(existing.indexes) };
          for (const statement of upgradeSql(this.#names, [...this.#indexed.keys()], have)) await client.query(statement);
          textIndexLater = await this.#textIndex(client, have.indexes, found.rows[0]!.table === null);
          // the cache's notifications, installed by the first store that caches (a new table, or one made
          // before the cache or only by stores without it): a NOTIFY serializes its transaction's commit,
          // so tables nobody caches do not pay for it
          if (this.#cache && (await client.query(`SELECT to_regprocedure($1) AS f`, [`${this.#notifier()}()`])).rows[0].f === null) {
            for (const statement of this.#notifySql()) await client.query(statement);
          }
        }),
      false,
    ).then(
      () => {
        if (!textIndexLater) return;
        this.#textIndexBuild = buildIndex(this.#connection, textIndexLater);
        this.#textIndexBuild.done.catch(() => undefined); // until the next start builds it, `$text` reads the rows
      },
      (error: unknown) => {
        this.#setup = undefined; // try again with the next request
        throw error;
      },
    );
    return this.#setup;
  }

  /** The searchable text of a row (`$text`), which a trigram index holds where `pg_trgm` is available. */
  #textFunction(): string {
    return `"${this.#schema}"."${this.#name}_text"`;
  }

  /**
   * The `$text` function, and its trigram index when the `pg_trgm` extension is there or can be
   * created (in a savepoint: without it, or without the right to create it, `$text` reads the rows).
   * A new table gets the index here; on one that holds rows (or whose index a failed build left
   * invalid) this answers what to build concurrently once the setup committed (pg-index-build.ts).
   */
  async #textIndex(client: pg.PoolClient, indexes: ReadonlySet<string>, created: boolean): Promise<IndexTarget | undefined> {
    const index = `${this.#name}_text`;
    if (indexes.has(index) && (!this.#textIndexWanted || (await indexValid(client, this.#schema, index)) !== false)) return undefined;
    await client.query(textFunctionSql(this.#textFunction()));
    if (!this.#textIndexWanted) return undefined;
    await client.query('SAVEPOINT text_index');
    try {
      const found = await client.query<{ schema: string | null }>(`SELECT (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm') AS schema`);
      if (found.rows[0]!.schema === null) await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      const schema = (await client.query<{ schema: string }>(`SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`)).rows[0]!.schema;
      const expression = `${this.#textFunction()}(data) "${schema}".gin_trgm_ops`;
      if (created) await client.query(`CREATE INDEX "${index}" ON ${this.#table} USING gin (${expression})`);
      await client.query('RELEASE SAVEPOINT text_index');
      return created ? undefined : { table: this.#table, schema: this.#schema, index, definition: `USING gin (${expression})` };
    } catch {
      await client.query('ROLLBACK TO SAVEPOINT text_index');
      return undefined;
    }
  }

  #notifier(): string {
    return `"${this.#schema}"."${this.#name}_notify"`;
  }

  /**
   * Triggers that tell the caches of every instance which objects changed: the id of each row
   * updated or deleted (`:` + id), or `*` (everything) for a TRUNCATE, a statement changing many rows
   * or an id too long for a notification. Sent in the writing transaction, delivered at its commit.
   * New rows need no notification: a cache holds only objects that existed.
   */
  #notifySql(): string[] {
    const [t, notify, channel] = [this.#table, this.#notifier(), `'${this.#channel()}'`];
    const each = (rows: string) => `IF (SELECT count(*) FROM (${rows}) c) > ${NOTIFY_ALL_ABOVE} OR EXISTS (SELECT FROM (${rows}) c WHERE octet_length(id) > 7000) THEN
          PERFORM pg_notify(${channel}, '*');
        ELSE
          PERFORM pg_notify(${channel}, ':' || id) FROM (${rows}) c;
        END IF;`;
    return [
      `CREATE FUNCTION ${notify}() RETURNS trigger LANGUAGE plpgsql AS $notify$
      BEGIN
        IF TG_OP = 'UPDATE' THEN
          ${each('SELECT id FROM old_rows UNION SELECT id FROM new_rows')}
        ELSIF TG_OP = 'DELETE' THEN
          ${each('SELECT id FROM old_rows')}
        ELSE
          PERFORM pg_notify(${channel}, '*');
        END IF;
        RETURN NULL;
      END $notify$`,
      `CREATE TRIGGER notify_update AFTER UPDATE ON ${t} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${notify}()`,
      `CREATE TRIGGER notify_delete AFTER DELETE ON ${t} REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${notify}()`,
      `CREATE TRIGGER notify_truncate AFTER TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION ${notify}()`,
    ];
  }

  /**
   * Runs one statement. `prepared` names the statements that look up by id: prepared once per
   * connection, they save PostgreSQL parsing and planning on the hot path. Listings stay unprepared,
   * so each is planned for its actual filter (a generic plan cannot judge a filter's selectivity).
   */
  async #query<T extends object>(text: string, values: unknown[], prepared?: string, write = false): Promise<T[]> {
    const name = prepared && this.#statement(prepared);
    const run = (client: pg.PoolClient) => client.query<T>({ name, text, values });
    return (await (write ? this.#write(run) : this.#run(run))).rows;
  }

  /** Runs a listing's statement on a replica fit for the session (`Replicas.read`), or on the primary. */
  async #read<T extends object>(text: string, values: unknown[]): Promise<T[]> {
    if (!this.#replicas) return this.#query<T>(text, values);
    await this.#ensureSchema();
    const run = (client: pg.PoolClient) => client.query<T>({ text, values });
    return (await this.#replicas.read(this.#scopes.floor(), run, () => this.#run(run))).rows;
  }

  /**
   * Runs a write on a pooled connection; in a session's request, then reads the WAL position there
   * (after the commit: an instance that has applied the notifications past it has applied the write's).
   */
  #write<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    if (!this.#positions || !this.#scopes.active()) return this.#run(work);
    return this.#run(async (client) => {
      const result = await work(client);
      this.#scopes.wrote(positionOf((await client.query<{ lsn: string }>(POSITION_SQL)).rows[0]!.lsn));
      return result;
    });
  }

  /** A statement name unique to this table (names are per connection, and a pool may serve several stores). */
  #statement(purpose: string): string {
    return `odbrest_${this.#tableHash}_${purpose}`;
  }

  /** Runs `work` on a pooled connection; connection trouble becomes `StorageUnavailableError`. */
  async #run<T>(work: (client: pg.PoolClient) => Promise<T>, setup = true): Promise<T> {
    if (setup) await this.#ensureSchema();
    return onConnection(this.#pool, work);
  }
}

/**
 * Where pages of a listing start (the seq of the row at an offset), learned from pages answered, per
 * listing (direction and filter) and valid at one version of the class on one server: the listing
 * statement checks both before using one, so a position learned before a write, or on the old
 * primary before a failover, is never used after it.
 */
class PageStarts {
  readonly #byListing = new Map<string, { version: string; server: string; seqs: Map<number, string> }>();

  get(listing: string, offset: number): { version: string; server: string; seq: string } | undefined {
    const known = this.#byListing.get(listing);
    const seq = known?.seqs.get(offset);
    return seq === undefined ? undefined : { version: known!.version, server: known!.server, seq };
  }

  learn(listing: string, { version, server }: { version: string; server: string }, offset: number, seq: string): void {
    let known = this.#byListing.get(listing);
    if (!known || known.version !== version || known.server !== server) {
      this.#byListing.delete(listing);
      if (this.#byListing.size >= MAX_LISTINGS) this.#byListing.delete(this.#byListing.keys().next().value!);
      this.#byListing.set(listing, (known = { version, server, seqs: new Map() }));
    }
    if (known.seqs.size >= MAX_STARTS) known.seqs.delete(known.seqs.keys().next().value!);
    known.seqs.set(offset, seq);
  }
}

function toObject(row: Row): StoredObject {
  return { id: row.id, className: row.class_name, storeTime: Number(row.store_time), fields: JSON.parse(row.body) as StoredObject['fields'] };
}

/** The object of a cached row, made and frozen on its first read (`ObjectStore.getNow`): one per version, as long as the cache keeps it. */
function frozenOf(row: KeptRow): StoredObject {
  return (row.object ??= deepFreeze(toObject(row)));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/** A listing's page row as the cache keeps rows (none for the head row of an empty page). */
function cachedRow(row: ListingRow, className: string): Row | undefined {
  return row.id === null ? undefined : { id: row.id, class_name: className, store_time: row.store_time!, body: row.body! };
}

/** A value PostgreSQL refuses (SQLSTATE class 22, e.g. a lone surrogate in `jsonb`) is the caller's: `StoreValueError`. */
/** Conditional updates per statement of `putMany`. */
const PUT_MANY_SLICE = 50;
/** New objects per statement of `putMany` (the insert trigger reads only the new rows: its cost grows with their number, not its square). */
const INSERT_MANY_SLICE = 1000;

/** An import's store time of `input` (`undefined` for any other write); refuses one given where it cannot apply. */
function importedTimeOf(input: ObjectInput): number | undefined {
  const time = input.importedStoreTime;
  if (time !== undefined && (input.ifStoreTime !== null || !Number.isSafeInteger(time) || time % 1000 !== 0)) {
    throw new StoreValueError('importedStoreTime is given only to new objects (ifStoreTime: null), in whole seconds');
  }
  return time;
}

function refuseValue(error: unknown): never {
  if (error instanceof pg.DatabaseError && error.code?.startsWith('22')) {
    throw new StoreValueError(`PostgreSQL cannot store a field value: ${error.message}`, { cause: error });
  }
  throw error;
}

export { PostgresBlobStore, BLOB_CHUNK_BYTES, type PostgresBlobStoreOptions } from './blob-postgres.js';
export type { PostgresPoolOptions } from './pg-common.js';
export type { PostgresCacheEvent, PostgresCacheOptions } from './pg-cache.js';
export type { PostgresReplicaOptions } from './pg-replicas.js';
export { PostgresEventBus, NOTIFY_PAYLOAD_LIMIT, type PostgresEventBusOptions } from './pg-events.js';
