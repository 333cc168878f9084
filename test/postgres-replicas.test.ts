/**
 * Read replicas of the PostgreSQL store (issue 37, item 2) against a real streaming replica: a primary
 * and a replica the test starts on ports of their own (test/support/pg-replica.ts), never the shared
 * server. Two services over the primary, the second also reading listings from the replica, sessions
 * in one Redis; the replica's statements are counted (its replayed-position checks aside).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAccess } from '../examples/demo-access.mjs';
import { createService, importObjects, type Service } from '../src/index.js';
import { PostgresObjectStore } from '../stores/postgres.js';
import { RedisKeyValueStore } from '../stores/redis.js';
import { call, demoData, login } from './helpers.js';
import { startReplicaPair, type ReplicaPair } from './support/pg-replica.js';
import { deleteKeys, REDIS_URL, RUN_ID, serverAvailable } from './support/servers.js';

const SUITES = 'the PostgreSQL read replica tests';
const redisUp = await serverAvailable('Redis', SUITES);
const pair = redisUp ? await startReplicaPair(SUITES) : undefined;
const prefix = `odbrest-replicas-${RUN_ID}:`;

describe.runIf(pair)('PostgreSQL read replicas', () => {
  const { primaryUrl, replicaUrl } = pair as ReplicaPair;
  const replicaReads = { count: 0 };
  let replicaPool: pg.Pool;
  let admin: pg.Client;
  let kv: RedisKeyValueStore;
  const stores: PostgresObjectStore[] = [];
  let services: Service[];

  beforeAll(async () => {
    replicaPool = new pg.Pool({ connectionString: replicaUrl, max: 4, connectionTimeoutMillis: 1000 });
    replicaPool.on('error', () => undefined);
    replicaPool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
        if (!text?.includes('pg_last_wal_replay_lsn')) replicaReads.count++;
        return query(...args);
      };
    });
    admin = new pg.Client({ connectionString: replicaUrl });
    admin.on('error', () => undefined); // the replica is stopped in a test
    await admin.connect();
    const seed = new PostgresObjectStore({ connectionString: primaryUrl, cache: false });
    await importObjects(seed, demoData(), 1000);
    await seed.close();
    kv = new RedisKeyValueStore({ url: REDIS_URL, prefix });
    // A writes to the primary; B also reads listings from the replica (a lag bound no pause of this test reaches)
    stores.push(new PostgresObjectStore({ connectionString: primaryUrl }));
    stores.push(new PostgresObjectStore({ connectionString: primaryUrl, replicas: [replicaPool], replica: { maxLagMs: 600_000 } }));
    services = await Promise.all(
      stores.map(async (store) => {
        const service = createService({ store, kv, access: demoAccess, users: { passwordIterations: 1000 }, onError: () => undefined });
        await service.ready;
        return service;
      }),
    );
  }, 120_000);

  afterAll(async () => {
    for (const store of stores) await store.close();
    await replicaPool?.end();
    await admin?.end().catch(() => undefined);
    await kv?.close();
    await deleteKeys(prefix);
    await pair?.close();
  });

  const list = (i: number, sessionId: string, query: string) => call(services[i]!, 'GET', `/v1/objects/Customer?${encodeURI(query)}`, { headers: { sessionId } });
  /** Lists on B until the replica answers one (it is used once a check found it caught up). */
  async function untilReplicaServes(sessionId: string) {
    for (let attempt = 0; attempt < 200; attempt++) {
      const before = replicaReads.count;
      expect((await list(1, sessionId, 'query={"City":"Berlin"}')).status).toBe(200);
      if (replicaReads.count > before) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the replica never answered');
  }

  it("a session's listing reflects its own write on the other instance while the replica has not replayed it (from the primary); another session's reads stay on the replica", { timeout: 60_000 }, async () => {
    const [writer, reader] = [await login(services[0]!, 'alice'), await login(services[1]!, 'alice')];
    await untilReplicaServes(writer);
    await admin.query('SELECT pg_wal_replay_pause()');
    try {
      const patched = await call(services[0]!, 'PATCH', '/v1/object/CUS00008', { headers: { sessionId: writer }, json: { City: 'Replica Town' } });
      expect(patched.status).toBe(200);
      let before = replicaReads.count;
      const mine = await list(1, writer, 'query={"City":"Replica Town"}');
      expect(mine.body.data['~Elements'].map((object: Record<string, unknown>) => object['~ObjectID'])).toEqual(['CUS00008']);
      expect(replicaReads.count).toBe(before); // the replica has not replayed the write: the primary answered
      before = replicaReads.count;
      const theirs = await list(1, reader, 'query={"City":"Replica Town"}');
      expect(theirs.status).toBe(200);
      // a session that never wrote: the replica answered (without the write); an empty answer also asks
      // the replica whether the class holds objects (a name that is no class is 404)
      expect(replicaReads.count).toBeGreaterThan(before);
      expect(theirs.body.data['~Elements']).toEqual([]);
    } finally {
      await admin.query('SELECT pg_wal_replay_resume()');
    }
  });

  it('1,000 writes of one session answered by A, each listed at once through B: none stale, and the replica answers some', { timeout: 300_000 }, async () => {
    const [sessionId, other] = [await login(services[0]!, 'alice'), await login(services[1]!, 'alice')];
    await untilReplicaServes(sessionId);
    const before = replicaReads.count;
    let stale = 0;
    for (let i = 0; i < 1000; i++) {
      const written = await call(services[0]!, 'PATCH', '/v1/object/CUS00009', { headers: { sessionId }, json: { City: `Pair ${i}` } });
      expect(written.status).toBe(200);
      const listed = await list(1, sessionId, `query={"City":"Pair ${i}"}`);
      const found = listed.body.data['~Elements'];
      if (found.length !== 1 || found[0]['~StoreTime'] !== written.body.data['~StoreTime']) stale++;
      // and a listing in between by a session that never wrote: the replica may answer it
      if (i % 10 === 0) await list(1, other, 'query={"City":"Berlin"}');
    }
    expect(stale).toBe(0);
    expect(replicaReads.count).toBeGreaterThan(before);
  });

  it('a replica that stops is skipped (the primary answers), and used again once it is back', { timeout: 120_000 }, async () => {
    const sessionId = await login(services[1]!, 'alice');
    await untilReplicaServes(sessionId);
    await pair!.stopReplica();
    for (let i = 0; i < 5; i++) expect((await list(1, sessionId, 'query={"City":"Berlin"}')).status).toBe(200);
    await pair!.startReplica();
    await untilReplicaServes(sessionId);
  });
});
