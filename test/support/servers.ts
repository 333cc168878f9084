/**
 * The Redis and PostgreSQL servers the storage suites run against (`REDIS_URL`, `DATABASE_URL`).
 * With `CI=true` they must be reachable and a missing server fails the run; elsewhere the suites that
 * need one are skipped, saying which and why.
 */
import { createConnection } from 'node:net';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A name unique to this test run, for key prefixes, schemas and tables. */
export const RUN_ID = `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;

/** Answers why the server at `url` cannot be used, or `undefined` when it can. */
async function unreachable(url: string, defaultPort: number): Promise<string | undefined> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || defaultPort) });
    const finish = (reason?: string) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(2000, () => finish('no answer within 2 s'));
    socket.once('connect', () => finish());
    socket.once('error', (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
  });
}

/**
 * Checks a server once per test file. Returns `true` when the suites may run; otherwise prints which
 * suites are skipped and why, or throws under CI.
 */
export async function serverAvailable(kind: 'Redis' | 'PostgreSQL', suites: string): Promise<boolean> {
  const url = kind === 'Redis' ? REDIS_URL : DATABASE_URL;
  const reason = await unreachable(url, kind === 'Redis' ? 6379 : 5432);
  if (reason === undefined) return true;
  const where = `${kind === 'Redis' ? 'REDIS_URL' : 'DATABASE_URL'}=${url.replace(/\/\/[^@/]*@/, '//***@')}`;
  return requireOrSkip(`${kind} at ${where} is unreachable (${reason}); set ${where.split('=')[0]} to run them`, suites);
}

/**
 * The rule for suites that need something from the machine: under `CI=true` a missing piece fails
 * the run; elsewhere the suites are skipped, saying which and why. Returns `false` (skip).
 */
export function requireOrSkip(missing: string, suites: string): false {
  if (process.env.CI === 'true') throw new Error(`required under CI=true for ${suites}: ${missing}`);
  console.warn(`SKIPPED ${suites}: ${missing}`);
  return false;
}

/** Drops a schema this test run created (and everything in it). */
export async function dropSchema(schema: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

/** Deletes the Redis keys this test run wrote under `prefix`. */
export async function deleteKeys(prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
}
