/**
 * The tables, indexes and triggers of PostgresObjectStore (see its class comment for the layout), and
 * the statements that bring a table of an earlier release of this layout up to date.
 */
import { indexedColumn, orderExpressions } from './postgres-sql.js';

/** Slots per class in the stats table: concurrent writers of one class mostly update different rows. */
const STAT_SLOTS = 8;

/** The quoted names of a store's table and its companions. */
export interface TableNames {
  schema: string;
  /** The table's bare name, for index names. */
  name: string;
  table: string;
  stats: string;
  counts: string;
  sequence: string;
}

/**
 * Field names that `indexedFields` accepts: they become column and index names, so plain identifiers
 * (the names of the fields themselves are case-sensitive, as in answers).
 */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,40}$/;

/** Throws unless every field can name a column and, with the table's name, its indexes (63 bytes at most). */
export function checkIndexedFields(table: string, fields: readonly string[]): void {
  for (const field of fields) {
    if (!FIELD_NAME.test(field) || table.length + field.length + 3 > 63) {
      throw new Error(`PostgresObjectStore: indexedFields: ${JSON.stringify(field)} is not a plain identifier short enough to name an index of ${table}`);
    }
  }
}

/** The statements that create a new table with its companions, indexes and triggers. */
export function createSql(names: TableNames): string[] {
  const { schema, name, table: t, stats, counts, sequence } = names;
  const trigger = (op: string, transition: string) =>
    `CREATE TRIGGER tally_${op.toLowerCase()} AFTER ${op} ON ${t} ${transition} FOR EACH STATEMENT EXECUTE FUNCTION ${tally(names)}()`;
  return [
    `CREATE SCHEMA IF NOT EXISTS "${schema}"`,
    `CREATE SEQUENCE ${sequence}`,
    `CREATE TABLE ${t} (
      id text COLLATE "C" PRIMARY KEY,
      seq bigint NOT NULL DEFAULT nextval('${sequence}'),
      class_name text COLLATE "C" NOT NULL,
      store_time bigint NOT NULL,
      data jsonb NOT NULL,
      body text NOT NULL)`,
    `ALTER SEQUENCE ${sequence} OWNED BY ${t}.seq`,
    `CREATE UNIQUE INDEX "${name}_class_seq" ON ${t} (class_name, seq)`,
    // fastupdate off: with GIN's pending list, recent rows are costed as a scan of that list and the
    // planner falls back to reading the whole class (measured: 15 ms instead of 0.05 ms on 6,000 rows).
    `CREATE INDEX "${name}_fields" ON ${t} USING gin (data jsonb_path_ops) WITH (fastupdate = off)`,
    `CREATE TABLE ${stats} (class_name text COLLATE "C" NOT NULL, slot int NOT NULL, n bigint NOT NULL, version bigint NOT NULL,
      moves bigint NOT NULL DEFAULT 0, PRIMARY KEY (class_name, slot))`,
    `CREATE TABLE ${counts} (class_name text COLLATE "C" NOT NULL, filter text COLLATE "C" NOT NULL, version bigint NOT NULL, n bigint NOT NULL,
      conds jsonb, PRIMARY KEY (class_name, filter))`,
    tallySql(names),
    trigger('INSERT', 'REFERENCING NEW TABLE AS new_rows'),
    trigger('UPDATE', 'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows'),
    trigger('DELETE', 'REFERENCING OLD TABLE AS old_rows'),
    trigger('TRUNCATE', ''),
  ];
}

/** What `upgradeSql` looks at: the columns of the table and its companions, and the indexes, by name. */
export interface Existing {
  /** `<relation>.<column>`, relation being `table`, `stats` or `counts`. */
  columns: Set<string>;
  indexes: Set<string>;
}

