/**
 * Two service processes behind "one address": real Node processes (adapters/node.ts) sharing Redis
 * and PostgreSQL, a JWT secret and the server RSA key. Whatever one instance does with a session, the
 * other sees. Each request is sent to one instance by its own URL, so which one answered is known.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type FetchFunction } from '../src/client/index.js';
import { importObjects, type Service } from '../src/index.js';
import { PostgresObjectStore } from '../stores/postgres.js';
import { call, demoData, expectError, login, loginBody, loginToken, USERS } from './helpers.js';
import { nodeKeyPair, nodeSecureLogin, secureCall, secureRequest, sendSecure, serverKeyPem, type NodeLogin } from './secure/node-client.js';
import { authorize, finish, postJson, providerEntry, spawnProviders, type LocalProvider, type ProviderProcess } from './oauth/provider.js';
import { TcpProxy } from './support/outage.js';
import { bundleForNode, freePort, remoteService, spawnLines, type LineProcess } from './support/processes.js';
import { DATABASE_URL, deleteKeys, dropSchema, REDIS_URL, RUN_ID, serverAvailable } from './support/servers.js';

const available =
  (await serverAvailable('Redis', 'the two-instance test')) && (await serverAvailable('PostgreSQL', 'the two-instance test'));

const schema = `odbrest_pair_${RUN_ID}`;
const prefix = `odbrest-pair:${RUN_ID}:`;

describe.runIf(available)('two instances sharing Redis and PostgreSQL', () => {
  const children: LineProcess[] = [];
  let a: Service;
  let b: Service;
  const bases: string[] = [];
  let provider: LocalProvider;
  let idp: ProviderProcess;
  /** The one public address: a proxy in front of instance B, so callbacks arrive there. */
  let front: TcpProxy;
  let publicUrl: string;
  /** Holds the shared server key, given to both instances as ODBREST_SERVER_KEY_FILE (as the README and the cluster example do). */
  let keyDir: string | undefined;

  beforeAll(async () => {
    ({ idp, providers: { google: provider } } = await spawnProviders('google'));
    const frontPort = await freePort();
    publicUrl = `http://127.0.0.1:${frontPort}`;
    const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
    await importObjects(store, { objects: [...demoData().objects, providerEntry(provider, 'Google')] }, 1000);
    await store.close();
    const entry = await bundleForNode(join(import.meta.dirname, 'fixtures/instance.ts'));
    keyDir = mkdtempSync(join(tmpdir(), 'odbrest-pair-key-'));
    const keyFile = join(keyDir, 'server-key.pem');
    writeFileSync(keyFile, nodeKeyPair().privateKey, { mode: 0o600 });
    const env = {
      REDIS_URL,
      DATABASE_URL,
      ODBREST_REDIS_PREFIX: prefix,
      ODBREST_PG_SCHEMA: schema,
      ODBREST_JWT_SECRET: `shared-secret-of-this-test-run-${RUN_ID}`,
      ODBREST_SERVER_KEY_FILE: keyFile,
      ODBREST_PUBLIC_URL: publicUrl,
      ODBREST_OAUTH_PROVIDERS: 'Google',
    };
    for (let i = 0; i < 2; i++) {
      const child = spawnLines(process.execPath, [entry], env);
      children.push(child);
      bases.push(`http://127.0.0.1:${(await child.waitFor((line) => line.startsWith('listening '))).split(' ')[1]}`);
    }
    [a, b] = bases.map((base) => remoteService(base) as unknown as Service) as [Service, Service];
    front = new TcpProxy('127.0.0.1', Number(new URL(bases[1]!).port));
    await front.start(frontPort);
  });

  afterAll(async () => {
    await front?.cut();
    idp?.close();
    for (const child of children) {
      child.child.kill('SIGTERM'); // our own children, by pid
      await child.exited;
    }
    await dropSchema(schema);
    await deleteKeys(prefix);
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
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

  describe('external login (OAuth)', () => {
    it('a flow started on one instance finishes on the other, and its state is used up for both', async () => {
      await idp.user(provider, { sub: 'pair-subject-1', email: 'bob@example.com', given_name: 'Bob', family_name: 'Bauer' });
      // started on A; the provider sends the browser to the public address, which is B
      const step = await authorize(bases[0]!, 'google');
      expect(step.url.startsWith(`${publicUrl}/v1/google/callback?`)).toBe(true);
      const first = await finish(step);
      expect(first.status).toBe(200);
      expect(first.body.status.internalStatus).toBe('0');
      expect(first.body.data.dfUuid).toMatch(/^[0-9a-f-]{36}$/);
      // the same callback again, now sent to A directly: the state was used on B
      const replay = await finish({ ...step, url: step.url.replace(publicUrl, bases[0]!) });
      expect(replay.status).toBe(400);
      expect(replay.body).toEqual({ status: { internalStatus: '322', statusMessage: expect.any(String) }, data: {} });
      // the dfUuid made on B links the identity through A
      const linked = await postJson(bases[0]!, '/v1/extLogin', { ...loginBody('bob', USERS.bob, ['crm']), dfUuid: first.body.data.dfUuid });
      expect(linked.body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
      const sessionId = linked.body.data.sessionId as string;
      expect((await call(b, 'GET', '/v1/object/CUS00004', { headers: { sessionId } })).body.status.internalStatus).toBe('0');
      // and the dfUuid is used up on both
      const reused = await postJson(bases[1]!, '/v1/extLogin', { ...loginBody('bob', USERS.bob, ['crm']), dfUuid: first.body.data.dfUuid });
      expect(reused.body.status.internalStatus).toBe('320');
      // the next login of that identity, started on B this time, goes straight to a session
      const later = await finish(await authorize(bases[1]!, 'google', 'appkey=test-app&appNames=crm'));
      expect(later.body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
      expect((await call(a, 'GET', '/v1/object/CUS00004', { headers: { sessionId: later.body.data.sessionId } })).status).toBe(200);
    });
  });

  describe('secure sessions (Secure-Token and the encrypted transport)', () => {
    const clientKeys = nodeKeyPair();
    /** Message `n` to `instance`; must be accepted, and answered encrypted and signed for `n` (else `secureCall` throws). */
    const accepted = async (instance: Service, session: NodeLogin, n: number, method: string, target: string) => {
      const answer = await secureCall(instance, session, n, method, target);
      expect([answer.status, answer.envelope.status]).toEqual([200, { internalStatus: '0', statusMessage: 'ok' }]);
      return answer.envelope.data;
    };
    const customer = (n: number) => `/v1/object/CUS${String(n).padStart(5, '0')}`;

    it('both instances publish the shared server key', async () => {
      expect(await serverKeyPem(b)).toBe(await serverKeyPem(a));
    });

    it('a secure login on one instance, then secure requests alternating between both', async () => {
      const session = await nodeSecureLogin(a, clientKeys);
      expect(session.envelope.data.user.Name).toBe('alice');
      for (let n = 1; n <= 6; n++) {
        const data = await accepted(n % 2 ? b : a, session, n, 'GET', customer(n));
        expect(data['~ObjectID']).toBe(customer(n).slice(-8));
      }
      const listing = await accepted(b, session, 7, 'GET', `/v1/objects/Customer?perPage=3&query=${encodeURIComponent('{"City":"Hamburg"}')}`);
      expect(listing['~Count']).toBe(3);
    });

    it('concurrent secure requests on both instances are each accepted once: the replay window is updated atomically', async () => {
      const session = await nodeSecureLogin(b, clientKeys);
      const numbers = Array.from({ length: 24 }, (_, i) => i + 1);
      const on = (n: number) => (n % 2 ? a : b);
      const other = (n: number) => (n % 2 ? b : a);
      const messages = numbers.map((n) => secureRequest(session, n, 'GET', customer(n)));
      // Sent all at once, half to each instance: both write the same session's window at the same time.
      const answers = await Promise.all(numbers.map((n) => sendSecure(on(n), 'GET', customer(n), messages[n - 1]!)));
      expect(answers.map((answer) => answer.status)).toEqual(numbers.map(() => 200));
      // A lost update would let one of these through.
      const replays = await Promise.all(numbers.map((n) => sendSecure(other(n), 'GET', customer(n), messages[n - 1]!)));
      for (const replay of replays) expectError(replay, '205', 401);
    });

    it('a secure request replayed to the other instance is rejected with 205, in both directions', async () => {
      const session = await nodeSecureLogin(b, clientKeys, { user: 'bob' });
      for (const [n, first, second] of [[1, a, b], [2, b, a]] as const) {
        const message = secureRequest(session, n, 'GET', customer(n));
        expect((await sendSecure(first, 'GET', customer(n), message)).status).toBe(200);
        const replay = await sendSecure(second, 'GET', customer(n), message);
        expectError(replay, '205', 401);
        expect(replay.headers.get('encrypted')).toBeNull();
      }
      // The session itself is unharmed: the next number works on either.
      await accepted(a, session, 3, 'GET', customer(3));
    });

    it('logout through the secure transport on one instance is seen by the other', async () => {
      const session = await nodeSecureLogin(b, clientKeys, { user: 'bob' });
      await accepted(b, session, 1, 'GET', customer(1)); // B now holds the token's keys in its cache
      await accepted(a, session, 2, 'GET', customer(2));
      const out = await secureCall(a, session, 3, 'POST', '/v1/logout');
      expect([out.status, out.envelope]).toEqual([200, { status: { internalStatus: '0', statusMessage: 'logged out' }, data: {} }]);
      for (const [n, instance] of [[4, b], [5, a]] as const) {
        const after = await sendSecure(instance, 'GET', customer(n), secureRequest(session, n, 'GET', customer(n)));
        expectError(after, '201', 401);
        expect(after.headers.get('encrypted')).toBeNull();
      }
    });

    it('odbrest/client behind one address that sends each request to the next instance in turn', async () => {
      const answeredBy: string[] = [];
      let turn = 0;
      const balancer: FetchFunction = (url, init) => {
        const base = bases[turn++ % bases.length]!;
        answeredBy.push(base);
        const { pathname, search } = new URL(url);
        return fetch(`${base}${pathname}${search}`, init);
      };
      const client = createClient({ baseUrl: 'http://one-address.test', appKey: 'test-app', fetch: balancer });
      const login = await client.loginSecure({ user: 'alice', password: USERS.alice, appNames: ['crm'] });
      expect(login.user.Name).toBe('alice');
      expect((await client.getObject('CUS00001'))['~ObjectID']).toBe('CUS00001');
      expect((await client.listObjects('Customer', { perPage: 2, query: { City: 'Hamburg' } }))['~Elements']).toHaveLength(2);
      expect((await client.getObject('EMP00001'))['~ClassName']).toBe('Employee');
      await client.logout();
      // key, login, three secure requests and the logout: every other one on each instance.
      expect(answeredBy).toEqual([0, 1, 0, 1, 0, 1].map((i) => bases[i]));
    });
  });
});
