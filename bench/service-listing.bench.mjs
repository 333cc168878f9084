// Listings through the service (issue 30, target 3): `GET /v1/objects/Customer` through service.fetch
// with alice's plain session and the demo's class rules, each page as a ratio against the least the
// same answer costs without odbrest, in alternating rounds:
// - in memory (300 customers of the demo, and 100,000 customers beside the demo's other objects, pages
//   of 50): the store's find of the page plus one JSON.stringify of the same envelope (target <= 1.5);
//   and, beside it, a bare fetch handler doing the same find and stringify inside the same
//   Request/Response round (the web objects' share);
// - the first page of 50 of 100,000 customers (issue 42): CPU per request of this process with the
//   memory store against the same listing with the PostgreSQL store below (target <= 0.5; the
//   PostgreSQL server's own CPU is not counted, so the reference is the least it could be), and the p50 of each;
// - on PostgreSQL (100,000 customers, `indexedFields` City and Revenue): every statement the store runs
//   for the listing, recorded from its connections and replayed as recorded through `pg` on a pool of
//   its own (target <= 1.3), for the pages of the peer bench and descending orders served by the index.
// DATABASE_URL chooses the server; without PostgreSQL the in-memory rows are still printed.
import pg from 'pg';
import { createService, importObjects, MemoryObjectStore } from '../dist/index.js';
import { PostgresObjectStore } from '../dist/postgres.js';
import { demoAccess } from '../examples/demo-access.mjs';
import { alternatingMedians, alternatingRates, APP_KEY, customer, demoData, loginAlice, seedCustomers } from './common.mjs';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
const COUNT = 100_000;
const ROUNDS = 301;

/** The demo's class rules without its `authorize` (which narrows per object, so every match is asked). */
const demoRules = { rules: demoAccess.rules };

/** `GET path` through the service as alice, checked; answers the text. */
async function lister(service) {
  const headers = { appkey: APP_KEY, sessionId: await loginAlice(service) };
  return async (path) => {
    const response = await service.fetch(new Request(`http://bench${path}`, { headers }));
    const text = await response.text();
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${text.slice(0, 200)}`);
    return text;
  };
}

/**
 * The objects of the PostgreSQL rows in the memory store's import form: the demo's without its
 * customers, the 40 account managers the customers reference, then `COUNT` customers (`seedCustomers`' ids).
 */
function manyCustomers() {
  const objects = demoData().objects.filter((object) => object['~ClassName'] !== 'Customer');
  const taken = new Set(objects.map((object) => object['~ObjectID']));
  for (let i = 0; i < 40; i++) {
    const id = `EMP${String(i).padStart(5, '0')}`;
    if (!taken.has(id)) objects.push({ '~ClassName': 'Employee', '~ObjectID': id, Name1: `Manager ${i}`, Name2: 'Example' });
  }
  for (let i = 0; i < COUNT; i++) objects.push({ '~ClassName': 'Customer', '~ObjectID': `CUS${String(i).padStart(6, '0')}`, ...customer(i) });
  return { objects };
}

/** A service on a memory store holding `data`, ready. */
async function memoryService(data, access = demoRules) {
  const store = new MemoryObjectStore();
  const service = createService({ store, data, access, users: { passwordIterations: 1 } });
  await service.ready;
  return { store, service };
}

async function inMemory(data, size) {
  const rows = [];
  for (const [rules, access] of [
    ['class rules', demoRules],
    ['class rules and the demo authorize (asked per object)', demoAccess],
  ]) {
    const { store, service } = await memoryService(data(), access);
    const list = await lister(service);
    for (const [label, query, path] of [
      ['first page', { limit: 50 }, '/v1/objects/Customer'],
      ['page 3, ordered by Revenue descending', { orderBy: { field: 'Revenue', descending: true }, offset: 150, limit: 50 }, '/v1/objects/Customer?page=3&orderBy=-Revenue'],
    ]) {
      const envelope = JSON.parse(await list(path));
      const find = () => store.find({ className: 'Customer', ...query });
      const ids = (await find()).objects.map((object) => object.id);
      if (JSON.stringify(ids) !== JSON.stringify(envelope.data['~Elements'].map((element) => element['~ObjectID']))) throw new Error(`${label}: the service's page differs from the store's`);
      const floor = async () => (await find()).objects.length + JSON.stringify(envelope).length;
      const headers = { 'content-type': 'application/json; charset=utf-8' };
      const bare = async (request) => {
        await find();
        return new Response(JSON.stringify(envelope), { headers });
      };
      const bareRound = async () => (await bare(new Request(`http://bench${path}`, { headers: { appkey: APP_KEY } }))).text();
      const [service_, floorMs, bareMs] = await alternatingMedians([() => list(path), floor, bareRound], ROUNDS);
      const name = `memory store listing through service.fetch (${rules}), ${size}, ${label} of 50, p50`;
      rows.push({ name: `${name} (reference: the store's find + JSON.stringify of the envelope)`, value: service_ * 1000, unit: 'µs', reference: floorMs * 1000, ratio: service_ / floorMs, target: '<= 1.5' });
      rows.push({ name: `${name} (reference: a bare fetch handler, same find and stringify)`, value: service_ * 1000, unit: 'µs', reference: bareMs * 1000, ratio: service_ / bareMs });
    }
  }
  return rows;
}

