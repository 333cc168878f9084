/**
 * An index built with `CREATE INDEX CONCURRENTLY` on a connection of its own, so writes go on while it
 * builds and nothing waits for it that need not: the trigram index of `$text` on a table that already
 * holds rows (after the store started), and the field indexes a run-time declaration asks for
 * (`ensureIndex`, PROTOCOL.md 6.12). It runs outside any transaction and without the pool's statement
 * timeout.
 *
 * Of instances building the same index at once, the one holding a session advisory lock named after
 * the index builds; the others give up (`waitForOthers: false`) or wait until it is valid. An index left
 * invalid by a build that failed or was cancelled is dropped and built again; the name is the index's
 * identity, so building again is a no-op once it is valid.
 */
import pg from 'pg';

export interface IndexBuild {
  /**
   * Settles when the build ended: `true` when the index is valid, `false` when it was stopped (or, not
   * waiting for others, another instance builds it); rejects when the build failed.
   */
  readonly done: Promise<boolean>;
  /** Cancels a build in progress (the store closes) and waits for its end. */
  stop(): Promise<void>;
}

export interface IndexTarget {
  /** The table, quoted and schema-qualified. */
  table: string;
  /** The index's schema and name (unquoted identifiers). */
  schema: string;
  index: string;
  /** What follows `ON <table>`: the method, the columns or expressions and a predicate, e.g. `USING gin (...)`. */
  definition: string;
}

/** How often a build waiting for another instance's looks again. */
const POLL_MS = 200;

/** `true` when the index exists and is valid, `false` when it exists but is invalid, `undefined` when absent. */
export async function indexValid(client: pg.ClientBase, schema: string, index: string): Promise<boolean | undefined> {
  const { rows } = await client.query<{ valid: boolean }>(`SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)`, [`"${schema}"."${index}"`]);
  return rows[0]?.valid;
}

export function buildIndex(connection: pg.ClientConfig, target: IndexTarget, { waitForOthers = false } = {}): IndexBuild {
  const client = new pg.Client(connection);
  client.on('error', () => undefined); // a connection lost mid-build fails the build; the next start builds again
  let stopping = false;
  /** While a statement of the build runs server side (then the connection's pid is surely ours). */
  let running = false;
  const statement = async (sql: string) => {
    running = true;
    try {
      await client.query(sql);
    } finally {
      running = false;
    }
  };
  /** Whether this session holds the build's lock, else (waiting for others) the index became valid: `undefined` when it gives up. */
  const lockOrValid = async (): Promise<'locked' | 'valid' | undefined> => {
    for (;;) {
      const { rows } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS got', [`odbrest:index:${target.schema}.${target.index}`]);
      if (rows[0]!.got) return 'locked';
      // never a blocking wait for the lock: a build waits for every statement in progress, this one included
      if (!waitForOthers || stopping) return undefined;
      if (await indexValid(client, target.schema, target.index)) return 'valid';
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      if (stopping) return undefined;
    }
  };
  const build = async (): Promise<boolean> => {
    await client.connect();
    try {
      const held = await lockOrValid();
      if (held !== 'locked') return held === 'valid';
      if (stopping) return false;
      const valid = await indexValid(client, target.schema, target.index);
      if (valid) return true;
      const name = `"${target.schema}"."${target.index}"`;
      if (valid === false) await statement(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      if (stopping) return false;
      await statement(`CREATE INDEX CONCURRENTLY IF NOT EXISTS "${target.index}" ON ${target.table} ${target.definition}`);
      return true;
    } finally {
      await client.end().catch(() => undefined); // the advisory lock ends with the session
    }
  };
  const done = build();
  return {
    done,
    async stop() {
      stopping = true;
      const pid = (client as unknown as { processID?: number }).processID;
      if (running && pid !== undefined) {
        // the build runs server side whatever the client does: cancel it from another connection
        const canceller = new pg.Client(connection);
        canceller.on('error', () => undefined);
        await canceller
          .connect()
          .then(() => canceller.query('SELECT pg_cancel_backend($1)', [pid]))
          .catch(() => undefined)
          .finally(() => canceller.end().catch(() => undefined));
      }
      await done.catch(() => undefined);
    },
  };
}
