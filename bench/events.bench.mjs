// Realtime change events (PROTOCOL.md 8, issue 27), in process through service.fetch (the streams are
// the web ReadableStreams every adapter writes out; reading them here costs this process too):
// - 10,000 subscribers on one instance, 100 writes/s, each write matching 100 of them (a query on
//   `Room`): delivery latency from the write's answer to the event read, p50 and p99, and events/s;
//   reference: the write's own answer time.
// - memory per idle subscriber (heap after gc, streams open, nothing sent); target < 4 KB. In process
//   (the service and the Response it answered), and over HTTP: the heap of a Node adapter's server
//   with the streams open to a reader in another process, against a bare node:http server holding
//   as many streaming answers (Node's own socket, parser and response per connection).
// - the cost a subscription adds to a write: PATCH rate with 1,000 subscribers whose query does not
//   match, against none; target < 10 %.
// - across two instances (PostgreSQL objects, Redis sessions) through PostgresEventBus and through
//   RedisEventBus: 1,000 subscribers on B, 100 writes/s on A.
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { createService } from '../dist/index.js';
import { serve } from '../dist/node.js';
import { APP_KEY, demoData, median } from './common.mjs';

const SUBSCRIBERS = Number(process.env.EVENTS_SUBSCRIBERS ?? 10_000);
const ROOMS = 100;
const WRITES_PER_SECOND = 100;
const SECONDS = 5;


async function json(response) {
  return response.json();
}

async function login(service) {
  const { clientPassValue } = await import('../dist/index.js');
  const body = JSON.stringify({ user: 'alice', pass: clientPassValue('alice-secret'), appNames: ['crm'] });
  const answer = await json(await service.fetch(new Request('http://bench/v1/login', { method: 'POST', headers: { appkey: APP_KEY, 'content-type': 'application/json' }, body })));
  if (answer.status.internalStatus !== '0') throw new Error(JSON.stringify(answer));
  return answer.data.sessionId;
}

function eventsUrl(subscriptions) {
  return `http://bench/v1/events?subscribe=${encodeURIComponent(JSON.stringify(subscriptions))}`;
}

const decoder = new TextDecoder();

/** Opens a stream and reads it, calling `onSeq(seq)` for each event's `Seq` field. */
async function subscriber(service, sessionId, subscriptions, onSeq) {
  const response = await service.fetch(new Request(eventsUrl(subscriptions), { headers: { appkey: APP_KEY, sessionId } }));
  if (response.status !== 200) throw new Error(`events answered ${response.status}: ${await response.text()}`);
  const reader = response.body.getReader();
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      if (!onSeq) continue;
      for (const match of decoder.decode(value).matchAll(/"Seq":(\d+)/g)) onSeq(Number(match[1]));
    }
  })().catch(() => undefined);
  return reader;
}

