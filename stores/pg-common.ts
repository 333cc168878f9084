/** What the PostgreSQL stores share: the pool, running work on a connection, telling outages apart. */
import pg from 'pg';
import { StorageUnavailableError } from '../src/index.js';

export interface PostgresPoolOptions {
  /** `postgres://` URL. Default: pg's own defaults (`PGHOST`, `PGUSER`, ... environment variables). */
  connectionString?: string;
  /** A pool of your own instead; it is not closed by `close()`. Give it an `on('error')` listener. */
  pool?: pg.Pool;
  /** Longest wait for a connection. Default 2000 ms. */
  connectTimeoutMs?: number;
  /** Longest run of one statement (server side). Default 10 s. */
  statementTimeoutMs?: number;
  /** Most connections in the pool. Default 10. */
  maxConnections?: number;
}

/**
 * Server states that mean "unreachable or overloaded, retry later" (SQLSTATE classes 08, 53, 57), and
 * a write refused by a server in recovery (25006): the address leads to a standby (an endpoint moved
 * before the promotion, or a primary being demoted), so there is no primary to write to right now.
 */
const UNAVAILABLE_STATES = /^(08|53|57P0|57014|25006)/;
/** Client-side failures of the connection itself (pg raises these as plain errors). */
const CONNECTION_FAILURE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|not queryable|Query read timeout|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN/i;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,50}$/;

/** Throws unless every name is a plain SQL identifier (they are put into statements unquoted by pg). */
export function checkIdentifiers(store: string, ...names: string[]): void {
  for (const name of names) {
    if (!IDENTIFIER.test(name)) throw new Error(`${store}: ${JSON.stringify(name)} is not a plain SQL identifier`);
  }
}

/** The given pool, or a new one from the options; `owned` says whether `close()` ends it. */
export function openPool(options: PostgresPoolOptions): { pool: pg.Pool; owned: boolean } {
  if (options.pool) return { pool: options.pool, owned: false };
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    statement_timeout: options.statementTimeoutMs ?? 10_000,
    query_timeout: (options.statementTimeoutMs ?? 10_000) + 5000,
    max: options.maxConnections ?? 10,
    keepAlive: true,
  });
  // An idle connection that dies (server restart, pg_terminate_backend) is reported here; without a
  // listener it would crash the process. The pool drops it and opens a new one when needed.
  pool.on('error', () => undefined);
  return { pool, owned: true };
}

/** Runs `work` on a pooled connection; connection trouble becomes `StorageUnavailableError`. */
export async function onConnection<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  // A checked-out connection that breaks between statements emits 'error'; unheard, that would
  // crash the process. The statement in progress fails on its own; this only marks the connection.
  let broken: Error | undefined;
  const onError = (error: Error) => void (broken = error);
  try {
    // Heard from the moment the pool hands the connection over, not an `await` later: the pool stops
    // listening then, and a new connection's first answer and a FATAL (pg_terminate_backend) can come
    // in one read, the error emitted before the awaiting code runs (an uncaught exception, seen in
    // test/outage.test.ts about one run in six).
    const client = await new Promise<pg.PoolClient>((resolve, reject) => {
      pool.connect((error, connected) => {
        if (error || !connected) return reject(error ?? new Error('the pool handed over no connection'));
        connected.on('error', onError);
        resolve(connected);
      });
    });
    try {
      return await work(client);
    } catch (error) {
      if (isUnavailable(error)) broken ??= error as Error;
      throw error;
    } finally {
      client.off('error', onError);
      client.release(broken); // a broken connection is not reused
    }
  } catch (error) {
    if (error instanceof StorageUnavailableError || !isUnavailable(error)) throw error;
    throw new StorageUnavailableError('PostgreSQL is unavailable', { cause: error });
  }
}

/** Runs `work` in a transaction on `client`: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(client: pg.PoolClient, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * A function that creates a store's schema, tables and indexes once, on first need: `statements` in
 * one transaction under an advisory lock named `lockName` (so instances may start together). After a
 * failure, the next call tries again.
 */
export function schemaSetup(pool: pg.Pool, lockName: string, statements: string[]): () => Promise<void> {
  let setup: Promise<void> | undefined;
  const create = (client: pg.PoolClient) =>
    inTransaction(client, async () => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockName]);
      for (const statement of statements) await client.query(statement);
    });
  return () =>
    (setup ??= onConnection(pool, create).catch((error: unknown) => {
      setup = undefined;
      throw error;
    }));
}

function isUnavailable(error: unknown): boolean {
  if (error instanceof StorageUnavailableError) return true;
  if (error instanceof pg.DatabaseError) return UNAVAILABLE_STATES.test(error.code ?? '');
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  return CONNECTION_FAILURE.test(`${code} ${error.message}`);
}

/** FNV-1a of a string, in base 36: short, stable statement names. */
export function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
}
