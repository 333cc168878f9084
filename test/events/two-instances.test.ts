/**
 * Change events across two service instances sharing PostgreSQL (objects) and Redis (sessions),
 * with the bus through PostgreSQL LISTEN/NOTIFY and through Redis pub/sub: a write on one instance
 * reaches subscribers on the other, as each session may see it; a logout on one ends the stream on
 * the other; a stream reconnecting with Last-Event-ID gets what it missed, in order. The same again on
 * a three-node Redis Cluster (sessions and the bus, sharded pub/sub) with B reading listings from a
 * streaming replica, both started by the test on ports of their own (test/support).
 */
import pg from 'pg';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kvKeys } from '../../src/storage/keys.js';
import { createService, importObjects, type EventBus, type Service } from '../../src/index.js';
import { PostgresEventBus, PostgresObjectStore } from '../../stores/postgres.js';
import { RedisEventBus, RedisKeyValueStore } from '../../stores/redis.js';
import { APP_KEY, call, demoData, login } from '../helpers.js';
import { startReplicaPair } from '../support/pg-replica.js';
import { startRedisCluster } from '../support/redis-cluster.js';
import { DATABASE_URL, deleteKeys, dropSchema, REDIS_URL, RUN_ID, serverAvailable } from '../support/servers.js';
import { SseReader } from './sse.js';

const available = (await serverAvailable('Redis', 'the two-instance event tests')) && (await serverAvailable('PostgreSQL', 'the two-instance event tests'));
const ON_CLUSTER = 'the two-instance event tests on a Redis Cluster with a read replica';
const cluster = available ? await startRedisCluster(ON_CLUSTER) : undefined;
const pair = cluster ? await startReplicaPair(ON_CLUSTER) : undefined;
afterAll(async () => {
  await cluster?.close();
  await pair?.close();
});

