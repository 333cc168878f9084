// The admin console's service side (issue 43, PROTOCOL.md 6.12):
// - metrics and recent requests: an authenticated GET /v1/object/{id} through service.fetch with the
//   instance's metrics and request ring (the default) against the same service built with
//   `metrics: false`, alternating rounds in one run (both answer X-Request-Id, which the protocol
//   asks of every answer); target: at most 2% fewer requests per second.
// - a run-time declaration's check of 100,000 stored objects on PostgreSQL: PUT /v1/model/classes/Customer
//   through the service (its 409 counted in one SQL statement, `violations`), against the floor of
//   reading the class once (`SELECT count(*)` of its rows' `data`); target at most 2 s.
// DATABASE_URL chooses the server; without PostgreSQL the metrics rows are still printed.
import pg from 'pg';
import { createService, importObjects } from '../dist/index.js';
import { PostgresObjectStore } from '../dist/postgres.js';
import { alternatingMedians, alternatingRates, APP_KEY, demoData, loginAlice, seedCustomers } from './common.mjs';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
const COUNT = 100_000;

async function getOf(options) {
  const service = createService({ data: demoData(), users: { passwordIterations: 1 }, ...options });
  await service.ready;
  const sessionId = await loginAlice(service);
  const request = () => new Request('http://bench/v1/object/CUS00001', { headers: { appkey: APP_KEY, sessionid: sessionId } });
  const first = await service.fetch(request());
  if (!first.headers.get('x-request-id') || (await first.json()).status.internalStatus !== '0') throw new Error('unexpected answer');
  return async () => (await service.fetch(request())).text();
}

async function metricsRows(rates) {
  const withMetrics = await getOf({});
  const without = await getOf({ metrics: false });
  const rows = [];
  for (const concurrency of [1, 16]) {
    const measured = await alternatingRates(rates, withMetrics, without, { rounds: 11, ms: 300, concurrency });
    for (const [kind, unit] of [['wall', 'req/s'], ['cpu', 'req per CPU-s']]) {
      const { a, b, ratio } = measured[kind];
      rows.push({ name: `GET /v1/object/{id} with the instance's metrics and request log (reference: metrics: false), concurrency ${concurrency}`, value: a, unit, reference: b, ratio, target: '>= 0.98' });
    }
  }
  return rows;
}

async function declarationRows() {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  try {
    await admin.connect();
  } catch {
    return [{ name: 'run-time declaration check on PostgreSQL: skipped', value: 'PostgreSQL unreachable', unit: '' }];
  }
  const schema = `odbrest_bench_console_${RUN}`;
  const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
  try {
    await store.count('Customer'); // creates the table
    await seedCustomers(admin, schema, COUNT);
    await importObjects(store, { objects: demoData().objects.filter((object) => ['User', 'UserGroup', 'Employee'].includes(object['~ClassName'])) }, 1);
    const service = createService({ store, users: { admins: 'admins', passwordIterations: 1 } });
    await service.ready;
    const headers = { appkey: APP_KEY, sessionid: await loginAlice(service), 'content-type': 'application/json' };
    const put = (body, expected) => async () => {
      const response = await service.fetch(new Request('http://bench/v1/model/classes/Customer', { method: 'PUT', headers, body: JSON.stringify(body) }));
      const answer = await response.json();
      if (response.status !== expected) throw new Error(`PUT answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    };
    // every customer breaks the first (Segment is required, none has it), none the second, which checks every field: the whole class is read either way
    const refused = put({ Fields: { Name: { Type: 'string', Required: true, MaxLength: 100 }, Segment: { Type: 'string', Required: true } } }, 409);
    const fields = { Name: { Type: 'string', Required: true, MaxLength: 100 }, Number: { Type: 'integer', Min: 0 }, City: { Type: 'string', MaxLength: 40 }, Active: { Type: 'boolean' }, Revenue: { Type: 'number', Min: 0, Max: 100000 }, AccountManager: { Type: 'ref', Class: 'Employee' } };
    // taken (200): every later PUT replaces the declaration and checks the whole class again
    const taken = put({ Fields: fields }, 200);
    const floor = async () => void (await admin.query(`SELECT count(*) FROM "${schema}".objects WHERE class_name = 'Customer' AND data IS NOT NULL`));
    const [refusedMs, takenMs, floorMs] = await alternatingMedians([refused, taken, floor], 5);
    const of = `over ${COUNT.toLocaleString('en')} stored objects on PostgreSQL, p50 (reference: reading the class once)`;
    return [
      { name: `PUT /v1/model/classes/Customer refused (409: every object breaks it, all counted) ${of}`, value: refusedMs, unit: 'ms', reference: floorMs, ratio: refusedMs / floorMs, target: '<= 2000 ms' },
      { name: `PUT /v1/model/classes/Customer taken (six fields checked, none broken) ${of}`, value: takenMs, unit: 'ms', reference: floorMs, ratio: takenMs / floorMs, target: '<= 2000 ms' },
    ];
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

export default async function ({ rates }) {
  return [...(await metricsRows(rates)), ...(await declarationRows())];
}