/** The catalog query that answers `Existing` (parameters: the schema and the table's bare name). */
export const EXISTING_SQL = `SELECT
    coalesce((SELECT array_agg(CASE c.relname WHEN $2 THEN 'table' WHEN $2 || '_stats' THEN 'stats' ELSE 'counts' END || '.' || a.attname)
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace s ON s.oid = c.relnamespace
      WHERE s.nspname = $1 AND c.relname IN ($2, $2 || '_stats', $2 || '_counts') AND a.attnum > 0 AND NOT a.attisdropped), '{}') AS columns,
    coalesce((SELECT array_agg(c.relname::text) FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = $1 AND c.relkind = 'i'), '{}') AS indexes`;

/**
 * The statements that bring an existing table up to date: the columns a later release added to the
 * companions (and the trigger function that fills them), and a generated column with its btree indexes
 * for each of `indexedFields`. Only what is missing, so that a start takes no lock on a table in use.
 */
export function upgradeSql(names: TableNames, indexedFields: readonly string[], existing: Existing): string[] {
  const { name, table: t, stats, counts } = names;
  const statements: string[] = [];
  if (!existing.columns.has('stats.moves') || !existing.columns.has('counts.conds')) {
    statements.push(
      `ALTER TABLE ${stats} ADD COLUMN IF NOT EXISTS moves bigint NOT NULL DEFAULT 0`,
      `ALTER TABLE ${counts} ADD COLUMN IF NOT EXISTS conds jsonb`,
      tallySql(names),
    );
  }
  if (!existing.indexes.has(`${name}_refs`)) {
    // the ids each row references, under a GIN index: referencedBy (PROTOCOL.md 6.11) without reading every class
    statements.push(refsFunctionSql(names), `CREATE INDEX "${name}_refs" ON ${t} USING gin (${refsFunction(names)}(data)) WITH (fastupdate = off)`);
  }
  const upgraded = statements.length;
  for (const field of indexedFields) {
    const column = indexedColumn(field);
    // A stored column, not only an expression index: PostgreSQL answers a count or a page start from an
    // index alone (index-only scan) only for plain columns.
    if (!existing.columns.has(`table.f_${field}`)) statements.push(`ALTER TABLE ${t} ADD COLUMN ${column} jsonb GENERATED ALWAYS AS (data -> '${field}') STORED`);
    if (!existing.indexes.has(`${name}_f_${field}`)) statements.push(`CREATE INDEX "${name}_f_${field}" ON ${t} (class_name, ${column}, seq)`);
    if (!existing.indexes.has(`${name}_o_${field}`)) statements.push(`CREATE INDEX "${name}_o_${field}" ON ${t} (class_name, ${orderExpressions(column).join(', ')}, seq)`);
  }
  // the planner's statistics of the new columns and index expressions, which autovacuum would gather later
  if (statements.length > upgraded) statements.push(`ANALYZE ${t}`);
  return statements;
}

/** The function that lists the ids a row's fields reference (`referencedIds` in the storage types). */
export function refsFunction(names: TableNames): string {
  return `"${names.schema}"."${names.name}_refs"`;
}

/**
 * The ids of `$ref` members and the strings of `$set` members of the top-level fields not starting
 * with `_`, as `text[]`: immutable, so an expression index can hold it.
 */
function refsFunctionSql(names: TableNames): string {
  return `CREATE OR REPLACE FUNCTION ${refsFunction(names)}(fields jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $body$
    SELECT coalesce(array_agg(DISTINCT r.id), '{}') FROM (
      SELECT e.value ->> '$ref' AS id FROM jsonb_each(fields) e WHERE left(e.key, 1) <> '_' AND jsonb_typeof(e.value -> '$ref') = 'string'
      UNION ALL
      SELECT s.value #>> '{}' FROM jsonb_each(fields) e,
        jsonb_array_elements(CASE WHEN jsonb_typeof(e.value -> '$set') = 'array' THEN e.value -> '$set' ELSE '[]'::jsonb END) s
      WHERE left(e.key, 1) <> '_' AND jsonb_typeof(s.value) = 'string') r $body$`;
}

/** The trigger function's name. */
function tally(names: TableNames): string {
  return `"${names.schema}"."${names.name}_tally"`;
}

