// Scaling out (issue 37, docs/scaling.md), against the built package (dist/): two instances, each a
// service over its own PostgreSQL store (and pool) on one table, sessions in one Redis.
// - GET /v1/object/{id} at 16 concurrent with the object cache's default `session` consistency, and
//   with `strong`, each against `eventual` (no wait at all) in alternating rounds (target >= 0.9);
// - stale answers of 300 write-on-A, read-on-B pairs of one session, per consistency;
// - the notification lag: from an UPDATE sent by another client to the other instance's cache
//   forgetting the object, p50 and p99 of 300.
// - what the request context that carries the session's position costs this runtime: in-memory GETs
//   per CPU second with and without one, in separate processes (request-context.mjs), alternating.
// REDIS_URL and DATABASE_URL choose the servers; without them the rows say so. Listings against their
// SQL replayed: service-listing.bench.mjs.
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createService, importObjects } from '../dist/index.js';
import { PostgresObjectStore } from '../dist/postgres.js';
import { RedisKeyValueStore } from '../dist/redis.js';
import { demoAccess } from '../examples/demo-access.mjs';
import { alternatingRates, APP_KEY, demoData, loginAlice, median, reachable } from './common.mjs';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
const PAIRS = 300;

/** In-memory GETs per CPU second with each request in an AsyncLocalStorage context, against none, 5 alternating processes each. */
function contextCost() {
  const run = (mode) => JSON.parse(execFileSync(process.execPath, [new URL('./request-context.mjs', import.meta.url).pathname, mode], { encoding: 'utf8' })).perCpuSecond;
  const ratios = [];
  const values = { context: [], plain: [] };
  for (let i = 0; i < 5; i++) {
    const [context, plain] = [run('context'), run('plain')];
    values.context.push(context);
    values.plain.push(plain);
    ratios.push(context / plain);
  }
  return {
    name: `in-memory GET /v1/object/{id} per CPU second, each request in a request context (AsyncLocalStorage, ${process.version}) (reference: none; median of 5 alternating processes)`,
    value: median(values.context),
    unit: 'req/CPU-s',
    reference: median(values.plain),
    ratio: median(ratios),
  };
}

