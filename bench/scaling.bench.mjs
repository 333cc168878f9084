// Scaling out (issue 37, docs/scaling.md), against the built package (dist/): two instances, each a
// service over its own PostgreSQL store (and pool) on one table, sessions in one Redis.
// - GET /v1/object/{id} at 16 concurrent with the object cache's default `session` consistency, and
//   with `strong`, each against `eventual` (no wait at all) in alternating rounds (target >= 0.9);
// - stale answers of 300 write-on-A, read-on-B pairs of one session, per consistency;
// - the notification lag: from an UPDATE sent by another client to the other instance's cache
//   forgetting the object, p50 and p99 of 300.
// - what the request context that carries the session's position costs this runtime: in-memory GETs
//   per CPU second with and without one, in separate processes (request-context.mjs), alternating.
// - the primary's CPU per listing read with one streaming replica, against the same reads without
//   one (target <= 0.5): a primary and a replica of the bench's own (test/support/pg-replica.ts,
//   bundled here with esbuild), the CPU of the primary's processes from /proc, alternating rounds.
// REDIS_URL and DATABASE_URL choose the servers; without them the rows say so. Listings against their
// SQL replayed: service-listing.bench.mjs.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { build } from 'esbuild';
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

/** utime, stime, cutime, cstime and the parent of a process, from /proc (undefined once it is gone). */
function procStat(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { ppid: Number(fields[1]), own: Number(fields[11]) + Number(fields[12]), reaped: Number(fields[13]) + Number(fields[14]) };
  } catch {
    return undefined;
  }
}
/** CPU seconds of a PostgreSQL server so far: its postmaster, its live processes and those it reaped. */
function serverCpu(postmaster, clockTicks) {
  let ticks = 0;
  const main = procStat(postmaster);
  ticks += main.own + main.reaped;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const child = procStat(name);
    if (child?.ppid === postmaster) ticks += child.own;
  }
  return ticks / clockTicks;
}

/** The primary's CPU per listing read of a session, with one replica against none (alternating rounds). */
async function replicaCpu() {
  const name = "the primary's CPU per listing read with one streaming replica (reference: none)";
  const outfile = new URL('../node_modules/.cache/odbrest-bench/pg-replica.mjs', import.meta.url).pathname;
  await build({ entryPoints: [new URL('../test/support/pg-replica.ts', import.meta.url).pathname], outfile, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'error' });
  if (!existsSync('/proc/self/stat')) return [{ name: `${name}: skipped`, value: 'no /proc to read the servers\' CPU from', unit: '' }];
  const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
  const { startReplicaPair } = await import(outfile);
  const pair = await startReplicaPair('the bench row with a replica');
  if (!pair) return [{ name: `${name}: skipped`, value: 'PostgreSQL binaries not found (PG_BIN)', unit: '' }];
  const stores = [];
  try {
    const seed = new PostgresObjectStore({ connectionString: pair.primaryUrl, cache: false });
    await importObjects(seed, demoData(), 1000);
    await seed.close();
    const postmasterOf = async (connectionString) => {
      const admin = new pg.Client({ connectionString });
      await admin.connect();
      const { rows } = await admin.query("SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'");
      await admin.end();
      return procStat(rows[0].pid).ppid;
    };
    const [primary, replica] = [await postmasterOf(pair.primaryUrl), await postmasterOf(pair.replicaUrl)];
    const reader = async (replicas) => {
      const store = new PostgresObjectStore({ connectionString: pair.primaryUrl, replicas, maxConnections: 8 });
      stores.push(store);
      const service = createService({ store, access: demoAccess, users: { passwordIterations: 1000 } });
      await service.ready;
      const sessionId = await loginAlice(service);
      const path = `/v1/objects/Customer?${encodeURI('query={"City":"Berlin"}')}`;
      return async () => {
        const response = await service.fetch(new Request(`http://bench${path}`, { headers: { appkey: APP_KEY, sessionId } }));
        if (response.status !== 200) throw new Error(`listing answered ${response.status}`);
        await response.text();
      };
    };
    const sides = { replica: await reader([pair.replicaUrl]), primary: await reader(undefined) };
    await new Promise((resolve) => setTimeout(resolve, 500)); // the replica's first checks
    const READS = 400;
    const ROUNDS = 7;
    /** CPU seconds of the primary and of the replica while READS reads run, 8 at a time. */
    const round = async (read) => {
      const before = [serverCpu(primary, clockTicks), serverCpu(replica, clockTicks)];
      let left = READS;
      await Promise.all(Array.from({ length: 8 }, async () => { while (left-- > 0) await read(); }));
      return [serverCpu(primary, clockTicks) - before[0], serverCpu(replica, clockTicks) - before[1]];
    };
    for (const read of Object.values(sides)) await round(read); // warm up
    // sums over the rounds: a round's CPU is counted in 10 ms ticks, a replica's round on the primary often in none
    const cpu = { replica: [0, 0], primary: [0, 0] };
    for (let i = 0; i < ROUNDS; i++) {
      for (const side of ['replica', 'primary']) (await round(sides[side])).forEach((seconds, k) => (cpu[side][k] += seconds));
    }
    const perRead = (seconds) => (seconds / (READS * ROUNDS)) * 1e6;
    return [
      { name: `${name}; ${ROUNDS} alternating rounds of ${READS} reads, 8 at a time`, value: perRead(cpu.replica[0]), unit: 'µs CPU/read', reference: perRead(cpu.primary[0]), ratio: cpu.replica[0] / cpu.primary[0], target: '<= 0.5' },
      { name: "  the replica's CPU per read, with it (reference: the primary's without one)", value: perRead(cpu.replica[1]), unit: 'µs CPU/read', reference: perRead(cpu.primary[0]), ratio: cpu.replica[1] / cpu.primary[0] },
    ];
  } finally {
    for (const store of stores) await store.close();
    await pair.close();
  }
}

export default async function bench({ rates }) {
  const rows = [contextCost(), ...(await replicaCpu())];
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
