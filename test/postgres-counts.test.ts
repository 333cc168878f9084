/**
 * Filtered totals that the writes keep up to date (PostgresObjectStore): two services on one table,
 * each with its own pool, answer the exact `~UnfilteredCount` of a large filter while both create and
 * delete objects, without counting the class again.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Service } from '../src/index.js';
import { PostgresObjectStore } from '../stores/postgres.js';
import { call, demoService, login } from './helpers.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from './support/servers.js';

const available = await serverAvailable('PostgreSQL', 'the maintained totals test');
const schema = `odbrest_counts_${RUN_ID}`;
const BERLIN = encodeURIComponent('{"City":"Berlin"}');

describe.runIf(available)('PostgreSQL totals kept by the writes, two services on one table', () => {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  const stores = [0, 1].map(() => new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' }));
  const services: Service[] = [];
  const headers: Record<string, string>[] = [];

  beforeAll(async () => {
    await admin.connect();
    for (const store of stores) {
      const service = await demoService({ store, access: { rules: { Lead: { read: ['*'], create: ['*'], update: ['*'], delete: ['*'] } } } });
      services.push(service);
      headers.push({ sessionId: await login(service) });
    }
    // 3,000 leads straight in SQL (the store's documented columns; its triggers keep the totals), half in Berlin
    await admin.query(`INSERT INTO "${schema}".objects (id, class_name, store_time, data, body)
      SELECT 'LEAD' || lpad(i::text, 4, '0'), 'Lead', 0, f::jsonb, f
      FROM (SELECT i, json_build_object('Name', 'lead ' || i, 'City', CASE WHEN i % 2 = 0 THEN 'Berlin' ELSE 'Hamburg' END)::text AS f
        FROM generate_series(0, 2999) i) rows`);
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await admin.end();
    await dropSchema(schema);
  });

  /** `~UnfilteredCount` of Berlin's leads as instance `n` answers it. */
  const berlin = async (n: number) => {
    const listing = await call(services[n]!, 'GET', `/v1/objects/Lead?query=${BERLIN}&perPage=2`, { headers: headers[n] });
    expect(listing.status, listing.text).toBe(200);
    return listing.body.data['~UnfilteredCount'] as number;
  };
  const counted = async () => Number((await admin.query(`SELECT count(*) FROM "${schema}".objects WHERE class_name = 'Lead' AND data @> '{"City":"Berlin"}'`)).rows[0].count);
  const maintained = async () =>
    (await admin.query(`SELECT n, conds IS NOT NULL AS maintained FROM "${schema}".objects_counts WHERE class_name = 'Lead' AND filter = '{"City":"Berlin"}'`)).rows;
  const create = (n: number, city: string) => call(services[n]!, 'POST', '/v1/object/Lead', { headers: headers[n], json: { Name: 'new', City: city } });
  const remove = (n: number, id: string) => call(services[n]!, 'DELETE', `/v1/object/${id}`, { headers: headers[n] });

  it('counts once, then every create and delete from either service updates the total in its own transaction', { timeout: 60_000 }, async () => {
    expect(await berlin(0)).toBe(1500);
    expect(await maintained()).toEqual([{ n: '1500', maintained: true }]);

    const created = await Promise.all(Array.from({ length: 30 }, (_, i) => create(i % 2, i % 3 === 0 ? 'Hamburg' : 'Berlin')));
    for (const result of created) expect(result.status, result.text).toBe(200);
    const deleted = await Promise.all(Array.from({ length: 20 }, (_, i) => remove(i % 2, `LEAD${String(i * 3).padStart(4, '0')}`)));
    for (const result of deleted) expect(result.status, result.text).toBe(200);
    // 1500 + 20 created in Berlin - 10 of the deleted (every even number among 0, 3, ..., 57)
    expect(await counted()).toBe(1510);
    expect([await berlin(0), await berlin(1)]).toEqual([1510, 1510]);
    expect(await maintained()).toEqual([{ n: '1510', maintained: true }]);
  });

  it('stays exact when the first count races writes from the other service', { timeout: 60_000 }, async () => {
    for (let round = 0; round < 12; round++) {
      await admin.query(`DELETE FROM "${schema}".objects_counts`); // as if never counted
      const writes = Array.from({ length: 8 }, (_, i) => (i % 2 ? create(1, 'Berlin') : create(0, i % 4 ? 'Berlin' : 'Hamburg')));
      const [first] = await Promise.all([berlin(round % 2), ...writes]);
      expect(first).toBeGreaterThanOrEqual(1510);
      const expected = await counted();
      expect([await berlin(0), await berlin(1)], `round ${round}`).toEqual([expected, expected]);
      expect(await maintained(), `round ${round}`).toEqual([{ n: String(expected), maintained: true }]);
    }
  });

  it('answers a listing whose total it cannot remember (the soak saw deadlocks there answered 500)', async () => {
    // the totals table refuses this filter's row, as a deadlock with another listing's clean-up did
    await admin.query(`ALTER TABLE "${schema}".objects_counts ADD CONSTRAINT refuse_kiel CHECK (filter <> '{"City":"Kiel"}')`);
    try {
      await create(0, 'Kiel');
      const listing = await call(services[1]!, 'GET', `/v1/objects/Lead?query=${encodeURIComponent('{"City":"Kiel"}')}`, { headers: headers[1] });
      expect(listing.status, listing.text).toBe(200);
      expect(listing.body.data).toMatchObject({ '~Count': 1, '~UnfilteredCount': 1 });
    } finally {
      await admin.query(`ALTER TABLE "${schema}".objects_counts DROP CONSTRAINT refuse_kiel`);
    }
  });

  it('answers a listing and whether its class holds objects with per-object security in one statement', async () => {
    const statements: string[] = [];
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, ...rest: unknown[]) => {
        statements.push(typeof config === 'string' ? config : (config as { text: string }).text);
        return query(config, ...rest);
      };
    });
    const store = new PostgresObjectStore({ pool, schema, table: 'objects', cache: false });
    try {
      const service = await demoService({ store, access: { rules: { Lead: { read: ['*'], create: ['*'], update: ['*'], delete: ['*'] } } } });
      const own = { sessionId: await login(service) };
      const page = async () => {
        statements.length = 0;
        const listing = await call(service, 'GET', `/v1/objects/Lead?query=${BERLIN}&perPage=2`, { headers: own });
        expect(listing.status, listing.text).toBe(200);
        return listing.body.data['~UnfilteredCount'] as number;
      };
      const total = await counted();
      await page(); // totals remembered
      expect(await page()).toBe(total);
      expect(statements.filter((text) => !/^(BEGIN|COMMIT|ROLLBACK)/.test(text))).toHaveLength(1);
      // a Berlin lead with per-object security that names nobody here: no longer listed, nor counted
      await admin.query(`UPDATE "${schema}".objects SET data = data || '{"_security":[{"name":"nobody","rights":1}]}', body = '{"Name":"hidden","City":"Berlin","_security":[{"name":"nobody","rights":1}]}'
        WHERE id = (SELECT min(id) FROM "${schema}".objects WHERE class_name = 'Lead' AND data @> '{"City":"Berlin"}')`);
      expect(await page()).toBe(total - 1);
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it('answers a page past the matches without looking for its start (the total gates the page in the plan)', async () => {
    const query = { className: 'Lead', where: { City: 'Berlin' }, offset: 100_000, limit: 50 };
    expect(await stores[0]!.find(query)).toMatchObject({ objects: [], total: await counted() });
    const gates: string[] = [];
    const walk = (node: { 'One-Time Filter'?: string; Plans?: unknown[] }) => {
      if (node['One-Time Filter']) gates.push(node['One-Time Filter']);
      for (const child of node.Plans ?? []) walk(child as typeof node);
    };
    walk(((await stores[0]!.explain(query)) as [{ Plan: object }])[0].Plan);
    // the page's scan and the search for its start, each gated by the total
    expect(gates.filter((gate) => gate.includes('> 100000'))).toHaveLength(2);
  });
});