const PG_CASES = [
  ['first page, no filter', ''],
  ['page 1000 (skip 50,000), no filter', 'page=1000'],
  ['first page, 10% equality filter', 'query={"City":"Berlin"}'],
  ['page 100 (skip 5,000), 10% equality filter', 'query={"City":"Berlin"}&page=100'],
  ['first page, 10% equality filter, ordered by a number field', 'query={"City":"Berlin"}&orderBy=Revenue'],
  ['first page, ordered by a number field descending', 'orderBy=-Revenue'],
  ['first page, 10% equality filter, ordered by a number field descending', 'query={"City":"Berlin"}&orderBy=-Revenue'],
  ['first page, ordered by a number field, reversed', 'orderBy=Revenue&reverseOrder=true'],
];

async function onPostgres(admin, rates) {
  const rows = [];
  const schema = `odbrest_bench_${RUN}`;
  // the store's own pool, whose connections record what the store sends while `recording`
  let recording;
  const storePool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  storePool.on('connect', (client) => {
    const query = client.query.bind(client);
    client.query = (config, ...rest) => {
      if (recording && typeof config === 'object') recording.push({ name: config.name, text: config.text, values: config.values });
      return query(config, ...rest);
    };
  });
  const replayPool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  const store = new PostgresObjectStore({ pool: storePool, schema, table: 'objects', indexedFields: ['City', 'Revenue'] });
  try {
    await store.count('Customer'); // creates the tables
    await seedCustomers(admin, schema, COUNT);
    const demo = demoData().objects.filter((object) => object['~ClassName'] !== 'Customer');
    await importObjects(store, { objects: demo }, 1);
    // the 40 account managers the customers reference (the demo has three of them)
    for (let i = 0; i < 40; i++) {
      const id = `EMP${String(i).padStart(5, '0')}`;
      if (!(await store.get(id))) await store.put({ id, className: 'Employee', fields: { Name1: `Manager ${i}`, Name2: 'Example' } });
    }
    const service = createService({ store, access: demoRules, users: { passwordIterations: 1 } });
    await service.ready;
    const list = await lister(service);
    // the same table through a store whose cache of objects read by id never waits for the change
    // feed (`consistency: 'eventual'`): against the default `session`, whose reads of a session that
    // never wrote wait for nothing either (`strong` would wait one round trip per level of references)
    const eventualStore = new PostgresObjectStore({ pool: storePool, schema, table: 'objects', indexedFields: ['City', 'Revenue'], cache: { consistency: 'eventual' } });
    const eventual = createService({ store: eventualStore, access: demoRules, users: { passwordIterations: 1 } });
    await eventual.ready;
    const listEventual = await lister(eventual);
    const [roundTrip] = await alternatingMedians([() => replayPool.query('SELECT 1')], 101);
    rows.push({ name: 'PostgreSQL round trip through pg (SELECT 1), p50', value: roundTrip, unit: 'ms' });
    rows.push(...(await memoryAgainstPostgres(list, rates)));
    for (const [label, parameters] of PG_CASES) {
      const path = `/v1/objects/Customer?${encodeURI(parameters)}`;
      await list(path); // warm: totals cached, page starts learned, references cached
      recording = [];
      await list(path);
      const recorded = recording;
      recording = undefined;
      // the listing's statement (page and total in one); the others (the per-object security check's
      // count, asked beside it) are odbrest's own work
      const statements = recorded.filter((statement) => statement.text.includes('LEFT JOIN LATERAL'));
      if (statements.length !== 1) throw new Error(`${label}: ${statements.length} listing statements recorded`);
      // replayed as recorded (a named one prepared alike)
      const replay = async () => (await replayPool.query(statements[0])).rows.length;
      await replay();
      await listEventual(path);
      const [serviceMs, replayMs, eventualMs] = await alternatingMedians([() => list(path), replay, () => listEventual(path)], 101);
      rows.push({
        name: `PostgreSQL listing of ${COUNT.toLocaleString('en')} customers through service.fetch, ${label}, p50 (reference: the store's listing statement replayed through pg; ${recorded.length - 1} more statement(s) beside it)`,
        value: serviceMs,
        unit: 'ms',
        reference: replayMs,
        ratio: serviceMs / replayMs,
        target: '<= 1.3',
      });
      rows.push({ name: `PostgreSQL listing, ${label}, the object cache's consistency 'eventual' (reference: the same statement replayed)`, value: eventualMs, unit: 'ms', reference: replayMs, ratio: eventualMs / replayMs });
    }
    await eventualStore.close();
    for (const [label, query] of [
      ['ordered by a number field descending', { orderBy: { field: 'Revenue', descending: true }, limit: 50 }],
      ['10% equality filter, ordered by a number field descending', { where: { City: 'Berlin' }, orderBy: { field: 'Revenue', descending: true }, limit: 50 }],
    ]) {
      // below the final sort of the (at most 51) rows of the page: the index's order, ties (creation order) put right by an Incremental Sort
      const nodes = [];
      const walk = (node) => {
        nodes.push(`${node['Node Type']}${node['Index Name'] ? ` on ${node['Index Name']}` : ''}${node['Scan Direction'] ? ` ${node['Scan Direction']}` : ''}`);
        for (const child of node.Plans ?? []) walk(child);
      };
      walk((await store.explain({ className: 'Customer', ...query }))[0].Plan);
      const page = nodes.slice(1).filter((node) => /Sort|Index Scan on objects_o_/.test(node)).join(' < ');
      rows.push({ name: `PostgreSQL listing, ${label}: the page's plan (a full Sort would mean no index order)`, value: page, unit: '' });
    }
  } finally {
    await store.close();
    await storePool.end();
    await replayPool.end();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
  return rows;
}

/**
 * The first page of 50 of the same 100,000 customers through a service on the memory store and
 * through `listPostgres` (a service on the PostgreSQL store): CPU per request of this process, in
 * alternating rounds, and the p50 of each. The pages are checked alike first.
 */
async function memoryAgainstPostgres(listPostgres, rates) {
  const { service } = await memoryService(manyCustomers());
  const listMemory = await lister(service);
  const path = '/v1/objects/Customer';
  const page = (text) => {
    const { data } = JSON.parse(text);
    return JSON.stringify([data['~UnfilteredCount'], data['~Elements'].map((element) => element['~ObjectID'])]);
  };
  if (page(await listMemory(path)) !== page(await listPostgres(path))) throw new Error('first page of 100,000: the memory store answers another page than PostgreSQL');
  const { cpu } = await alternatingRates(rates, () => listPostgres(path), () => listMemory(path), { rounds: 9, ms: 500 });
  const [memoryMs, postgresMs] = await alternatingMedians([() => listMemory(path), () => listPostgres(path)], 301);
  const count = COUNT.toLocaleString('en');
  return [
    {
      name: `first page of 50 of ${count} customers through service.fetch, memory store, CPU per request of this process (reference: the PostgreSQL store's, its server's CPU not counted)`,
      value: 1e6 / cpu.b,
      unit: 'µs',
      reference: 1e6 / cpu.a,
      ratio: cpu.ratio,
      target: '<= 0.5',
    },
    { name: `first page of 50 of ${count} customers through service.fetch, memory store, p50 (reference: the PostgreSQL store's)`, value: memoryMs, unit: 'ms', reference: postgresMs, ratio: memoryMs / postgresMs },
  ];
}

export default async function bench({ rates }) {
  const rows = [];
  if (process.env.LISTING_BENCH !== 'postgres') {
    rows.push(...(await inMemory(demoData, "the demo's 300 customers")));
    rows.push(...(await inMemory(manyCustomers, `${COUNT.toLocaleString('en')} customers`)));
  }
  if (process.env.LISTING_BENCH === 'memory') return rows;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  try {
    await admin.connect();
  } catch {
    return [...rows, { name: 'PostgreSQL listings: skipped', value: 'PostgreSQL unreachable', unit: '' }];
  }
  try {
    return [...rows, ...(await onPostgres(admin, rates))];
  } finally {
    await admin.end();
  }
}
