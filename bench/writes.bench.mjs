// Writes and filtered listings (issue 13), through `service.fetch` with alice's plain session and the
// demo's access rules:
//   - creates per second (`POST /v1/object/Customer`) and updates per second (`PATCH
//     /v1/object/{id}` of one field, without ~StoreTime) on the memory and the PostgreSQL store, each
//     against a bare `store.put` of the same objects on the same store, in alternating rounds;
//   - the p50 of a filtered, ordered page of 50 from 100,000 customers in PostgreSQL (`City` equal to
//     one of 10 cities, ordered by `Revenue`), through `service.fetch` and through `store.find` (the
//     store declaring both fields as `indexedFields`), and through a store on the same table without them,
//     against the same page and total straight through `pg` on a table with a column per field and
//     the best btree index (the floor of bench/postgres-listing.bench.mjs).
// DATABASE_URL chooses the server; without one the PostgreSQL rows say so.
import pg from 'pg';
import { createService, importObjects, MemoryObjectStore } from '../dist/index.js';
import { PostgresObjectStore } from '../dist/postgres.js';
import { demoAccess } from '../examples/demo-access.mjs';
import { alternatingMedians, alternatingRates, APP_KEY, customer, demoData, floorPage, loginAlice, seedCustomers } from './common.mjs';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
const COUNT = 100_000;
/** Customers the update loops change in turn. */
const UPDATED = 200;

/** The demo without its customers (a listing bench's class holds only its own), on `store`. */
const demoWithoutCustomers = () => ({ objects: demoData().objects.filter((object) => object['~ClassName'] !== 'Customer') });

/** A customer's fields as a client writes them: the reference as `{"~ObjectID": ...}` (EMP00001, which exists). */
const written = (i) => ({ ...customer(i), AccountManager: { '~ObjectID': 'EMP00001' } });
const stored = (i) => ({ ...customer(i), AccountManager: { $ref: 'EMP00001' } });

/** A service on `store` (demo users seeded) with alice's session; `send(method, path, json)` checks for `"0"`. */
async function serviceOn(store) {
  await importObjects(store, demoWithoutCustomers(), 1000);
  const service = createService({ store, access: demoAccess, users: { passwordIterations: 1000 } });
  await service.ready;
  const headers = { appkey: APP_KEY, sessionId: await loginAlice(service), 'content-type': 'application/json' };
  const send = async (method, path, json) => {
    const response = await service.fetch(new Request(`http://bench${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) }));
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 200)}`);
    return text;
  };
  return { service, send };
}

/** Creates and updates through the service against bare puts on its store. */
async function writeRows(rates, label, store, { concurrency }) {
  const { send } = await serviceOn(store);
  let n = 0;
  const ids = [];
  for (let i = 0; i < UPDATED; i++) ids.push((await store.put({ className: 'Customer', fields: stored(i) })).id);
  const create = () => send('POST', '/v1/object/Customer', written(n++));
  const put = () => store.put({ className: 'Customer', fields: stored(n++) });
  const creates = await alternatingRates(rates, create, put, { concurrency });
  let k = 0;
  const update = () => send('PATCH', `/v1/object/${ids[k++ % UPDATED]}`, { Revenue: k });
  const replace = () => {
    const i = k++ % UPDATED;
    return store.put({ id: ids[i], className: 'Customer', fields: { ...stored(i), Revenue: k } });
  };
  const updates = await alternatingRates(rates, update, replace, { concurrency });
  const row = (what, { a, b, ratio }, reference) => ({ name: `${what} through service.fetch, ${label}, concurrency ${concurrency} (reference: ${reference})`, value: a, unit: 'ops/s', reference: b, ratio });
  return [row('creates', creates.wall, 'store.put of the same new object'), row('updates', updates.wall, 'store.put of the whole changed object')];
}

export default async function bench({ rates }) {
  const rows = await writeRows(rates, 'memory store', new MemoryObjectStore(), { concurrency: 1 });

  const admin = new pg.Client({ connectionString: DATABASE_URL });
  try {
    await admin.connect();
  } catch {
    return [...rows, { name: 'PostgreSQL rows: skipped', value: 'PostgreSQL unreachable', unit: '' }];
  }
  const schema = `odbrest_bench_writes_${RUN}`;
  const writes = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'writes' });
  // the listing's fields declared as indexedFields (btree columns), and the same table without them
  const listed = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects', indexedFields: ['City', 'Revenue'] });
  const undeclared = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
  const floorPool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  try {
    for (const concurrency of [1, 8]) rows.push(...(await writeRows(rates, 'PostgreSQL store', writes, { concurrency })));

    await listed.count('Customer'); // creates the tables
    await seedCustomers(admin, schema, COUNT);
    const { send } = await serviceOn(listed);
    const query = { className: 'Customer', where: { City: 'Berlin' }, orderBy: { field: 'Revenue' }, limit: 50 };
    const path = `/v1/objects/Customer?query=${encodeURIComponent(JSON.stringify(query.where))}&orderBy=Revenue&perPage=50`;
    const spec = { city: 'Berlin', order: 'revenue, seq', offset: 0 };
    // the three answer the same page
    const [page, found, plain, floor] = await Promise.all([send('GET', path), listed.find(query), undeclared.find(query), floorPage(floorPool, schema, spec)]);
    const ids = (objects) => objects.map((object) => object.id ?? object['~ObjectID']).join();
    const answered = JSON.parse(page).data;
    if (ids(answered['~Elements']) !== ids(floor.objects) || answered['~UnfilteredCount'] !== floor.total || ids(found.objects) !== ids(floor.objects) || ids(plain.objects) !== ids(floor.objects)) {
      throw new Error('the service, the store and the floor answer different pages');
    }
    const [serviceMs, storeMs, plainMs, floorMs] = await alternatingMedians(
      [() => send('GET', path), () => listed.find(query), () => undeclared.find(query), () => floorPage(floorPool, schema, spec)],
      31,
    );
    const name = `filtered (10% equality), ordered (number field) page of 50 from ${COUNT.toLocaleString('en')} objects in PostgreSQL, p50 (total included)`;
    rows.push({ name: `${name}, through service.fetch (reference: floor)`, value: serviceMs, unit: 'ms', reference: floorMs, ratio: serviceMs / floorMs });
    rows.push({ name: `${name}, through store.find (reference: floor)`, value: storeMs, unit: 'ms', reference: floorMs, ratio: storeMs / floorMs });
    rows.push({ name: `${name}, through store.find without indexedFields (reference: floor)`, value: plainMs, unit: 'ms', reference: floorMs, ratio: plainMs / floorMs });
  } finally {
    await writes.close();
    await listed.close();
    await undeclared.close();
    await floorPool.end();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
  return rows;
}