/** Customers: everyone reads, sales write; only alice (admins) sees a `Vip` customer. */
const access = {
  rules: { Customer: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'] } },
  authorize: async (context: { user(): Promise<{ id: string } | undefined> }, question: { action: string; object?: { fields: Record<string, unknown> } }) =>
    question.action !== 'read' || question.object?.fields.Vip !== true || (await context.user())?.id === 'USR00001',
};

/** The connections of an instance's PostgreSQL bus carry its name, so that a test can end them. */
const named = (name: string) => {
  const url = new URL(DATABASE_URL);
  url.searchParams.set('application_name', name);
  return url.href;
};
/** Where the instances keep their objects and sessions: the shared servers, or a cluster and a replica pair of the test's own. */
interface Servers {
  databaseUrl: string;
  /** B reads listings from this replica too. */
  replicaUrl?: string;
  kv(prefix: string): RedisKeyValueStore;
  /** Deletes a key behind the services' backs (an expiry, another process). */
  deleteKey(key: string): Promise<void>;
}
/** Runs `work` on a Redis client of its own, then closes it. */
const withClient = async (client: Redis | Cluster, work: (client: Redis | Cluster) => Promise<unknown>) => void (await work(client).finally(() => client.quit()));
const shared: Servers = {
  databaseUrl: DATABASE_URL,
  kv: (prefix) => new RedisKeyValueStore({ url: REDIS_URL, prefix }),
  deleteKey: (key) => withClient(new Redis(REDIS_URL), (redis) => redis.del(key)),
};
type MakeBus = (run: string, instance: string) => EventBus & { ready: Promise<void> };
const buses: Array<[string, MakeBus, Servers]> = [
  // messages over NOTIFY's limit go through a table in the test's schema (dropped with it)
  [
    'PostgreSQL LISTEN/NOTIFY',
    (run, instance) => new PostgresEventBus({ connectionString: named(`odbrest_bus_${run}_${instance}`), channel: `odbrest_events_${run}`, payloadTable: `odbrest_events_${run}.event_payloads` }),
    shared,
  ],
  ['Redis pub/sub', (run) => new RedisEventBus({ url: REDIS_URL, channel: `odbrest-events:${run}` }), shared],
];
if (cluster && pair) {
  const { nodes } = cluster;
  buses.push([
    'Redis Cluster sharded pub/sub, B listing from a replica',
    (run) => new RedisEventBus({ nodes, channel: `odbrest-events:${run}` }),
    {
      databaseUrl: pair.primaryUrl,
      replicaUrl: pair.replicaUrl,
      kv: (prefix) => new RedisKeyValueStore({ nodes, prefix }),
      deleteKey: (key) => withClient(new Cluster(nodes), (redis) => redis.del(key)),
    },
  ]);
}

describe.runIf(available).each(buses)('two instances, events through %s', (name, makeBus, servers) => {
  const run = `${RUN_ID}_${name.startsWith('Redis Cluster') ? 'c' : name.startsWith('Redis') ? 'r' : 'p'}`;
  const schema = `odbrest_events_${run}`;
  const prefix = `odbrest-events:${run}:`;
  let a: Service;
  let b: Service;
  /** Holds back each publish of instance A this long (0: not at all). */
  let slowPublishMs = 0;

  beforeAll(async () => {
    const seed = new PostgresObjectStore({ connectionString: servers.databaseUrl, schema, table: 'objects' });
    await importObjects(seed, demoData(), 1000);
    await seed.close();
    const instance = async (name: string) => {
      const bus = makeBus(run, name);
      const held: EventBus = {
        publish: async (message) => {
          if (name === 'a' && slowPublishMs > 0) await new Promise((resolve) => setTimeout(resolve, slowPublishMs));
          return bus.publish(message);
        },
        subscribe: (listener) => bus.subscribe(listener),
        close: () => bus.close!(),
      };
      const service = createService({
        store: new PostgresObjectStore({ connectionString: servers.databaseUrl, schema, table: 'objects', replicas: name === 'b' && servers.replicaUrl ? [servers.replicaUrl] : undefined }),
        kv: servers.kv(prefix),
        access,
        events: { bus: held },
        users: { passwordIterations: 1000 },
        onError: (error) => console.error(error),
      });
      await Promise.all([service.ready, bus.ready]);
      return service;
    };
    [a, b] = [await instance('a'), await instance('b')];
  });

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await dropSchema(schema);
    await deleteKeys(prefix);
  });

  async function stream(service: Service, sessionId: string, subscriptions: unknown, lastEventId?: string): Promise<SseReader> {
    const url = `http://odbrest.test/v1/events?subscribe=${encodeURIComponent(JSON.stringify(subscriptions))}`;
    const headers: Record<string, string> = { appkey: APP_KEY, sessionId };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    const response = await service.fetch(new Request(url, { headers }));
    expect(response.status).toBe(200);
    return new SseReader(response);
  }

  it('a write on A reaches subscribers of different groups on B, each as they may see it', async () => {
    const alice = await login(a, 'alice');
    const bob = await login(b, 'bob');
    const aliceOnB = await stream(b, alice, [{ className: 'Customer' }]);
    const bobOnB = await stream(b, bob, [{ className: 'Customer' }]);
    const bobOnA = await stream(a, bob, [{ className: 'Customer', query: { City: 'Lübeck' } }]);
    const vip = (await call(a, 'POST', '/v1/object/Customer', { headers: { sessionId: alice }, json: { Name: 'Hidden AG', Vip: true, City: 'Lübeck' } })).body.data['~ObjectID'];
    const plain = (await call(a, 'POST', '/v1/object/Customer', { headers: { sessionId: alice }, json: { Name: 'Open KG', City: 'Lübeck' } })).body.data['~ObjectID'];
    expect(await aliceOnB.next()).toMatchObject({ event: 'create', json: { '~ObjectID': vip, object: { Name: 'Hidden AG' } } });
    expect(await aliceOnB.next()).toMatchObject({ event: 'create', json: { '~ObjectID': plain } });
    const toBob = await bobOnB.next(); // never the VIP customer
    expect(toBob).toMatchObject({ event: 'create', json: { '~ObjectID': plain } });
    expect(toBob.json.object).toEqual((await call(b, 'GET', `/v1/object/${plain}`, { headers: { sessionId: bob } })).body.data);
    expect(await bobOnA.next()).toMatchObject({ event: 'create', json: { '~ObjectID': plain } });
    await call(b, 'PATCH', `/v1/object/${vip}`, { headers: { sessionId: alice }, json: { Vip: false } }); // written on B, now bob may read it
    expect(await bobOnA.next()).toMatchObject({ event: 'enter', json: { '~ObjectID': vip } });
    expect(await bobOnB.next()).toMatchObject({ event: 'enter', json: { '~ObjectID': vip } });
    await Promise.all([aliceOnB.close(), bobOnB.close(), bobOnA.close()]);
  });

  it('each object\'s writes arrive in write order, from both instances', async () => {
    const alice = await login(a, 'alice');
    const events = await stream(b, alice, [{ className: 'Customer', query: { City: 'Order' } }]);
    const id = (await call(a, 'POST', '/v1/object/Customer', { headers: { sessionId: alice }, json: { Name: 'n0', City: 'Order' } })).body.data['~ObjectID'];
    for (let i = 1; i <= 10; i++) await call(i % 2 ? b : a, 'PATCH', `/v1/object/${id}`, { headers: { sessionId: alice }, json: { Name: `n${i}` } });
    const names = [];
    for (let i = 0; i <= 10; i++) names.push((await events.next()).json.object.Name);
    expect(names).toEqual(Array.from({ length: 11 }, (_, i) => `n${i}`));
    await events.close();
  });

  it("a stream on B reconnecting with Last-Event-ID gets what it missed of both instances' writes, in order, then the rest; the session's listing on B agrees", async () => {
    const alice = await login(a, 'alice');
    const subscriptions = [{ className: 'Customer', query: { City: 'Resume' } }];
    let events = await stream(b, alice, subscriptions);
    const id = (await call(a, 'POST', '/v1/object/Customer', { headers: { sessionId: alice }, json: { Name: 'n0', City: 'Resume' } })).body.data['~ObjectID'];
    for (let i = 1; i <= 3; i++) await call(a, 'PATCH', `/v1/object/${id}`, { headers: { sessionId: alice }, json: { Name: `n${i}` } });
    const seen = [];
    for (let i = 0; i <= 3; i++) seen.push(await events.next());
    expect(seen.map((event) => event.json.object.Name)).toEqual(['n0', 'n1', 'n2', 'n3']);
    await events.close();
    // written while the stream is away, on both instances
    for (let i = 4; i <= 9; i++) await call(i % 2 ? b : a, 'PATCH', `/v1/object/${id}`, { headers: { sessionId: alice }, json: { Name: `n${i}` } });
    events = await stream(b, alice, subscriptions, seen.at(-1)!.id);
    const missed = [];
    for (let i = 4; i <= 9; i++) missed.push(await events.next());
    expect(missed.map((event) => [event.event, event.json.object.Name])).toEqual(Array.from({ length: 6 }, (_, i) => ['update', `n${i + 4}`]));
    const ids = [...seen, ...missed].map((event) => Number(event.id!.slice(event.id!.lastIndexOf('-') + 1)));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(ids.length);
    await call(a, 'PATCH', `/v1/object/${id}`, { headers: { sessionId: alice }, json: { Name: 'n10' } });
    expect(await events.next()).toMatchObject({ event: 'update', json: { '~ObjectID': id, object: { Name: 'n10' } } });
    const listed = await call(b, 'GET', `/v1/objects/Customer?${encodeURI('query={"City":"Resume"}')}`, { headers: { sessionId: alice } });
    expect(listed.body.data['~Elements'].map((object: Record<string, unknown>) => object.Name)).toEqual(['n10']);
    // an id of B's stream means nothing to A: it says reset rather than guess
    const elsewhere = await stream(a, alice, subscriptions, seen.at(-1)!.id);
    expect((await elsewhere.next()).event).toBe('reset');
    await Promise.all([events.close(), elsewhere.close()]);
  });

  it('a write is answered once its event is on the bus, so the next write of the object, on the other instance, arrives after it', async () => {
    const alice = await login(a, 'alice');
    const events = await stream(b, alice, [{ className: 'Customer', query: { City: 'Held' } }]);
    const id = (await call(b, 'POST', '/v1/object/Customer', { headers: { sessionId: alice }, json: { Name: 'n0', City: 'Held' } })).body.data['~ObjectID'];
    slowPublishMs = 100; // A's bus is slow; B's is not
    try {
      for (let i = 1; i <= 6; i++) await call(i % 2 ? a : b, 'PATCH', `/v1/object/${id}`, { headers: { sessionId: alice }, json: { Name: `n${i}` } });
    } finally {
      slowPublishMs = 0;
    }
    const names = [];
    for (let i = 0; i <= 6; i++) names.push((await events.next()).json.object.Name);
    expect(names).toEqual(Array.from({ length: 7 }, (_, i) => `n${i}`));
    await events.close();
  });

  it.runIf(name.startsWith('PostgreSQL'))('a stream is told reset when its instance stopped listening for a while, then goes on', async () => {
    const alice = await login(a, 'alice');
    const events = await stream(a, alice, [{ className: 'Customer', query: { City: 'Gap' } }]);
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    // the server ends A's bus connections (a restart, a failover, an administrator): what B publishes meanwhile never reaches A
    const { rows } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [`odbrest_bus_${run}_a`]);
    await admin.end();
    expect(rows.length).toBeGreaterThan(0);
    await call(b, 'POST', '/v1/object/Customer', { headers: { sessionId: alice }, json: { Name: 'maybe missed', City: 'Gap' } });
    let event = await events.next();
    if (event.event === 'create') event = await events.next(); // it may have got through before the connection went
    expect(event.event).toBe('reset');
    const id = (await call(b, 'POST', '/v1/object/Customer', { headers: { sessionId: alice }, json: { Name: 'after', City: 'Gap' } })).body.data['~ObjectID'];
    expect(await events.next()).toMatchObject({ event: 'create', json: { '~ObjectID': id } });
    await events.close();
  });

  it('an object too large for one notification still arrives whole', async () => {
    const alice = await login(a, 'alice');
    const events = await stream(b, alice, [{ className: 'Customer', query: { City: 'Big' } }]);
    const notes = 'n'.repeat(20_000);
    const id = (await call(a, 'POST', '/v1/object/Customer', { headers: { sessionId: alice }, json: { Name: 'Large', City: 'Big', Notes: notes } })).body.data['~ObjectID'];
    const event = await events.next();
    expect(event).toMatchObject({ event: 'create', json: { '~ObjectID': id, object: { Name: 'Large', Notes: notes } } });
    await events.close();
  });

  it('a large object (over 8,000 bytes) entering and leaving a filter on A is enter and leave on B', async () => {
    const alice = await login(a, 'alice');
    const events = await stream(b, alice, [{ className: 'Customer', query: { City: 'Huge' } }]);
    const notes = 'h'.repeat(20_000);
    const headers = { sessionId: alice };
    const id = (await call(a, 'POST', '/v1/object/Customer', { headers, json: { Name: 'Huge', City: 'Elsewhere', Notes: notes } })).body.data['~ObjectID'];
    await call(a, 'PATCH', `/v1/object/${id}`, { headers, json: { City: 'Huge' } });
    expect(await events.next()).toMatchObject({ event: 'enter', json: { '~ObjectID': id, object: { City: 'Huge', Notes: notes } } });
    await call(a, 'PATCH', `/v1/object/${id}`, { headers, json: { Notes: `${notes}!` } });
    expect(await events.next()).toMatchObject({ event: 'update', json: { '~ObjectID': id, object: { Notes: `${notes}!` } } });
    await call(a, 'PATCH', `/v1/object/${id}`, { headers, json: { City: 'Elsewhere' } });
    expect(await events.next()).toMatchObject({ event: 'leave', json: { '~ObjectID': id } });
    await events.close();
  });

  it('a session whose record goes from Redis (an expiry, another process) ends its streams on both instances within about a second', async () => {
    const bob = await login(a, 'bob');
    const [onA, onB] = await Promise.all([stream(a, bob, [{ className: 'Customer' }]), stream(b, bob, [{ className: 'Customer' }])]);
    await servers.deleteKey(`${prefix}${kvKeys.session(bob)}`);
    // the default keep-alive is 25 s: these ends come from the once-a-second check (SseReader waits 5 s)
    expect(await onA.next()).toMatchObject({ event: 'end', json: { internalStatus: '201' } });
    expect(await onB.next()).toMatchObject({ event: 'end', json: { internalStatus: '201' } });
  });

  it('a logout on A ends the stream on B with end', async () => {
    const bob = await login(a, 'bob');
    const events = await stream(b, bob, [{ className: 'Customer' }]);
    await call(a, 'POST', '/v1/logout', { headers: { sessionId: bob } });
    const end = await events.next();
    expect(end).toMatchObject({ event: 'end', json: { internalStatus: '201' } });
  });
});
