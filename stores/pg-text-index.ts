/**
 * The trigram index of `$text` (pg_trgm, GIN) on a table that already holds rows: built with
 * `CREATE INDEX CONCURRENTLY` on a connection of its own once the store has started, so writes go on
 * while it builds and a start never waits for it; until it is valid, `$text` reads the rows. A new,
 * empty table gets the index in its setup transaction instead (instantly).
 *
 * Of instances starting at once, the one holding a session advisory lock builds; an index left invalid
 * by a build that failed or was cancelled is dropped and built again by the next start.
 */
import pg from 'pg';

export interface TextIndexBuild {
  /** Settles when the build ended: `true` when the index is valid, `false` when another instance builds it or it failed. */
  readonly done: Promise<boolean>;
  /** Cancels a build in progress (the store closes) and waits for its end. */
  stop(): Promise<void>;
}

export interface TextIndexTarget {
  /** The table, quoted and schema-qualified. */
  table: string;
  /** The index's schema and name (unquoted identifiers). */
  schema: string;
  index: string;
  /** The indexed expression with its operator class, e.g. `"s"."t_text"(data) "public".gin_trgm_ops`. */
  expression: string;
}

/** `true` when the index exists and is valid, `false` when it exists but is invalid, `undefined` when absent. */
export async function textIndexValid(client: pg.ClientBase, schema: string, index: string): Promise<boolean | undefined> {
  const { rows } = await client.query<{ valid: boolean }>(`SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)`, [`"${schema}"."${index}"`]);
  return rows[0]?.valid;
}

export function buildTextIndex(connection: pg.ClientConfig, target: TextIndexTarget): TextIndexBuild {
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
  const build = async (): Promise<boolean> => {
    await client.connect();
    try {
      const { rows } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS got', [`odbrest:text-index:${target.table}`]);
      if (!rows[0]!.got || stopping) return false;
      const valid = await textIndexValid(client, target.schema, target.index);
      if (valid) return true;
      const name = `"${target.schema}"."${target.index}"`;
      if (valid === false) await statement(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      if (stopping) return false;
      await statement(`CREATE INDEX CONCURRENTLY IF NOT EXISTS "${target.index}" ON ${target.table} USING gin (${target.expression})`);
      return true;
    } finally {
      await client.end().catch(() => undefined); // the advisory lock ends with the session
    }
  };
  const done = build().catch(() => false);
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
      await done;
    },
  };
}
