// Storage benches, against the built package (dist/) (PostgreSQL listings: postgres-listing.bench.mjs):
// - authenticated GET /v1/object/{id} (its reference nested) through service.fetch with Redis sessions
//   and the PostgreSQL store, 1 and 16 concurrent, as a ratio against the in-process defaults measured
//   in the same run, and the PostgreSQL statements and Redis commands one such GET takes;
// - file store writes per second (each one fsynced), one writer and 32 concurrent, against memory.
// REDIS_URL and DATABASE_URL choose the servers; rows that need an unreachable server say so.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createService, MemoryObjectStore } from '../dist/index.js';
import { FileObjectStore } from '../dist/file-store.js';
import { PostgresObjectStore } from '../dist/postgres.js';
import { RedisKeyValueStore } from '../dist/redis.js';
import { demoData, loggedInGet, reachable } from './common.mjs';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;

export default async function bench({ opsPerSecond }) {
  const rows = [];
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  const pgUp = await reachable(() => admin.connect());
  const prefix = `odbrest-bench:${RUN}:`;
  const kv = new RedisKeyValueStore({ url: REDIS_URL, prefix });
  const redisUp = await reachable(() => kv.get('probe'));
  const schema = `odbrest_bench_${RUN}`;

  try {
    if (redisUp && pgUp) {
      const local = createService({ data: demoData(), users: { passwordIterations: 1000 } });
      await local.ready;
      // The stores talk through a pool and a client of the bench's own, which count statements and commands.
      const trips = { pg: 0, redis: 0 };
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 16 });
      pool.on('connect', (client) => {
        const query = client.query.bind(client);
        client.query = (...args) => (trips.pg++, query(...args));
      });
      const redis = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 2000 });
      const send = redis.sendCommand.bind(redis);
      redis.sendCommand = (...args) => (trips.redis++, send(...args));
      const countedKv = new RedisKeyValueStore({ client: redis, prefix });
      const store = new PostgresObjectStore({ pool, schema, table: 'demo' });
      const both = createService({ data: demoData(), users: { passwordIterations: 1000 }, kv: countedKv, store });
      await both.ready;
      // The same table read without the object cache (PostgreSQL asked for every object), for the before/after.
      const uncachedStore = new PostgresObjectStore({ pool, schema, table: 'demo', cache: false });
      const uncached = createService({ users: { passwordIterations: 1000 }, kv: countedKv, store: uncachedStore });
      await uncached.ready;
      // And with the weaker, opt-in cache that answers without the listening connection's round trip.
      const eventualStore = new PostgresObjectStore({ pool, schema, table: 'demo', cache: { consistency: 'eventual' } });
      const eventual = createService({ users: { passwordIterations: 1000 }, kv: countedKv, store: eventualStore });
      await eventual.ready;
      const get = await loggedInGet(both);
      const uncachedGet = await loggedInGet(uncached);
      const eventualGet = await loggedInGet(eventual);
      await eventualGet();
      for (const [label, fn] of [['', get], [', without the object cache', uncachedGet]]) {
        await fn();
        await new Promise((resolve) => setTimeout(resolve, 100)); // the cache listens from the first read on
        await fn();
        const before = { ...trips };
        const GETS = 20;
        for (let i = 0; i < GETS; i++) await fn();
        rows.push({ name: `round trips per GET /v1/object/{id}${label}, PostgreSQL statements`, value: (trips.pg - before.pg) / GETS, unit: '' });
        rows.push({ name: `round trips per GET /v1/object/{id}${label}, Redis commands`, value: (trips.redis - before.redis) / GETS, unit: '' });
      }
      const localGet = await loggedInGet(local);
      for (const concurrency of [1, 16]) {
        const reference = await opsPerSecond(localGet, { concurrency });
        const value = await opsPerSecond(get, { concurrency });
        const without = await opsPerSecond(uncachedGet, { concurrency });
        const weaker = await opsPerSecond(eventualGet, { concurrency });
        rows.push({ name: `GET /v1/object/{id}, Redis sessions + PostgreSQL store, ${concurrency} concurrent`, value, unit: 'req/s', reference, ratio: value / reference, target: concurrency === 16 ? '>= 0.5' : undefined });
        rows.push({ name: `GET /v1/object/{id}, Redis sessions + PostgreSQL store with cache.consistency 'eventual' (opt-in), ${concurrency} concurrent`, value: weaker, unit: 'req/s', reference, ratio: weaker / reference });
        rows.push({ name: `GET /v1/object/{id}, Redis sessions + PostgreSQL store without the object cache, ${concurrency} concurrent`, value: without, unit: 'req/s', reference, ratio: without / reference });
      }
      // Each shared store alone, to show where the time goes.
      for (const [label, stores] of [
        ['Redis sessions only', { kv: countedKv }],
        ['PostgreSQL store only', { store }],
      ]) {
        const service = createService({ data: demoData(), users: { passwordIterations: 1000 }, ...stores });
        await service.ready;
        const reference = await opsPerSecond(localGet, { concurrency: 16 });
        const value = await opsPerSecond(await loggedInGet(service), { concurrency: 16 });
        rows.push({ name: `GET /v1/object/{id}, ${label}, 16 concurrent`, value, unit: 'req/s', reference, ratio: value / reference });
      }
      await store.close();
      await uncachedStore.close();
      await eventualStore.close();
      await pool.end();
      redis.disconnect();
      rows.push(...(await cacheMemory(schema)));
    } else {
      rows.push({ name: 'GET with Redis + PostgreSQL: skipped', value: `${redisUp ? '' : 'Redis '}${pgUp ? '' : 'PostgreSQL '}unreachable`, unit: '' });
    }

  } finally {
    await kv.close();
    if (redisUp) {
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`); // this run's sessions only
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
    if (pgUp) {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  }

  const dir = mkdtempSync(join(tmpdir(), 'odbrest-bench-'));
  try {
    const file = await FileObjectStore.open({ path: join(dir, 'bench.journal') });
    const memory = new MemoryObjectStore();
    const put = (store) => () => store.put({ className: 'Bench', fields: { Name: 'x', Number: 1, Text: 'y'.repeat(200) } });
    for (const concurrency of [1, 32]) {
      const reference = await opsPerSecond(put(memory), { concurrency, ms: 1000 });
      const value = await opsPerSecond(put(file), { concurrency, ms: 1000 });
      rows.push({ name: `file store put, fsynced, ${concurrency} concurrent (reference: memory store)`, value, unit: 'puts/s', reference, ratio: value / reference });
    }
    await file.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/**
 * Memory the PostgreSQL object cache takes per object: 20,000 objects shaped like the demo's
 * customers (about 250 bytes of JSON each) read once by id in batches, heap and RSS before and after.
 */
async function cacheMemory(schema) {
  const OBJECTS = 20_000;
  const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'memory', cache: { maxObjects: OBJECTS, maxBytes: 1 << 30 } });
  await store.count('Customer'); // creates the table
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(
    `INSERT INTO "${schema}"."memory" (id, class_name, store_time, data, body)
     SELECT id, 'Customer', 1767225600000, body::jsonb, body FROM (
       SELECT 'M' || lpad(i::text, 7, '0') AS id,
         json_build_object('Name', 'Customer ' || i, 'City', 'Hamburg', 'Street', 'Hafenstrasse ' || i, 'Email', 'customer' || i || '@example.com',
           'Phone', '+49 40 ' || (1000000 + i), 'Revenue', i * 17, 'Active', i % 2 = 0, 'AccountManager', json_build_object('~ObjectID', 'EMP00001'))::text AS body
       FROM generate_series(1, ${OBJECTS}) i) o`,
  );
  await admin.end();
  const ids = Array.from({ length: OBJECTS }, (_, i) => `M${String(i + 1).padStart(7, '0')}`);
  await store.get(ids[0]);
  await new Promise((resolve) => setTimeout(resolve, 200)); // listening
  const measure = () => {
    globalThis.gc?.();
    return process.memoryUsage();
  };
  const before = measure();
  for (let i = 0; i < OBJECTS; i += 500) await store.getMany(ids.slice(i, i + 500));
  const after = measure();
  await store.close();
  return [
    { name: `PostgreSQL object cache, heap per cached object (${OBJECTS} objects${globalThis.gc ? '' : ', without --expose-gc'})`, value: (after.heapUsed - before.heapUsed) / OBJECTS, unit: 'bytes' },
    { name: `PostgreSQL object cache, RSS per cached object (${OBJECTS} objects)`, value: (after.rss - before.rss) / OBJECTS, unit: 'bytes' },
  ];
}
