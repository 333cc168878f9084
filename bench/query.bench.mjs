// Query text (issue 24, PROTOCOL.md 6.2): the same listing of 100,000 customers asked by query text
// (`query={"queryString": ...}`) and by the JSON filter, through service.fetch, on the memory store
// and on PostgreSQL (the store indexes `City` with `indexedFields`); first and deep pages, an indexed
// and an unindexed field, an `or` and a `like`.
// - query text against the JSON filter (target <= 1.1): what parsing and compiling the text adds;
//   on PostgreSQL also with `City` declared a string (schema): its `=` is then plain equality, served
//   by the field's btree like the JSON filter, not by the GIN index of all fields (issue 35);
// - PostgreSQL: the store's page and total (PostgresObjectStore.find with the text's filter) against
//   the same page and count in one hand-written statement straight through `pg` on the same table
//   (target <= 1.5).
// Answers are checked first: text and JSON alike, memory and PostgreSQL alike, store and raw SQL alike.
import pg from 'pg';
import { createService } from '../dist/index.js';
import { PostgresObjectStore } from '../dist/postgres.js';
import { alternatingMedians, APP_KEY, customer, demoData, loginAlice, seedCustomers } from './common.mjs';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
const COUNT = 100_000;
const DECLARED = 'postgres, City declared a string,';
const RUNS = Number(process.env.QUERY_BENCH_RUNS ?? 31);

/** The filters the query texts compile to (src/query/parse.ts), for the store's own rows. */
const COMPILED = {
  'City = "Berlin"': { City: { $eq: 'Berlin' } },
  'Revenue >= 50000': { Revenue: { $gte: 50000 } },
  'City = "Berlin" or City = Hamburg': { $or: [{ City: { $eq: 'Berlin' } }, { City: { $eq: 'Hamburg' } }] },
  'Name like "customer 1*"': { Name: { $like: 'customer 1*' } },
};

/** label, query text, the JSON filter that selects the same objects, the raw SQL condition, page. */
const CASES = [
  ['indexed field (City), first page', 'City = "Berlin"', { City: 'Berlin' }, `"f_City" = '"Berlin"'::jsonb`, 0],
  ['indexed field (City), page 100', 'City = "Berlin"', { City: 'Berlin' }, `"f_City" = '"Berlin"'::jsonb`, 100],
  ['unindexed field (Revenue), first page', 'Revenue >= 50000', { Revenue: { $gte: 50000 } }, `(data -> 'Revenue')::numeric >= 50000`, 0],
  ['unindexed field (Revenue), page 100', 'Revenue >= 50000', { Revenue: { $gte: 50000 } }, `(data -> 'Revenue')::numeric >= 50000`, 100],
  ['or (City), first page', 'City = "Berlin" or City = Hamburg', { City: { $in: ['Berlin', 'Hamburg'] } }, `"f_City" IN ('"Berlin"'::jsonb, '"Hamburg"'::jsonb)`, 0],
  ['or (City), page 100', 'City = "Berlin" or City = Hamburg', { City: { $in: ['Berlin', 'Hamburg'] } }, `"f_City" IN ('"Berlin"'::jsonb, '"Hamburg"'::jsonb)`, 100],
  ['like (Name), first page', 'Name like "customer 1*"', { Name: { $prefix: 'Customer 1' } }, `lower(data ->> 'Name') LIKE 'customer 1%'`, 0],
  ['like (Name), page 100', 'Name like "customer 1*"', { Name: { $prefix: 'Customer 1' } }, `lower(data ->> 'Name') LIKE 'customer 1%'`, 100],
];

const customers = () => Array.from({ length: COUNT }, (_, i) => ({ '~ClassName': 'Customer', '~ObjectID': `CUS${String(i).padStart(6, '0')}`, ...customer(i) }));

async function lister(service) {
  const headers = { appkey: APP_KEY, sessionid: await loginAlice(service) };
  return async (query, page) => {
    const url = `http://bench/v1/objects/Customer?perPage=50&page=${page}&query=${encodeURIComponent(JSON.stringify(query))}`;
    const response = await service.fetch(new Request(url, { headers }));
    const body = await response.json();
    if (body.status.internalStatus !== '0') throw new Error(`listing failed: ${JSON.stringify(body.status)}`);
    return body.data;
  };
}

const ids = (data) => JSON.stringify([data['~Count'], data['~UnfilteredCount'], data['~Elements'].map((o) => o['~ObjectID'])]);

