/**
 * Real outages under load: a Redis of the test's own stopped and started again, and PostgreSQL cut off
 * (connections terminated, then the network path closed and reopened). While down, every answer is a
 * `503` envelope; nothing crashes; afterwards the service works again without being restarted.
 */
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { StorageUnavailableError, type Service } from '../src/index.js';
import { PostgresObjectStore } from '../stores/postgres.js';
import { RedisKeyValueStore } from '../stores/redis.js';
import { call, demoService, expectError, loginBody, USERS } from './helpers.js';
import { eventually, PrivateRedis, sleep, startLoad, TcpProxy } from './support/outage.js';
import { freePort } from './support/processes.js';
import { DATABASE_URL, dropSchema, requireOrSkip, RUN_ID, serverAvailable } from './support/servers.js';

/**
 * Eight clients log in as alice at once: more attempts in flight than the default per-user limit
 * admits (each takes its place before its password is checked), so these tests, which are about
 * outages, raise it.
 */
const LOAD_LIMITS = { loginLimit: { perUser: 100, perAddress: 1000 } };

/** A client that holds a session and logs in again when it is gone, as the real client does on 201. */
function sessionClient(service: Service) {
  let sessionId: string | undefined;
  return async () => {
    if (!sessionId) {
      const login = await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice) });
      if (login.body?.status?.internalStatus !== '0') return login;
      sessionId = login.body.data.sessionId as string;
    }
    const result = await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId } });
    if (result.body?.status?.internalStatus === '201') sessionId = undefined;
    return result;
  };
}

const redisServerInstalled =
  spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0 ||
  requireOrSkip('no redis-server binary on PATH', 'the Redis outage test');

describe.runIf(redisServerInstalled)('Redis outage', () => {
  it('answers 503 while Redis is down and recovers by itself when it is back', { timeout: 60_000 }, async () => {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    const kv = new RedisKeyValueStore({ url: redis.url });
    const service = await demoService({ kv, ...LOAD_LIMITS });
    try {
      const load = startLoad(sessionClient(service), 8, true);
      await eventually(() => load.tally.ok > 50);

      await redis.stop();
      const okAtStop = load.snapshot().ok;
      await eventually(() => load.tally.unavailable > 50);
      const started = performance.now();
      await expect(kv.get('anything')).rejects.toBeInstanceOf(StorageUnavailableError);
      const directFailMs = performance.now() - started;
      const down = load.snapshot();
      expect(down.ok - okAtStop).toBeLessThan(8); // at most the requests already past Redis

      await redis.start();
      await eventually(() => load.tally.ok > down.ok + 50);
      const { tally, unexpected } = await load.stop();
      expect(unexpected).toEqual([]);
      console.log(
        `Redis outage: ${tally.ok} ok, ${tally.unavailable} answered 503 (slowest ${tally.slowest503Ms.toFixed(1)} ms, a direct get failed in ${directFailMs.toFixed(1)} ms), ${tally.loggedOut} re-logins after the restart`,
      );
      // The restarted Redis lost the sessions: the workers that held one got a 201 and logged in again.
      expect(tally.loggedOut).toBeGreaterThan(0);
      expect(await kv.increment('after-outage', 10_000)).toBe(1);
    } finally {
      await service.close();
      await redis.stop();
    }
  });

  it('answers 503 when Redis was never reachable, without waiting for it', async () => {
    const kv = new RedisKeyValueStore({ url: `redis://127.0.0.1:${await freePort()}`, connectTimeoutMs: 1000 });
    const service = await demoService({ kv });
    try {
      expectError(await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice) }), '503', 503);
      expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: 'x'.repeat(22) } }), '503', 503);
    } finally {
      await service.close();
    }
  });
});

const postgres = await serverAvailable('PostgreSQL', 'the PostgreSQL outage test');

describe.runIf(postgres)('PostgreSQL outage', () => {
  const schema = `odbrest_outage_${RUN_ID}`;
  const appName = `odbrest_outage_${RUN_ID}`; // only this test's connections are terminated
  afterAll(() => dropSchema(schema));

  async function terminateOurConnections(): Promise<number> {
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    const { rows } = await admin.query('SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = $1', [appName]);
    await admin.end();
    return rows.length;
  }

  it('answers 503 while connections are cut or the server is unreachable, and recovers', { timeout: 60_000 }, async () => {
    const target = new URL(DATABASE_URL);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const url = new URL(DATABASE_URL);
    url.host = `127.0.0.1:${proxy.port}`;
    url.searchParams.set('application_name', appName);
    const store = new PostgresObjectStore({ connectionString: url.href, schema, table: 'objects', connectTimeoutMs: 1000 });
    const service = await demoService({ store, ...LOAD_LIMITS });
    try {
      const load = startLoad(sessionClient(service), 8);
      const bob = await loginOnce(service);
      const listing = startLoad(() => call(service, 'GET', `/v1/objects/Customer?perPage=20&query=${encodeURIComponent('{"City":"Hamburg"}')}`, { headers: { sessionId: bob } }), 2);
      await eventually(() => load.tally.ok > 50);

      // 1. connections killed by the server, several times
      let terminated = 0;
      for (let i = 0; i < 5; i++) {
        terminated += await terminateOurConnections();
        await sleep(100);
      }
      expect(terminated).toBeGreaterThan(0);
      const afterKills = load.snapshot();
      await eventually(() => load.tally.ok > afterKills.ok + 50);

      // 2. the server unreachable: open connections reset, new ones refused
      await proxy.cut();
      const okAtCut = load.snapshot().ok;
      await eventually(() => load.tally.unavailable > afterKills.unavailable + 50);
      const started = performance.now();
      await expect(store.get('CUS00001')).rejects.toBeInstanceOf(StorageUnavailableError);
      const directFailMs = performance.now() - started;
      expect(load.snapshot().ok - okAtCut).toBeLessThan(8);

      await proxy.restore();
      const down = load.snapshot();
      await eventually(() => load.tally.ok > down.ok + 50);
      const [main, list] = [await load.stop(), await listing.stop()];
      expect(main.unexpected).toEqual([]);
      expect(list.unexpected).toEqual([]);
      expect(list.tally.ok).toBeGreaterThan(0);
      console.log(
        `PostgreSQL outage: ${terminated} connections terminated, then cut; ${main.tally.ok + list.tally.ok} ok, ${main.tally.unavailable + list.tally.unavailable} answered 503 (slowest ${Math.max(main.tally.slowest503Ms, list.tally.slowest503Ms).toFixed(1)} ms, a direct get failed in ${directFailMs.toFixed(1)} ms)`,
      );
      expect((await store.get('CUS00001'))?.fields.Name).toBe('Ben Bauer');
    } finally {
      await service.close();
      await proxy.cut();
    }
  });
});

/** A plain session for the listing load (sessions live in memory in the PostgreSQL test). */
async function loginOnce(service: Service): Promise<string> {
  const result = await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) });
  return result.body.data.sessionId as string;
}