/**
 * The trigger function, run once per writing statement, in its transaction:
 * - per class touched, one slot of the stats gets the change in the number of objects (`n`), the rows
 *   touched (`version`, which every write raises) and the rows that entered or left the class or its
 *   creation order (`moves`: inserts, deletes, moves to another class; a replaced object keeps its place);
 * - every maintained filtered total of a touched class (`conds` set) gets the change in its matches;
 * - TRUNCATE empties the classes and forgets the filtered totals.
 * It first takes a shared advisory lock per class touched; a filtered total becomes maintained under the
 * exclusive one (`ADOPT_COUNT_SQL`), so a write either waits for it or is seen by it.
 */
function tallySql(names: TableNames): string {
  const { stats, counts } = names;
  // the changes per row: class, fields, +1/-1, and whether the row moved in creation order
  const moved = (a: string, b: string) => `LEFT JOIN ${b} ON ${a}.id = ${b}.id AND ${a}.class_name = ${b}.class_name AND ${a}.seq = ${b}.seq`;
  const changes = {
    INSERT: `SELECT class_name, data, 1 AS d, 1 AS m FROM new_rows`,
    DELETE: `SELECT class_name, data, -1 AS d, 1 AS m FROM old_rows`,
    UPDATE: `SELECT new_rows.class_name, new_rows.data, 1 AS d, (old_rows.id IS NULL)::int AS m FROM new_rows ${moved('new_rows', 'old_rows')}
      UNION ALL SELECT old_rows.class_name, old_rows.data, -1, (new_rows.id IS NULL)::int FROM old_rows ${moved('old_rows', 'new_rows')}`,
  };
  const apply = (rows: string) => `
    PERFORM pg_advisory_xact_lock_shared(${countLockKey(names)}, hashtext(class_name)) FROM (SELECT DISTINCT class_name FROM (${rows}) c ORDER BY 1) classes;
    INSERT INTO ${stats} AS s (class_name, slot, n, version, moves)
      SELECT class_name, pg_backend_pid() % ${STAT_SLOTS}, sum(d), count(*), sum(m) FROM (${rows}) c GROUP BY class_name ORDER BY class_name
      ON CONFLICT (class_name, slot) DO UPDATE SET n = s.n + EXCLUDED.n, version = s.version + EXCLUDED.version, moves = s.moves + EXCLUDED.moves;
    -- in a fixed order, so that two writers never wait for each other's rows
    FOR delta IN SELECT k.class_name, k.filter, sum(c.d) AS n FROM (${rows}) c JOIN ${counts} k ON k.class_name = c.class_name AND k.conds IS NOT NULL
        WHERE ${matchesSql('c.data', 'k.conds')} GROUP BY 1, 2 HAVING sum(c.d) <> 0 ORDER BY 1, 2 LOOP
      UPDATE ${counts} SET n = n + delta.n WHERE class_name = delta.class_name AND filter = delta.filter;
    END LOOP;`;
  return `CREATE OR REPLACE FUNCTION ${tally(names)}() RETURNS trigger LANGUAGE plpgsql AS $tally$
    DECLARE delta record;
    BEGIN
      IF TG_OP = 'INSERT' THEN ${apply(changes.INSERT)}
      ELSIF TG_OP = 'DELETE' THEN ${apply(changes.DELETE)}
      ELSIF TG_OP = 'UPDATE' THEN ${apply(changes.UPDATE)}
      ELSE
        UPDATE ${stats} SET n = 0, version = version + 1, moves = moves + 1;
        DELETE FROM ${counts};
      END IF;
      RETURN NULL;
    END $tally$`;
}

/** The first key of the advisory locks that order writes of a class against a total becoming maintained. */
export function countLockKey(names: TableNames): string {
  return `hashtext('odbrest count ' || '${names.table.replace(/'/g, "''")}')`;
}

/**
 * Whether the fields `data` match `conds`: a JSON array of conditions that all must hold, each an array
 * of patterns of which `data` must contain one (see `containment` in postgres-sql.ts).
 */
function matchesSql(data: string, conds: string): string {
  return `NOT EXISTS (SELECT 1 FROM jsonb_array_elements(${conds}) a WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(a.value) p WHERE ${data} @> p.value))`;
}
