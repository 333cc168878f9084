/**
 * A run-time declaration's `Indexes` on PostgreSQL (PROTOCOL.md 6.12, issue 43 item 1): the indexes are
 * built with CREATE INDEX CONCURRENTLY, so writes to the class go on while they build (held up here by
 * a transaction holding SHARE UPDATE EXCLUSIVE on the table, the lock every index build needs and
 * writes do not: a plain CREATE INDEX would queue for SHARE and every write would queue behind it);
 * once built, listings of the class filter and order through them; a build that was interrupted is
 * dropped and built again, and building again is a no-op.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresObjectStore } from '../stores/postgres.js';
import { call, demoService, login } from './helpers.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from './support/servers.js';

const available = await serverAvailable('PostgreSQL', 'the PostgreSQL declared index test');
const schema = `odbrest_declared_idx_${RUN_ID}`;
const TICKETS = 3000;

/** `promise`, or a failure naming `what` once `ms` passed (a write that hangs fails the test instead of stalling it). */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} still waiting after ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Asks `probe` again until it answers something other than `undefined` (at most about 20 s). */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const found = await probe();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: not seen within 20 s`);
}

/** The names of the index scans in a plan (EXPLAIN, JSON format). */
function indexesUsed(plan: unknown): string[] {
  const found: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (typeof node === 'object' && node !== null) {
      const record = node as Record<string, unknown>;
      if (typeof record['Index Name'] === 'string') found.push(record['Index Name']);
      Object.values(record).forEach(visit);
    }
  };
  visit(plan);
  return found;
}

describe.runIf(available)('indexes of a run-time declaration on PostgreSQL', () => {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  /** Holds the lock in a transaction of its own (in a transaction, pg_stat_activity would answer one snapshot throughout). */
  const holder = new pg.Client({ connectionString: DATABASE_URL });
  const stores: PostgresObjectStore[] = [];
  const open = () => {
    const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
    stores.push(store);
    return store;
  };
  /** The indexes of the table over Ticket rows: name, whether valid, definition. */
  const ticketIndexes = async () =>
    (
      await admin.query<{ name: string; valid: boolean; definition: string }>(
        `SELECT c.relname AS name, i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) AS definition FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE i.indrelid = to_regclass($1) AND pg_get_expr(i.indpred, i.indrelid) LIKE '%Ticket%' ORDER BY 1`,
        [`"${schema}".objects`],
      )
    ).rows;

  beforeAll(() => Promise.all([admin.connect(), holder.connect()]));
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await Promise.all([admin.end(), holder.end()]);
    await dropSchema(schema);
  });

  it('builds them without blocking writes to the class, then listings filter and order through them', { timeout: 120_000 }, async () => {
    const store = open();
    const service = await demoService({ store, users: { admins: 'admins' } });
    const alice = await login(service, 'alice'); // in group admins
    const as = (method: string, path: string, json?: unknown) => call(service, method, path, { headers: { sessionId: alice }, json });
    await admin.query(`INSERT INTO "${schema}".objects (id, class_name, store_time, data, body)
      SELECT 'T' || i, 'Ticket', 1767225600000, f::jsonb, f FROM (SELECT i, json_build_object('Title', 'ticket ' || i, 'Priority', i % 5 + 1)::text AS f
        FROM generate_series(1, ${TICKETS}) i) r`);
    await admin.query(`ANALYZE "${schema}".objects`);

    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE "${schema}".objects IN SHARE UPDATE EXCLUSIVE MODE`);
    try {
      const declaration = { Fields: { Title: { Type: 'string', Required: true }, Priority: { Type: 'integer', Min: 1, Max: 5 } }, Indexes: ['Priority'], Access: { read: ['*'], create: ['admins'], update: ['admins'], delete: ['admins'] } };
      const declared = await as('PUT', '/v1/model/classes/Ticket', declaration);
      expect(declared.status).toBe(200);
      // the build has started and waits for the table: for SHARE UPDATE EXCLUSIVE, which writes pass, never for SHARE
      const waiting = await eventually('an index build waiting for the table', async () => {
        const { rows } = await admin.query<{ mode: string; query: string }>(
          `SELECT l.mode, a.query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.relation = to_regclass($1) AND NOT l.granted`,
          [`"${schema}".objects`],
        );
        return rows.length > 0 ? rows : undefined;
      });
      expect(waiting).toEqual([{ mode: 'ShareUpdateExclusiveLock', query: expect.stringMatching(/^CREATE INDEX CONCURRENTLY/) }]);

      // writes to the class go on meanwhile: create, change, list, each checked against the declaration
      const created = await within(20_000, 'a create while the index builds', as('POST', '/v1/object/Ticket', { Title: 'written while building', Priority: 4 }));
      expect(created.body.status.internalStatus).toBe('0');
      const id = created.body.data['~ObjectID'];
      const changed = await within(20_000, 'an update while the index builds', as('PATCH', `/v1/object/${id}`, { Priority: 5 }));
      expect(changed.body.status.internalStatus).toBe('0');
      expect((await within(20_000, 'a refused write while the index builds', as('PATCH', `/v1/object/${id}`, { Priority: 9 }))).status).toBe(400);
      expect((await ticketIndexes()).every((index) => !index.valid)).toBe(true);
    } finally {
      await holder.query('COMMIT');
    }

    await within(60_000, 'the index build', store.ensureIndex('Ticket', 'Priority')); // the build the declaration started, settled once listings use it
    const indexes = await ticketIndexes();
    expect(indexes.map(({ valid }) => valid)).toEqual([true, true]);
    const [equality, order] = [indexes.find(({ definition }) => !definition.includes('CASE'))!, indexes.find(({ definition }) => definition.includes('CASE'))!];
    expect(equality.definition).toMatch(/USING btree \(\(+data -> 'Priority'::text\)+, seq\) WHERE \(class_name = 'Ticket'::text\)$/);

    const byPriority = await store.explain({ className: 'Ticket', where: { Priority: 3 }, limit: 20 });
    expect(indexesUsed(byPriority)).toContain(equality.name);
    const ordered = await store.explain({ className: 'Ticket', orderBy: { field: 'Priority', descending: true }, limit: 20 });
    expect(indexesUsed(ordered)).toContain(order.name);

    // and the answers through the service are those of the rows
    const listing = await as('GET', `/v1/objects/Ticket?perPage=3&orderBy=-Priority&query=${encodeURIComponent('{"Priority":5}')}`);
    expect(listing.body.data['~Elements'].map((object: { Title: string }) => object.Title)).toEqual(['ticket 4', 'ticket 9', 'ticket 14']);
    expect(listing.body.data['~UnfilteredCount']).toBe(TICKETS / 5 + 1); // and the one written while building
    const top = await as('GET', '/v1/objects/Ticket?perPage=2&orderBy=-Priority');
    expect(top.body.data['~Elements'].map((object: { Priority: number }) => object.Priority)).toEqual([5, 5]);
  });

  it('builds them again after an interrupted build, and once only however often it is asked', { timeout: 120_000 }, async () => {
    const before = await ticketIndexes();
    expect(before).toHaveLength(2);
    // an index as a cancelled CREATE INDEX CONCURRENTLY leaves it: there, but invalid
    await admin.query(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = to_regclass($1)`, [`"${schema}"."${before[0]!.name}"`]);
    const [a, b] = [open(), open()];
    await within(60_000, 'the builds of two stores', Promise.all([a.ensureIndex('Ticket', 'Priority'), b.ensureIndex('Ticket', 'Priority'), a.ensureIndex('Ticket', 'Priority')]));
    expect(await ticketIndexes()).toEqual(before.map((index) => ({ ...index, valid: true })));
    expect(indexesUsed(await b.explain({ className: 'Ticket', where: { Priority: 2 }, limit: 5 }))).toContain(before.find(({ definition }) => !definition.includes('CASE'))!.name);
  });
});
