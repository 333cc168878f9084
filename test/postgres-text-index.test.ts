/**
 * `$text` on PostgreSQL without its trigram index (a store told not to use `pg_trgm`): the rows are
 * read, with the same answers; and the index on a table that already holds rows is built after start
 * with CREATE INDEX CONCURRENTLY: a start does not wait for it and writes go through while it builds
 * (held up here by a transaction holding the lock every index build needs, which writes do not).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresObjectStore } from '../stores/postgres.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from './support/servers.js';

const available = await serverAvailable('PostgreSQL', 'the PostgreSQL $text index test');
const schema = `odbrest_text_${RUN_ID}`;

/** `promise`, or a failure naming `what` once `ms` passed (a hang fails the test instead of stalling it). */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} still waiting after ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe.runIf(available)('PostgresObjectStore $text and its trigram index', () => {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  const stores: PostgresObjectStore[] = [];
  const open = (table: string, textIndex?: boolean) => {
    const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table, textIndex });
    stores.push(store);
    return store;
  };
  const indexState = async (table: string) =>
    (await admin.query<{ valid: boolean }>(`SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)`, [`"${schema}"."${table}_text"`])).rows[0]?.valid ?? 'absent';
  const names = (result: { objects: Array<{ fields: Record<string, unknown> }> }) => result.objects.map((object) => object.fields.Name).sort();

  beforeAll(() => admin.connect());
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await admin.end();
    await dropSchema(schema);
  });

  it('without pg_trgm (textIndex: false) $text reads the rows: every word, any case, string fields only', async () => {
    const store = open('plain', false);
    for (const [Name, City, _note] of [['Hansen', 'Hamburg', 'x'], ['Berg', 'Kiel', 'hamburg'], ['hamburger', 'Bremen', 'x'], ['Ham', 'Burg', 'x']] as const) {
      await store.put({ className: 'Customer', fields: { Name, City, _note, Number: 7 } });
    }
    expect(names(await store.find({ className: 'Customer', where: { $text: 'HAMBURG' } }))).toEqual(['Hansen', 'hamburger']);
    expect(names(await store.find({ className: 'Customer', where: { $text: 'ham burg' } }))).toEqual(['Ham', 'Hansen', 'hamburger']);
    expect(await store.count('Customer', { $text: '7' })).toBe(0); // numbers are not searchable text
    expect(await indexState('plain')).toBe('absent');
    const plan = await admin.query(`EXPLAIN SELECT 1 FROM "${schema}".plain WHERE "${schema}".plain_text(data) LIKE '%hamburg%'`);
    expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/Seq Scan on plain/);
  });

  it('on a table holding rows the index is built after start, concurrently: the start and writes do not wait for it', { timeout: 120_000 }, async () => {
    const before = open('filled', false);
    await before.count('Customer'); // creates the table
    await admin.query(`DROP INDEX IF EXISTS "${schema}".filled_text`); // as a table made before the index was
    await admin.query(`INSERT INTO "${schema}".filled (id, class_name, store_time, data, body)
      SELECT 'C' || i, 'Customer', 0, f::jsonb, f FROM (SELECT i, json_build_object('Name', 'name ' || i, 'City', 'city ' || (i % 10))::text AS f FROM generate_series(1, 2000) i) r`);
    await before.close();
    stores.splice(stores.indexOf(before), 1);

    // Every index build takes at least SHARE UPDATE EXCLUSIVE on the table (CREATE INDEX in a
    // transaction takes SHARE, which also blocks writes); writes take ROW EXCLUSIVE, which this lock lets through.
    await admin.query('BEGIN');
    await admin.query(`LOCK TABLE "${schema}".filled IN SHARE UPDATE EXCLUSIVE MODE`);
    const store = open('filled');
    try {
      const written = await within(20_000, 'the first write after start', store.put({ className: 'Customer', fields: { Name: 'written while building', City: 'Kiel' } }));
      expect((await store.get(written.id))?.fields.Name).toBe('written while building');
      expect(names(await within(20_000, 'a $text listing', store.find({ className: 'Customer', where: { $text: 'WHILE build' } })))).toEqual(['written while building']);
      expect(await store.count('Customer', { $text: 'name 199' })).toBe(12); // 199, 1199, 1990-1999
      expect(await indexState('filled')).not.toBe(true);
    } finally {
      await admin.query('COMMIT');
    }
    // once nothing holds the lock, the build finishes
    for (let i = 0; i < 200 && (await indexState('filled')) !== true; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await indexState('filled')).toBe(true);
    expect(await store.count('Customer', { $text: 'name 199' })).toBe(12);
  });

  it('an index a failed build left invalid is dropped and built again at the next start', { timeout: 60_000 }, async () => {
    const first = open('again');
    await first.put({ className: 'Customer', fields: { Name: 'x' } });
    // an invalid index as a cancelled CREATE INDEX CONCURRENTLY leaves it
    await admin.query(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = to_regclass($1)`, [`"${schema}"."again_text"`]);
    expect(await indexState('again')).toBe(false);
    const second = open('again');
    expect(await second.count('Customer', { $text: 'x' })).toBe(1);
    for (let i = 0; i < 200 && (await indexState('again')) !== true; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await indexState('again')).toBe(true);
  });
});
