/**
 * Change events across two service instances sharing PostgreSQL (objects) and Redis (sessions),
 * with the bus through PostgreSQL LISTEN/NOTIFY and through Redis pub/sub: a write on one instance
 * reaches subscribers on the other, as each session may see it; a logout on one ends the stream on the other.
 */
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kvKeys } from '../../src/storage/keys.js';
import { createService, importObjects, type EventBus, type Service } from '../../src/index.js';
import { PostgresEventBus, PostgresObjectStore } from '../../stores/postgres.js';
import { RedisEventBus, RedisKeyValueStore } from '../../stores/redis.js';
import { APP_KEY, call, demoData, login } from '../helpers.js';
import { DATABASE_URL, deleteKeys, dropSchema, REDIS_URL, RUN_ID, serverAvailable } from '../support/servers.js';
import { SseReader } from './sse.js';

const available = (await serverAvailable('Redis', 'the two-instance event tests')) && (await serverAvailable('PostgreSQL', 'the two-instance event tests'));

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
const buses: Array<[string, (run: string, instance: string) => EventBus & { ready: Promise<void> }]> = [
  // messages over NOTIFY's limit go through a table in the test's schema (dropped with it)
  ['PostgreSQL LISTEN/NOTIFY', (run, instance) => new PostgresEventBus({ connectionString: named(`odbrest_bus_${run}_${instance}`), channel: `odbrest_events_${run}`, payloadTable: `odbrest_events_${run}.event_payloads` })],
  ['Redis pub/sub', (run) => new RedisEventBus({ url: REDIS_URL, channel: `odbrest-events:${run}` })],
];

describe.runIf(available).each(buses)('two instances, events through %s', (name, makeBus) => {
  const run = `${RUN_ID}_${name.startsWith('Redis') ? 'r' : 'p'}`;
  const schema = `odbrest_events_${run}`;
  const prefix = `odbrest-events:${run}:`;
  let a: Service;
  let b: Service;
  /** Holds back each publish of instance A this long (0: not at all). */
  let slowPublishMs = 0;

  beforeAll(async () => {
    const seed = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
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
        store: new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' }),
        kv: new RedisKeyValueStore({ url: REDIS_URL, prefix }),
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

  async function stream(service: Service, sessionId: string, subscriptions: unknown): Promise<SseReader> {
    const url = `http://odbrest.test/v1/events?subscribe=${encodeURIComponent(JSON.stringify(subscriptions))}`;
    const response = await service.fetch(new Request(url, { headers: { appkey: APP_KEY, sessionId } }));
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
    const redis = new Redis(REDIS_URL);
    await redis.del(`${prefix}${kvKeys.session(bob)}`).finally(() => redis.quit());
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
