// Bulk writes and locks (issue 25), through `service.fetch` with alice's plain session and the demo's rules:
//   - one bulk `PATCH /v1/objects/Customer?query=...` changing 1,000 customers on PostgreSQL (one
//     transaction through `putMany`) against 1,000 single `PATCH /v1/object/{id}` of the same change,
//     in alternating rounds (target: the bulk 10x faster);
//   - single updates per second with the lock check of the write path (one key-value read) against
//     the same service whose key-value store answers lock reads without asking (the check's cost;
//     target: under 5%).
// DATABASE_URL chooses the server; without one the PostgreSQL row says so.
import { createService, importObjects, MemoryKeyValueStore, MemoryObjectStore } from '../dist/index.js';
import { PostgresObjectStore } from '../dist/postgres.js';
import { demoAccess } from '../examples/demo-access.mjs';
import { alternatingMedians, alternatingRates, APP_KEY, customer, demoData, loginAlice } from './common.mjs';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
const BULK = 1000;

const demoWithoutCustomers = () => ({ objects: demoData().objects.filter((object) => object['~ClassName'] !== 'Customer') });

async function serviceOn(store, kv) {
  await importObjects(store, demoWithoutCustomers(), 1000);
  const service = createService({ store, kv, access: demoAccess, users: { passwordIterations: 1000 } });
  await service.ready;
  const headers = { appkey: APP_KEY, sessionId: await loginAlice(service), 'content-type': 'application/json' };
  return async (method, path, json) => {
    const response = await service.fetch(new Request(`http://bench${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) }));
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 200)}`);
    return text;
  };
}

export default async function ({ rates }) {
  const rows = [];
  // the lock check: one key-value read per write, against a store that answers lock reads at once
  {
    const kv = new MemoryKeyValueStore();
    const noLocks = new Proxy(new MemoryKeyValueStore(), {
      get(target, name) {
        const member = Reflect.get(target, name);
        if (name === 'get') return (key) => (key.startsWith('lock:') ? Promise.resolve(undefined) : member.call(target, key));
        return typeof member === 'function' ? member.bind(target) : member;
      },
    });
    const stores = [new MemoryObjectStore(), new MemoryObjectStore()];
    const ids = [];
    for (const store of stores) for (let i = 0; i < 100; i++) ids.push((await store.put({ id: `C${String(i).padStart(7, '0')}`, className: 'Customer', fields: customer(i) })).id);
    const checked = await serviceOn(stores[0], kv);
    const unchecked = await serviceOn(stores[1], noLocks);
    let k = 0;
    const { wall } = await alternatingRates(
      rates,
      () => checked('PATCH', `/v1/object/${ids[k++ % 100]}`, { Revenue: k }),
      () => unchecked('PATCH', `/v1/object/${ids[k++ % 100]}`, { Revenue: k }),
    );
    rows.push({ name: 'single PATCH with the lock check, memory stores (reference: lock reads answered at once)', value: wall.a, unit: 'ops/s', reference: wall.b, ratio: wall.ratio, target: '>= 0.95' });
  }
  const pgStore = new PostgresObjectStore({ connectionString: DATABASE_URL, schema: `odbrest_bench_${RUN}`, table: 'bulk' });
  try {
    await pgStore.count('Customer');
  } catch {
    await pgStore.close();
    return [...rows, { name: 'PostgreSQL bulk PATCH: skipped', value: 'PostgreSQL unreachable', unit: '' }];
  }
  try {
    const send = await serviceOn(pgStore);
    const ids = [];
    for (let i = 0; i < BULK; i++) ids.push((await pgStore.put({ className: 'Customer', fields: { ...customer(i), City: 'Bulkhausen' } })).id);
    const query = encodeURIComponent(JSON.stringify({ City: 'Bulkhausen' }));
    let k = 0;
    const [bulkMs, singleMs] = await alternatingMedians(
      [
        () => send('PATCH', `/v1/objects/Customer?query=${query}`, { Revenue: ++k }),
        async () => {
          k++;
          for (const id of ids) await send('PATCH', `/v1/object/${id}`, { Revenue: k });
        },
      ],
      3,
    );
    rows.push({ name: `bulk PATCH of ${BULK} customers, PostgreSQL, ms (reference: ${BULK} single PATCHes)`, value: bulkMs, unit: 'ms', reference: singleMs, ratio: singleMs / bulkMs, target: '>= 10' });
  } finally {
    const client = (await import('pg')).default;
    const c = new client.Client({ connectionString: DATABASE_URL });
    await pgStore.close();
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS "odbrest_bench_${RUN}" CASCADE`);
    await c.end();
  }
  return rows;
}
