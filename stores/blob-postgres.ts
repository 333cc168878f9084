import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import {
  BlobMeter,
  invalidBlobId,
  pieces,
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
import { checkIdentifiers, hash, inTransaction, onConnection, openPool, schemaSetup, type PostgresPoolOptions } from './pg-common.js';

export interface PostgresBlobStoreOptions extends PostgresPoolOptions {
  /** Schema of the tables, created on first use. Default `public`. */
  schema?: string;
  /** Table of blobs, created on first use; the chunks go to `<table>_chunks`. Default `odbrest_blobs`. */
  table?: string;
  /** Clock for `storeTime`, for tests. */
  now?: () => number;
}

/** Bytes per chunk row: large enough that a row's overhead is noise, small enough to stream. */
export const BLOB_CHUNK_BYTES = 256 * 1024;

/**
 * BlobStore on PostgreSQL, in chunk rows of 256 KiB (`bytea`, stored uncompressed so a range reads
 * only the bytes it needs). Chunked rows rather than large objects: plain tables work through any
 * connection pooler, are dumped and replicated like the rest, are removed by a plain `DELETE`, and a
 * download reads each chunk in its own short query, so no connection is held while a slow client
 * reads (large object descriptors live only inside a transaction).
 *
 * Two tables: `<table>` maps an id to a version (`id`, `version`, `size`, `store_time`) and
 * `<table>_chunks` holds each version's bytes (`version`, `seq`, `data`). A put streams its chunks under a
 * new random version inside one transaction, then points the id at it and deletes the old version's
 * chunks: nothing is visible until the commit, and a failed or interrupted put (even a crash of this
 * process) rolls back, leaving nothing behind. The transaction holds a pooled connection while the
 * upload streams in; give the store a pool of its own, sized for concurrent uploads.
 *
 * A download reads the version it found when it began; if that blob is replaced or deleted
 * meanwhile, the download fails (`StorageUnavailableError`) rather than mixing versions.
 */
export class PostgresBlobStore implements BlobStore {
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #blobs: string;
  readonly #chunks: string;
  readonly #tableHash: string;
  readonly #now: () => number;
  readonly #ensureSchema: () => Promise<void>;

  constructor(options: PostgresBlobStoreOptions = {}) {
    const schema = options.schema ?? 'public';
    const table = options.table ?? 'odbrest_blobs';
    checkIdentifiers('PostgresBlobStore', schema, table);
    this.#blobs = `"${schema}"."${table}"`;
    this.#chunks = `"${schema}"."${table}_chunks"`;
    this.#tableHash = hash(this.#blobs);
    this.#now = options.now ?? Date.now;
    ({ pool: this.#pool, owned: this.#ownsPool } = openPool(options));
    this.#ensureSchema = schemaSetup(this.#pool, `odbrest:${this.#blobs}`, [
      `CREATE SCHEMA IF NOT EXISTS "${schema}"`,
      `CREATE TABLE IF NOT EXISTS ${this.#blobs} (id text PRIMARY KEY, version text NOT NULL, size bigint NOT NULL, store_time bigint NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS ${this.#chunks} (version text NOT NULL, seq integer NOT NULL, data bytea NOT NULL, PRIMARY KEY (version, seq))`,
      // EXTERNAL: no compression attempt on file bytes (mostly compressed already), and substring reads
      // only the slice it needs. Altered only once: ALTER TABLE would wait for every running upload.
      `DO $$ BEGIN
        IF (SELECT attstorage FROM pg_attribute WHERE attrelid = '${this.#chunks}'::regclass AND attname = 'data') <> 'e' THEN
          ALTER TABLE ${this.#chunks} ALTER COLUMN data SET STORAGE EXTERNAL;
        END IF;
      END $$`,
    ]);
  }

  async put(id: string, source: ReadableStream<Uint8Array>, options: BlobPutOptions = {}): Promise<BlobWritten> {
    const refused = invalidBlobId(id);
    if (refused) throw await refuseStream(source, refused);
    const meter = new BlobMeter({ ...options, sha256: () => createHash('sha256') });
    const version = randomBytes(12).toString('base64url');
    try {
      await this.#ensureSchema();
      return await onConnection(this.#pool, (client) =>
        inTransaction(client, async () => {
          let seq = 0;
          for await (const piece of pieces(meter.read(source), BLOB_CHUNK_BYTES)) {
            const data = Buffer.from(piece.buffer, piece.byteOffset, piece.length);
            await client.query({ name: this.#statement('chunk'), text: `INSERT INTO ${this.#chunks} (version, seq, data) VALUES ($1, $2, $3)`, values: [version, seq++, data] });
          }
          const written = meter.written();
          await this.#lock(client, id);
          await this.#point(client, id, { version, size: written.size, storeTime: this.#now() });
          return written;
        }),
      );
    } catch (error) {
      await refuseStream(source, error as Error); // not read yet when the database was unreachable
      throw meter.failure ?? error;
    }
  }

  async get(id: string, range?: BlobRange): Promise<BlobRead | undefined> {
    if (invalidBlobId(id)) return undefined;
    const [row] = await this.#query<{ version: string; size: string }>(`SELECT version, size FROM ${this.#blobs} WHERE id = $1`, [id], 'head');
    if (!row) return undefined;
    const size = Number(row.size);
    const { start, end } = resolveRange(size, range);
    const read = async (offset: number, length: number): Promise<Uint8Array> => {
      const [chunk] = await this.#query<{ data: Buffer }>(
        `SELECT substring(data FROM $3 FOR $4) AS data FROM ${this.#chunks} WHERE version = $1 AND seq = $2`,
        [row.version, Math.floor(offset / BLOB_CHUNK_BYTES), (offset % BLOB_CHUNK_BYTES) + 1, length],
        'read',
      );
      if (!chunk) throw new StorageUnavailableError('the file was replaced or deleted while it was read');
      return chunk.data;
    };
    return { size, start, end, stream: pieceStream(read, { start, end }, BLOB_CHUNK_BYTES) };
  }

  async stat(id: string): Promise<BlobStat | undefined> {
    if (invalidBlobId(id)) return undefined;
    const [row] = await this.#query<{ size: string; store_time: string }>(`SELECT size, store_time FROM ${this.#blobs} WHERE id = $1`, [id], 'stat');
    return row && { size: Number(row.size), storeTime: Number(row.store_time) };
  }

  async move(from: string, to: string): Promise<boolean> {
    const refused = invalidBlobId(to);
    if (refused) throw refused;
    if (invalidBlobId(from)) return false;
    if (from === to) return (await this.stat(from)) !== undefined;
    return this.#transaction(async (client) => {
      await this.#lock(client, from, to);
      const { rows } = await client.query<{ version: string; size: string; store_time: string }>(
        `DELETE FROM ${this.#blobs} WHERE id = $1 RETURNING version, size, store_time`,
        [from],
      );
      const moved = rows[0];
      if (!moved) return false;
      await this.#point(client, to, { version: moved.version, size: Number(moved.size), storeTime: Number(moved.store_time) });
      return true;
    });
  }

  async delete(id: string): Promise<boolean> {
    if (invalidBlobId(id)) return false;
    return this.#transaction(async (client) => {
      await this.#lock(client, id);
      const { rows } = await client.query<{ version: string }>(`DELETE FROM ${this.#blobs} WHERE id = $1 RETURNING version`, [id]);
      if (rows[0]) await this.#dropVersion(client, rows[0].version);
      return rows.length === 1;
    });
  }

  async sweep(prefix: string, before: number): Promise<number> {
    // No locks needed: a put committing the same id meanwhile either lands after this delete (and
    // inserts afresh) or before it (and its new store time no longer matches).
    const [row] = await this.#query<{ n: string }>(
      `WITH gone AS (DELETE FROM ${this.#blobs} WHERE starts_with(id, $1) AND store_time < $2 RETURNING version),
         dropped AS (DELETE FROM ${this.#chunks} WHERE version IN (SELECT version FROM gone))
       SELECT count(*) AS n FROM gone`,
      [prefix, before],
    );
    return Number(row!.n);
  }

  async close(): Promise<void> {
    if (this.#ownsPool) await this.#pool.end();
  }

  /** Points `id` at a version (replacing what it pointed at, whose chunks are deleted). */
  async #point(client: pg.PoolClient, id: string, blob: { version: string; size: number; storeTime: number }): Promise<void> {
    const { rows } = await client.query<{ version: string }>(`SELECT version FROM ${this.#blobs} WHERE id = $1`, [id]);
    await client.query(
      `INSERT INTO ${this.#blobs} (id, version, size, store_time) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, size = EXCLUDED.size, store_time = EXCLUDED.store_time`,
      [id, blob.version, blob.size, blob.storeTime],
    );
    if (rows[0] && rows[0].version !== blob.version) await this.#dropVersion(client, rows[0].version);
  }

  async #dropVersion(client: pg.PoolClient, version: string): Promise<void> {
    await client.query(`DELETE FROM ${this.#chunks} WHERE version = $1`, [version]);
  }

  /**
   * Serializes the changes of these ids until the transaction ends (in a fixed order, so two moves
   * never wait on each other): the old version a change reads is the one it replaces.
   */
  async #lock(client: pg.PoolClient, ...ids: string[]): Promise<void> {
    for (const id of [...ids].sort()) await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`odbrest:${this.#blobs}:${id}`]);
  }

  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.#ensureSchema();
    return onConnection(this.#pool, (client) => inTransaction(client, () => work(client)));
  }

  async #query<T extends object>(text: string, values: unknown[], prepared?: string): Promise<T[]> {
    await this.#ensureSchema();
    const name = prepared && this.#statement(prepared);
    return (await onConnection(this.#pool, (client) => client.query<T>({ name, text, values }))).rows;
  }

  /** A statement name unique to these tables (names are per connection, and a pool may serve several stores). */
  #statement(purpose: string): string {
    return `odbrest_blob_${this.#tableHash}_${purpose}`;
  }
}
