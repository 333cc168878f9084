/**
 * Two service processes behind "one address": real Node processes (adapters/node.ts) sharing Redis
 * and PostgreSQL and a JWT secret. Whatever one instance does with a session, the other sees.
 */
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importObjects, type Service } from '../src/index.js';
import { PostgresObjectStore } from '../stores/postgres.js';
import { call, demoData, expectError, login, loginBody, loginToken, USERS } from './helpers.js';
import { bundleForNode, remoteService, spawnLines, type LineProcess } from './support/processes.js';
import { DATABASE_URL, REDIS_URL, RUN_ID, serverAvailable } from './support/servers.js';

const available =
  (await serverAvailable('Redis', 'the two-instance test')) && (await serverAvailable('PostgreSQL', 'the two-instance test'));

const schema = `odbrest_pair_${RUN_ID}`;
const prefix = `odbrest-pair:${RUN_ID}:`;

describe.runIf(available)('two instances sharing Redis and PostgreSQL', () => {
  const children: LineProcess[] = [];
  let a: Service;
  let b: Service;

  beforeAll(async () => {
    const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
    await importObjects(store, demoData(), 1000);
    await store.close();
    const entry = await bundleForNode(join(import.meta.dirname, 'fixtures/instance.ts'));
    const env = {
      REDIS_URL,
      DATABASE_URL,
      ODBREST_REDIS_PREFIX: prefix,
      ODBREST_PG_SCHEMA: schema,
      ODBREST_JWT_SECRET: `shared-secret-of-this-test-run-${RUN_ID}`,
    };
    const [first, second] = await Promise.all(
      [0, 1].map(async () => {
        const child = spawnLines(process.execPath, [entry], env);
        children.push(child);
        const port = (await child.waitFor((line) => line.startsWith('listening '))).split(' ')[1];
        return remoteService(`http://127.0.0.1:${port}`) as unknown as Service;
      }),
    );
    [a, b] = [first!, second!];
  });

  afterAll(async () => {
    for (const child of children) {
      child.child.kill('SIGTERM'); // our own children, by pid
      await child.exited;
    }
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  describe('plain sessions (sessionId)', () => {
    it('a session made on one instance works on the other', async () => {
      const sessionId = await login(a, 'alice');
      const onA = await call(a, 'GET', '/v1/object/CUS00001', { headers: { sessionId } });
      const onB = await call(b, 'GET', '/v1/object/CUS00001', { headers: { sessionId } });
      expect(onB.status).toBe(200);
      expect(onB.body).toEqual(onA.body);
      expect(onB.body.data['~ObjectID']).toBe('CUS00001');
      const listing = await call(b, 'GET', `/v1/objects/Customer?perPage=3&query=${encodeURIComponent('{"City":"Hamburg"}')}`, {
        headers: { sessionId },
      });
      expect(listing.body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
      expect(listing.body.data['~Count']).toBe(3);
    });

    it('logout on one instance is seen by the other', async () => {
      const sessionId = await login(b, 'bob');
      expect((await call(a, 'GET', '/v1/object/CUS00002', { headers: { sessionId } })).status).toBe(200);
      const logout = await call(a, 'POST', '/v1/logout', { headers: { sessionId } });
      expect(logout.body.status.internalStatus).toBe('0');
      expectError(await call(b, 'GET', '/v1/object/CUS00002', { headers: { sessionId } }), '201', 401);
      expectError(await call(a, 'GET', '/v1/object/CUS00002', { headers: { sessionId } }), '201', 401);
    });
  });

  describe('token sessions (JWT)', () => {
    it('a token made on one instance works on the other', async () => {
      const token = await loginToken(b, 'alice');
      const onA = await call(a, 'GET', '/v1/object/CUS00003', { headers: { authorization: `Bearer ${token}` } });
      expect(onA.status).toBe(200);
      expect(onA.body.data['~ObjectID']).toBe('CUS00003');
      const bare = await call(a, 'GET', '/v1/object/CUS00003', { headers: { authorization: token } });
      expect(bare.body).toEqual(onA.body);
    });

    it('logout on one instance revokes the token on the other', async () => {
      const token = await loginToken(a, 'bob');
      const headers = { authorization: `Bearer ${token}` };
      expect((await call(b, 'POST', '/v1/logout', { headers })).body.status.internalStatus).toBe('0');
      expectError(await call(a, 'GET', '/v1/object/CUS00003', { headers }), '201', 401);
      expectError(await call(b, 'GET', '/v1/object/CUS00003', { headers }), '201', 401);
    });
  });

  it('the failed-login limit counts attempts made on both instances', async () => {
    const wrong = loginBody('extern', 'not-the-password');
    for (const instance of [a, b, a, b, a]) expectError(await call(instance, 'POST', '/v1/login', { json: wrong }), '302', 401);
    for (const instance of [b, a]) {
      const refused = await call(instance, 'POST', '/v1/login', { json: loginBody('extern', USERS.extern) });
      expectError(refused, '303', 429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });

  // Built in parallel on other branches; they join this suite once merged (see the report).
  it.todo('secure login on one instance, secure requests alternating between both (branch secure)');
  it.todo('a secure request replayed to the other instance is rejected with 205 (branch secure)');
  it.todo('an OAuth flow started on one instance finishes on the other (branch oauth)');
});
