/**
 * Read replicas of the PostgreSQL object store (docs/scaling.md): PostgreSQL streaming replicas that
 * answer listings. A check every `checkMs` reads the primary's WAL position and each replica's replayed
 * one. A read of a session goes to a replica that has replayed the session's position (its writes)
 * and that kept up with the primary within `maxLagMs`; else, and for reads outside any session, to the
 * primary. A replica that fails is skipped, and checked again after a doubling delay.
 */
import pg from 'pg';
import { StorageUnavailableError } from '../src/index.js';
import { onConnection, openPool, type PostgresPoolOptions } from './pg-common.js';
import { positionOf, POSITION_SQL } from './session-scope.js';

export interface PostgresReplicaOptions {
  /** How often the replicas' replayed positions are read. Default 100 ms. */
  checkMs?: number;
  /** A replica that has not replayed what the primary had written this long ago is skipped. Default 1000 ms. */
  maxLagMs?: number;
}

const RETRY_FIRST_MS = 500;
const RETRY_LAST_MS = 10_000;
const REPLAYED_SQL = 'SELECT pg_last_wal_replay_lsn()::text AS lsn';
/** Errors after which a read is asked of the primary instead: the replica is unreachable, or cancelled the read to replay (40001). */
const RETRY_ON_PRIMARY = (error: unknown) => error instanceof StorageUnavailableError || (error instanceof pg.DatabaseError && error.code === '40001');

interface Replica {
  pool: pg.Pool;
  owned: boolean;
  /** The position it had replayed at the last check (`undefined`: not known, or not a replica). */
  replayed: string | undefined;
  /** When a check last found it caught up with the primary's position of the check before. */
  caughtUpAt: number;
  /** Skipped until then, after a failure. */
  downUntil: number;
  retryMs: number;
}

export class Replicas {
  readonly #replicas: Replica[];
  readonly #primary: pg.Pool;
  readonly #checkMs: number;
  readonly #maxLagMs: number;
  readonly #outside: <T>(work: () => T) => T;
  #timer: ReturnType<typeof setInterval> | undefined;
  #checking = false;
  /** The primary's position at the last check. */
  #primaryAt: string | undefined;
  #next = 0;

  constructor(
    sources: ReadonlyArray<string | pg.Pool>,
    poolOptions: PostgresPoolOptions,
    primary: pg.Pool,
    options: PostgresReplicaOptions,
    outside: <T>(work: () => T) => T,
  ) {
    this.#checkMs = options.checkMs ?? 100;
    this.#maxLagMs = options.maxLagMs ?? 1000;
    for (const [name, value] of Object.entries({ checkMs: this.#checkMs, maxLagMs: this.#maxLagMs })) {
      if (!Number.isSafeInteger(value) || value < 1) throw new Error(`PostgresObjectStore: replica.${name} must be a positive integer`);
    }
    this.#replicas = sources.map((source) => {
      const { pool, owned } = typeof source === 'string' ? openPool({ ...poolOptions, pool: undefined, connectionString: source }) : { pool: source, owned: false };
      return { pool, owned, replayed: undefined, caughtUpAt: -Infinity, downUntil: 0, retryMs: RETRY_FIRST_MS };
    });
    this.#primary = primary;
    this.#outside = outside;
  }

  /**
   * Runs a read on a replica fit for `floor` (`SessionScopes.floor`), or with `primary` when none is
   * (or the replica fails on the way).
   */
  async read<T>(floor: string | undefined | null, work: (client: pg.PoolClient) => Promise<T>, primary: () => Promise<T>): Promise<T> {
    this.#start();
    const replica = floor === null ? undefined : this.#pick(floor);
    if (!replica) return primary();
    try {
      return await onConnection(replica.pool, work);
    } catch (error) {
      if (!RETRY_ON_PRIMARY(error)) throw error;
      if (error instanceof StorageUnavailableError) this.#down(replica);
      return primary();
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    for (const replica of this.#replicas) if (replica.owned) await replica.pool.end();
  }

  #pick(floor: string | undefined): Replica | undefined {
    const now = Date.now();
    for (let i = 0; i < this.#replicas.length; i++) {
      const replica = this.#replicas[(this.#next + i) % this.#replicas.length]!;
      const fit =
        replica.downUntil <= now && replica.replayed !== undefined && now - replica.caughtUpAt <= this.#maxLagMs && (floor === undefined || replica.replayed >= floor);
      if (fit) {
        this.#next = (this.#next + i + 1) % this.#replicas.length;
        return replica;
      }
    }
    return undefined;
  }

  #start(): void {
    if (this.#timer || this.#replicas.length === 0) return;
    this.#outside(() => {
      this.#timer = setInterval(() => void this.#check(), this.#checkMs);
      this.#timer.unref?.();
      void this.#check();
    });
  }

  /** Reads the primary's position, then each replica's replayed one (a replica that is down only once its delay has passed). */
  async #check(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      const before = this.#primaryAt;
      this.#primaryAt = await this.#position(this.#primary, POSITION_SQL).catch(() => before);
      const now = Date.now();
      await Promise.all(
        this.#replicas.map(async (replica) => {
          if (replica.downUntil > now) return;
          try {
            replica.replayed = await this.#position(replica.pool, REPLAYED_SQL);
            replica.retryMs = RETRY_FIRST_MS;
            if (replica.replayed !== undefined && before !== undefined && replica.replayed >= before) replica.caughtUpAt = now;
          } catch {
            this.#down(replica);
          }
        }),
      );
    } finally {
      this.#checking = false;
    }
  }

  async #position(pool: pg.Pool, sql: string): Promise<string | undefined> {
    const lsn = (await onConnection(pool, (client) => client.query<{ lsn: string | null }>(sql))).rows[0]?.lsn;
    return lsn ? positionOf(lsn) : undefined;
  }

  #down(replica: Replica): void {
    replica.replayed = undefined;
    replica.downUntil = Date.now() + replica.retryMs;
    replica.retryMs = Math.min(RETRY_LAST_MS, replica.retryMs * 2);
  }
}