export default async function bench() {
  const rows = [];
  const services = { memory: createService({ data: { objects: [...demoData().objects, ...customers()] }, users: { passwordIterations: 1 } }) };
  await services.memory.ready;

  const admin = new pg.Client({ connectionString: DATABASE_URL });
  let postgres;
  try {
    await admin.connect();
    postgres = { schema: `odbrest_qbench_${RUN}` };
  } catch {
    rows.push({ name: 'PostgreSQL: skipped', value: 'PostgreSQL unreachable', unit: '' });
  }
  const raw = postgres && new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  try {
    if (postgres) {
      postgres.store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema: postgres.schema, table: 'objects', indexedFields: ['City'] });
      services.postgres = createService({ store: postgres.store, data: demoData(), users: { passwordIterations: 1 } });
      await services.postgres.ready;
      await seedCustomers(admin, postgres.schema, COUNT); // the same customers, after the demo's, in SQL
      // the same store, City declared: query text's "=" on it compiles to plain equality
      services[DECLARED] = createService({ store: postgres.store, schema: { Customer: { fields: { City: 'string' } } }, users: { passwordIterations: 1 } });
      await services[DECLARED].ready;
    }
    const list = {};
    for (const [name, service] of Object.entries(services)) list[name] = await lister(service);

    for (const [label, text, json, condition, page] of CASES) {
      const answers = {};
      for (const [name, of] of Object.entries(list)) {
        if (name === DECLARED && !text.includes('City')) continue;
        const [byText, byJson] = [await of({ queryString: text }, page), await of(json, page)];
        if (ids(byText) !== ids(byJson)) throw new Error(`${label}: query text and JSON filter answer differently on ${name}`);
        answers[name] = ids(byText);
        const [textMs, jsonMs] = await alternatingMedians([() => of({ queryString: text }, page), () => of(json, page)], RUNS);
        rows.push({ name: `${name} listing of ${COUNT.toLocaleString('en')}, ${label}: query text, p50 (reference: JSON filter)`, value: textMs, unit: 'ms', reference: jsonMs, ratio: textMs / jsonMs, target: '<= 1.1' });
      }
      if (!postgres) continue;
      if (answers.memory !== answers.postgres || (answers[DECLARED] ?? answers.postgres) !== answers.postgres) throw new Error(`${label}: the memory and PostgreSQL services answer differently`);
      // the store's page and total against the same page and count straight through pg
      const t = `"${postgres.schema}".objects`;
      const sql = `SELECT (SELECT count(*) FROM ${t} WHERE class_name = 'Customer' AND ${condition}) AS total, p.id, p.body
        FROM (SELECT id, body, seq FROM ${t} WHERE class_name = 'Customer' AND ${condition} ORDER BY seq LIMIT 50 OFFSET ${page * 50}) p ORDER BY p.seq`;
      const where = COMPILED[text];
      const find = () => postgres.store.find({ className: 'Customer', where, offset: page * 50, limit: 50 });
      const direct = () => raw.query(sql);
      const [found, rawRows] = [await find(), (await direct()).rows];
      if (found.total !== Number(rawRows[0]?.total ?? 0) || JSON.stringify(found.objects.map((o) => o.id)) !== JSON.stringify(rawRows.map((r) => r.id))) {
        throw new Error(`${label}: the store and the raw SQL answer differently`);
      }
      const [findMs, rawMs] = await alternatingMedians([find, direct], RUNS);
      rows.push({ name: `PostgreSQL store, ${label} (query text's filter), page and total, p50 (reference: the same through pg)`, value: findMs, unit: 'ms', reference: rawMs, ratio: findMs / rawMs, target: '<= 1.5' });
    }
    if (postgres) {
      // $text (seFulltext): the trigram index against reading the rows (the index dropped)
      const text = () => postgres.store.find({ className: 'Customer', where: { $text: 'customer 4321' }, limit: 50 });
      const t = `"${postgres.schema}".objects`;
      const before = await text();
      const [indexed] = await alternatingMedians([text], 11);
      await admin.query(`DROP INDEX "${postgres.schema}".objects_text`);
      const [scanned] = await alternatingMedians([text], 5);
      if (JSON.stringify((await text()).objects) !== JSON.stringify(before.objects)) throw new Error('$text answers differently without its index');
      rows.push({ name: `PostgreSQL $text "customer 4321" over ${COUNT.toLocaleString('en')}, pg_trgm index, p50 (reference: no index)`, value: indexed, unit: 'ms', reference: scanned, ratio: indexed / scanned });
      void t;
    }
  } finally {
    if (postgres) {
      await postgres.store?.close();
      await raw.end();
      await admin.query(`DROP SCHEMA IF EXISTS "${postgres.schema}" CASCADE`);
      await admin.end();
    }
  }
  return rows;
}