const options = (extra = {}) => ({
  data: demoData(),
  users: { passwordIterations: 1 },
  session: { maxPerUser: 100_000 },
  access: { rules: { Customer: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'] } } },
  events: { maxStreams: 100_000, keepAliveMs: 600_000 },
  onError: (error) => console.error(error),
  ...extra,
});

async function write(service, sessionId, method, path, fields) {
  const response = await service.fetch(new Request(`http://bench${path}`, { method, headers: { appkey: APP_KEY, sessionId, 'content-type': 'application/json' }, body: JSON.stringify(fields) }));
  const answer = await json(response);
  if (answer.status.internalStatus !== '0') throw new Error(JSON.stringify(answer));
  return answer.data;
}

const settle = async () => {
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage().heapUsed;
};

const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

/** `subscribers` sessions (one stream each) on `reader`, writes on `writer` at 100/s for SECONDS; latency and rate. */
async function deliveryRun(writer, reader, subscribers) {
  const writerSession = await login(writer);
  const rooms = [];
  for (let room = 0; room < ROOMS; room++) rooms.push((await write(writer, writerSession, 'POST', '/v1/object/Customer', { Name: `Room ${room}`, Room: room, Seq: -1 }))['~ObjectID']);
  const sessions = [];
  for (let i = 0; i < subscribers; i++) sessions.push(await login(reader));
  const answeredAt = new Map();
  const arrivals = []; // [seq, time]: in process an event may arrive before its write's answer does
  const sentAt = new Map();
  let received = 0;
  const onSeq = (seq) => {
    received++;
    if (seq >= 0) arrivals.push(seq, performance.now());
  };
  const before = await settle();
  const readers = [];
  for (let i = 0; i < subscribers; i++) readers.push(await subscriber(reader, sessions[i], [{ className: 'Customer', query: { Room: i % ROOMS } }], onSeq));
  const idleBytes = ((await settle()) - before) / subscribers;
  const writeTimes = [];
  const started = performance.now();
  const total = WRITES_PER_SECOND * SECONDS;
  for (let seq = 0; seq < total; seq++) {
    const due = started + (seq * 1000) / WRITES_PER_SECOND;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const sent = performance.now();
    sentAt.set(seq, sent);
    await write(writer, writerSession, 'PATCH', `/v1/object/${rooms[seq % ROOMS]}`, { Seq: seq });
    answeredAt.set(seq, performance.now());
    writeTimes.push(performance.now() - sent);
  }
  const expected = total * (subscribers / ROOMS);
  const deadline = performance.now() + 30_000;
  while (received < expected && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const elapsed = (performance.now() - started) / 1000;
  const latencies = [];
  const fromSent = [];
  for (let i = 0; i < arrivals.length; i += 2) {
    latencies.push(arrivals[i + 1] - answeredAt.get(arrivals[i]));
    fromSent.push(arrivals[i + 1] - sentAt.get(arrivals[i]));
  }
  await Promise.all(readers.map((r) => r.cancel().catch(() => undefined)));
  return { idleBytes, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), sentP50: percentile(fromSent, 0.5), sentP99: percentile(fromSent, 0.99), eventsPerSecond: received / elapsed, received, expected, writeMs: median(writeTimes) };
}

/** PATCH rate on a service with 1,000 subscribers whose query does not match, against one with none, in alternating rounds. */
async function writeCost(rates) {
  const patchers = [];
  const services = [];
  for (const subscribers of [1000, 0]) {
    const service = createService(options());
    await service.ready;
    services.push(service);
    const sessionId = await login(service);
    const id = (await write(service, sessionId, 'POST', '/v1/object/Customer', { Name: 'Cost', Room: -1 }))['~ObjectID'];
    for (let s = 0; s < subscribers; s++) await subscriber(service, await login(service), [{ className: 'Customer', query: { Room: 1 + (s % ROOMS) } }]);
    let i = 0;
    patchers.push(() => write(service, sessionId, 'PATCH', `/v1/object/${id}`, { Seq: i++ }));
  }
  await settle();
  const { alternatingRates } = await import('./common.mjs');
  const result = await alternatingRates(rates, patchers[0], patchers[1], { rounds: 9, ms: 400 });
  await Promise.all(services.map((service) => service.close()));
  return { with: result.cpu.a, without: result.cpu.b, ratio: result.cpu.ratio };
}

async function twoInstances(kind) {
  let stores;
  try {
    stores = { postgres: await import('../dist/postgres.js'), redis: await import('../dist/redis.js') };
  } catch {
    return undefined;
  }
  const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const run = `${Date.now().toString(36)}${kind[0]}`;
  const schema = `odbrest_bench_events_${run}`;
  const seed = new stores.postgres.PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
  try {
    const { importObjects } = await import('../dist/index.js');
    await importObjects(seed, demoData(), 1);
  } catch {
    await seed.close().catch(() => undefined);
    return undefined; // no PostgreSQL here
  } finally {
    await seed.close().catch(() => undefined);
  }
  const instances = [];
  for (let i = 0; i < 2; i++) {
    const bus = kind === 'postgres' ? new stores.postgres.PostgresEventBus({ connectionString: DATABASE_URL, channel: `bench_${run}` }) : new stores.redis.RedisEventBus({ url: REDIS_URL, channel: `bench:${run}` });
    const service = createService(
      options({
        store: new stores.postgres.PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' }),
        kv: new stores.redis.RedisKeyValueStore({ url: REDIS_URL, prefix: `bench-events:${run}:` }),
        events: { maxStreams: 100_000, keepAliveMs: 600_000, bus },
        data: undefined,
      }),
    );
    await Promise.all([service.ready, bus.ready]);
    instances.push(service);
  }
  try {
    return await deliveryRun(instances[0], instances[1], 1000);
  } finally {
    await Promise.all(instances.map((service) => service.close()));
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
}

/** Heap per open stream nobody reads (the service's side and the `Response` it answered). */
async function idleMemory(count) {
  const service = createService(options());
  await service.ready;
  const sessions = [];
  for (let i = 0; i < count; i++) sessions.push(await login(service));
  const kept = [];
  const before = await settle();
  for (let i = 0; i < count; i++) {
    kept.push(await service.fetch(new Request(eventsUrl([{ className: 'Customer', query: { Room: i % ROOMS } }]), { headers: { appkey: APP_KEY, sessionId: sessions[i] } })));
  }
  const bytes = ((await settle()) - before) / count;
  await Promise.all(kept.map((response) => response.body.cancel()));
  await service.close();
  return bytes;
}

/** Heap per stream a server (listening on `port` once `listen` resolves) holds while a reader in another process keeps `streams` open. */
async function heldOverHttp(listen, streams) {
  const { port, close } = await listen();
  try {
    const before = await settle();
    const reader = fork(new URL('./idle-reader.mjs', import.meta.url), [String(port), APP_KEY]);
    try {
      reader.send({ streams });
      await once(reader, 'message');
      await new Promise((resolve) => setTimeout(resolve, 200));
      return ((await settle()) - before) / streams.length;
    } finally {
      reader.kill();
      await once(reader, 'exit');
    }
  } finally {
    await close();
  }
}

/** Heap per idle stream over HTTP (the Node adapter) and per held streaming answer of a bare node:http server. */
async function idleMemoryOverHttp(count) {
  const service = createService(options());
  await service.ready;
  const streams = [];
  for (let i = 0; i < count; i++) {
    const url = new URL(eventsUrl([{ className: 'Customer', query: { Room: i % ROOMS } }]));
    streams.push([url.pathname + url.search, await login(service)]);
  }
  const ours = await heldOverHttp(async () => {
    const server = await serve(service, { port: 0, hostname: '127.0.0.1' });
    return { port: server.address().port, close: () => (server.closeAllConnections(), new Promise((resolve) => server.close(resolve))) };
  }, streams);
  await service.close();
  const held = [];
  const bare = await heldOverHttp(async () => {
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
      res.write(': bare\n\n');
      held.push(res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { port: server.address().port, close: () => (server.closeAllConnections(), new Promise((resolve) => server.close(resolve))) };
  }, streams);
  return { ours, bare };
}

export default async function bench({ rates }) {
  const service = createService(options());
  await service.ready;
  const one = await deliveryRun(service, service, SUBSCRIBERS);
  await service.close();
  const cost = await writeCost(rates);
  const rows = [
    { name: `${SUBSCRIBERS} subscribers, ${WRITES_PER_SECOND} writes/s (each reaching ${SUBSCRIBERS / ROOMS}): delivery latency p50`, value: one.p50, unit: 'ms', reference: one.writeMs, ratio: one.p50 / one.writeMs },
    { name: '... delivery latency p99', value: one.p99, unit: 'ms', reference: one.writeMs, ratio: one.p99 / one.writeMs },
    { name: '... from the write request sent: p50', value: one.sentP50, unit: 'ms', reference: one.writeMs, ratio: one.sentP50 / one.writeMs },
    { name: '... from the write request sent: p99', value: one.sentP99, unit: 'ms', reference: one.writeMs, ratio: one.sentP99 / one.writeMs },
    { name: '... events delivered', value: one.eventsPerSecond, unit: 'events/s', reference: (WRITES_PER_SECOND * SUBSCRIBERS) / ROOMS, ratio: one.received / one.expected },
    { name: 'memory per idle subscriber in process (heap, the service and the Response)', value: (await idleMemory(SUBSCRIBERS)) / 1024, unit: 'KiB', target: '< 4 KB' },
    { name: 'memory per idle subscriber with a reader waiting on it (heap)', value: one.idleBytes / 1024, unit: 'KiB' },
    ...(await idleMemoryOverHttp(Math.min(SUBSCRIBERS, 5000)).then(({ ours, bare }) => [
      { name: 'memory per idle subscriber over HTTP, beyond a bare node:http server holding as many streaming answers (server heap; reader in another process)', value: (ours - bare) / 1024, unit: 'KiB', target: '< 4 KB (issue 36)' },
      { name: '... the Node adapter\'s server per stream in all (reference: the bare server per answer)', value: ours / 1024, unit: 'KiB', reference: bare / 1024, ratio: ours / bare },
    ])),
    { name: 'PATCH with 1,000 non-matching subscribers (CPU rate)', value: cost.with, unit: 'writes/s', reference: cost.without, ratio: cost.ratio, target: 'ratio > 0.9 (< 10 % cost)' },
  ];
  for (const kind of ['postgres', 'redis']) {
    const two = await twoInstances(kind).catch((error) => (console.error(`two instances through ${kind}:`, error.message), undefined));
    if (!two) {
      rows.push({ name: `two instances through ${kind}: skipped (no PostgreSQL and Redis reachable)`, value: 0, unit: '' });
      continue;
    }
    rows.push({ name: `two instances through ${kind}, 1000 subscribers on B, writes on A: latency p50`, value: two.p50, unit: 'ms', reference: two.writeMs, ratio: two.p50 / two.writeMs });
    rows.push({ name: `... through ${kind}: latency p99`, value: two.p99, unit: 'ms', reference: two.writeMs, ratio: two.p99 / two.writeMs });
    rows.push({ name: `... through ${kind}: events delivered`, value: two.eventsPerSecond, unit: 'events/s', ratio: two.received / two.expected });
  }
  return rows;
}
