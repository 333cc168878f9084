// PostgreSQL listings (issue 16): five pages from 100,000 objects of one class shaped like the demo's
// Customer, each through PostgresObjectStore.find (page and exact total), as ratios against
//   - the floor: the same page and count in one statement straight through `pg`, on a table with a
//     column per field and the best btree index for that query;
//   - the in-memory store holding the same objects.
// Warm figures repeat one listing (totals cached, page starts learned); cold ones write to the class
// before each call, so every cache is invalid. Answers are checked against each other first.
// DATABASE_URL chooses the server.
import pg from 'pg';
import { MemoryObjectStore } from '../dist/index.js';
import { PostgresObjectStore } from '../dist/postgres.js';
import { alternatingMedians, customer, floorPage, median, seedCustomers } from './common.mjs';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
const COUNT = 100_000;

const CASES = [
  { label: 'first page, no filter', query: { limit: 50 }, floor: { order: 'seq', offset: 0 } },
  { label: 'page 1000 (skip 50,000), no filter', query: { offset: 50_000, limit: 50 }, floor: { order: 'seq', offset: 50_000 } },
  { label: 'first page, 10% equality filter', query: { where: { City: 'Berlin' }, limit: 50 }, floor: { city: 'Berlin', order: 'seq', offset: 0 } },
  { label: 'page 100 (skip 5,000), 10% equality filter', query: { where: { City: 'Berlin' }, offset: 5000, limit: 50 }, floor: { city: 'Berlin', order: 'seq', offset: 5000 } },
  {
    label: 'first page, 10% equality filter, ordered by a number field',
    query: { where: { City: 'Berlin' }, orderBy: { field: 'Revenue' }, limit: 50 },
    floor: { city: 'Berlin', order: 'revenue, seq', offset: 0 },
  },
];

export default async function bench() {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  try {
    await admin.connect();
  } catch {
    return [{ name: 'PostgreSQL listings: skipped', value: 'PostgreSQL unreachable', unit: '' }];
  }
  const schema = `odbrest_bench_${RUN}`;
  const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
  const floorPool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  const rows = [];
  try {
    await store.count('Customer'); // creates the tables
    // The same customers three ways: the store's table and a table with a column per field for the
    // floor (seedCustomers), and the memory store. 20,000 orders share the store's table.
    await seedCustomers(admin, schema, COUNT);
    const memory = new MemoryObjectStore();
    for (let i = 0; i < COUNT; i++) await memory.put({ id: `CUS${String(i).padStart(6, '0')}`, className: 'Customer', fields: customer(i) });

    const floor = (spec) => floorPage(floorPool, schema, spec);
    let touched = 0;
    /** A write to the class (one customer written again as it is), which invalidates every cache of it. */
    const write = () => {
      const i = (touched++ * 7) % COUNT;
      return store.put({ id: `CUS${String(i).padStart(6, '0')}`, className: 'Customer', fields: customer(i) });
    };

    for (const { label, query, floor: spec } of CASES) {
      const find = () => store.find({ className: 'Customer', ...query });
      const fromMemory = () => memory.find({ className: 'Customer', ...query });
      const [got, expected, inMemory] = await Promise.all([find(), floor(spec), fromMemory()]);
      const same = (a, b) => a.total === b.total && JSON.stringify(a.objects.map((o) => [o.id, o.fields])) === JSON.stringify(b.objects.map((o) => [o.id, o.fields]));
      if (!same(got, expected)) throw new Error(`${label}: the store's answer differs from the floor's`);
      const memoryAgrees = same(got, inMemory);
      const [warm, floorMs, memoryMs] = await alternatingMedians([find, () => floor(spec), fromMemory], 31);
      const cold = [];
      for (let run = 0; run < 21; run++) {
        await write();
        const start = performance.now();
        await find();
        cold.push(performance.now() - start);
      }
      const coldMs = median(cold);
      const name = `PostgreSQL listing of ${COUNT.toLocaleString('en')} objects, ${label}, p50 (total included)`;
      rows.push({ name: `${name}, warm (reference: floor)`, value: warm, unit: 'ms', reference: floorMs, ratio: warm / floorMs });
      rows.push({ name: `${name}, cold: after a write to the class (reference: floor)`, value: coldMs, unit: 'ms', reference: floorMs, ratio: coldMs / floorMs });
      rows.push(
        memoryAgrees
          ? { name: `${name}, warm (reference: memory store)`, value: warm, unit: 'ms', reference: memoryMs, ratio: warm / memoryMs }
          : { name: `${name}, memory store`, value: 'answers differently (no support for this query)', unit: '' },
      );
    }
  } finally {
    await store.close();
    await floorPool.end();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
  return rows;
}