export default async function bench({ rates }) {
  const rows = [contextCost()];
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  const prefix = `odbrest-bench-scaling:${RUN}:`;
  const kv = new RedisKeyValueStore({ url: REDIS_URL, prefix });
  const [pgUp, redisUp] = [await reachable(() => admin.connect()), await reachable(() => kv.get('probe'))];
  if (!pgUp || !redisUp) {
    await kv.close();
    if (pgUp) await admin.end();
    return [{ name: 'scaling: skipped', value: `${redisUp ? '' : 'Redis '}${pgUp ? '' : 'PostgreSQL '}unreachable`, unit: '' }];
  }
  const schema = `odbrest_bench_scaling_${RUN}`;
  const opened = [];
  /** An instance over `table` with this cache consistency: its store (on a pool of its own), its service, its cache events. */
  const instance = async (table, consistency) => {
    const events = new Set();
    const store = new PostgresObjectStore({ connectionString: DATABASE_URL, maxConnections: 16, schema, table, cache: { consistency, onEvent: (event) => events.forEach((listener) => listener(event)) } });
    const service = createService({ store, kv, access: demoAccess, users: { passwordIterations: 1000 } });
    await service.ready;
    opened.push(store);
    await store.get('NOSUCHID');
    await new Promise((resolve) => setTimeout(resolve, 200)); // the cache listens from the first read on
    return { store, service, events };
  };
  const send = (side, sessionId, method, path, json) =>
    side.service.fetch(
      new Request(`http://bench${path}`, { method, headers: { appkey: APP_KEY, sessionId, ...(json && { 'content-type': 'application/json' }) }, body: json && JSON.stringify(json) }),
    );
  try {
    const seed = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'demo', cache: false });
    await importObjects(seed, demoData(), 1000);
    await seed.close();

    // GET by id, one instance per consistency, the same table, sessions in Redis
    const sides = {};
    for (const consistency of ['session', 'strong', 'eventual']) sides[consistency] = await instance('demo', consistency);
    const getter = async (side) => {
      const sessionId = await loginAlice(side.service);
      return async () => {
        const response = await send(side, sessionId, 'GET', '/v1/object/CUS00001');
        if (response.status !== 200) throw new Error(`GET answered ${response.status}`);
        await response.text();
      };
    };
    const gets = {};
    for (const consistency of Object.keys(sides)) {
      gets[consistency] = await getter(sides[consistency]);
      await gets[consistency]();
    }
    for (const consistency of ['session', 'strong']) {
      const { wall, cpu } = await alternatingRates(rates, gets[consistency], gets.eventual, { concurrency: 16, rounds: 5, ms: 1000 });
      const label = consistency === 'session' ? "'session' (the default)" : "'strong' (a round trip per read)";
      rows.push({
        name: `GET /v1/object/{id}, Redis sessions + PostgreSQL, 16 concurrent, cache consistency ${label} (reference: 'eventual'; median of 5 alternating rounds)`,
        value: wall.a,
        unit: 'req/s',
        reference: wall.b,
        ratio: wall.ratio,
        target: consistency === 'session' ? '>= 0.9' : undefined,
      });
      rows.push({ name: `  the same per second of this process's CPU, cache consistency ${label}`, value: cpu.a, unit: 'req/CPU-s', reference: cpu.b, ratio: cpu.ratio });
    }

    // stale answers: one session writes through A and reads at once through B
    for (const consistency of ['session', 'eventual']) {
      const table = `pairs_${consistency}`;
      const seeding = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table, cache: false });
      await importObjects(seeding, demoData(), 1000);
      await seeding.close();
      const [a, b] = [await instance(table, consistency), await instance(table, consistency)];
      const sessionId = await loginAlice(a.service);
      await (await send(b, sessionId, 'GET', '/v1/object/CUS00008')).text();
      let stale = 0;
      for (let i = 0; i < PAIRS; i++) {
        const patched = await send(a, sessionId, 'PATCH', '/v1/object/CUS00008', { City: `City ${i}` });
        if (patched.status !== 200) throw new Error(`PATCH answered ${patched.status}: ${await patched.text()}`);
        const written = await patched.json();
        const read = await (await send(b, sessionId, 'GET', '/v1/object/CUS00008')).json();
        if (read.data.City !== `City ${i}` || read.data['~StoreTime'] !== written.data['~StoreTime']) stale++;
      }
      rows.push({ name: `stale answers of ${PAIRS} PATCH-on-A, GET-on-B pairs of one session, cache consistency '${consistency}'`, value: stale, unit: '', target: consistency === 'session' ? '0' : undefined });
    }

    // the notification lag: an UPDATE from another client until B's cache forgets the object
    const b = sides.eventual;
    const table = `"${schema}"."demo"`;
    const lags = [];
    for (let i = 0; i < PAIRS; i++) {
      const heard = new Promise((resolve) => {
        const listener = (event) => event.kind === 'changed' && event.id === 'CUS00009' && (b.events.delete(listener), resolve(performance.now()));
        b.events.add(listener);
      });
      const start = performance.now();
      await admin.query(`UPDATE ${table} SET store_time = store_time + 1000 WHERE id = 'CUS00009'`);
      lags.push((await heard) - start);
    }
    lags.sort((x, y) => x - y);
    rows.push({ name: `notification lag, UPDATE sent to the other instance's cache told, p50 of ${PAIRS}`, value: median(lags), unit: 'ms' });
    rows.push({ name: `notification lag, p99 of ${PAIRS}`, value: lags[Math.floor(lags.length * 0.99)], unit: 'ms' });
  } finally {
    for (const store of opened) await store.close();
    await kv.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
  return rows;
}
