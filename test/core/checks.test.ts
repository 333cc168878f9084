/** `_CheckSession`, `_CheckService` and `/v1/versioninfo` (PROTOCOL.md 2.5). */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { MemoryKeyValueStore, MemoryObjectStore, StorageUnavailableError, type KeyValueStore, type ObjectStore } from '../../src/index.js';
import { call, demoService, expectError, login, loginToken, testClock } from '../helpers.js';
import { nodeKeyPair, nodeSecureLogin, secureCall } from '../secure/node-client.js';

const VERSION = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version as string;
const OK = { internalStatus: '0', statusMessage: 'ok' };

describe('_CheckSession', () => {
  test('"0" with data {} for a plain session (sessionid spelled as the Dart client does) and for a token', async () => {
    const service = await demoService();
    const sessionId = await login(service);
    const plain = await call(service, 'GET', '/_CheckSession', { headers: { sessionid: sessionId } });
    expect([plain.status, plain.body]).toEqual([200, { status: OK, data: {} }]);
    const token = await loginToken(service);
    const bearer = await call(service, 'GET', '/_CheckSession', { headers: { Authorization: `Bearer ${token}` } });
    expect([bearer.status, bearer.body]).toEqual([200, { status: OK, data: {} }]);
  });

  test('a macro-only session (empty appNames) is a live session too', async () => {
    const service = await demoService();
    const sessionId = await login(service, 'alice', []);
    expect((await call(service, 'GET', '/_CheckSession', { headers: { sessionId } })).body).toEqual({ status: OK, data: {} });
  });

  test('through the secure transport, encrypted like any route', async () => {
    const service = await demoService();
    const secure = await nodeSecureLogin(service, nodeKeyPair());
    expect(await secureCall(service, secure, 1, 'GET', '/_CheckSession')).toEqual({ status: 200, envelope: { status: OK, data: {} } });
  });

  test('204 without a credential, 201 for an unknown or logged-out session', async () => {
    const service = await demoService();
    expectError(await call(service, 'GET', '/_CheckSession'), '204', 401);
    expectError(await call(service, 'GET', '/_CheckSession', { headers: { sessionId: 'nope' } }), '201', 401);
    const sessionId = await login(service);
    await call(service, 'POST', '/v1/logout', { headers: { sessionId } });
    expectError(await call(service, 'GET', '/_CheckSession', { headers: { sessionId } }), '201', 401);
  });

  test('needs the appkey', async () => {
    const service = await demoService();
    const sessionId = await login(service);
    expectError(await call(service, 'GET', '/_CheckSession', { headers: { sessionId }, noAppKey: true }), '100', 401);
  });

  test('renews the idle timeout', async () => {
    const clock = testClock();
    const service = await demoService({ now: clock.now, session: { idleTimeoutMs: 10 * 60_000 } });
    const sessionId = await login(service);
    for (let i = 0; i < 3; i++) {
      clock.advance(9 * 60_000);
      expect((await call(service, 'GET', '/_CheckSession', { headers: { sessionId } })).status).toBe(200);
    }
    clock.advance(10 * 60_000 + 1);
    expectError(await call(service, 'GET', '/_CheckSession', { headers: { sessionId } }), '201', 401);
  });

  test('sits beside v1, after base path and alias', async () => {
    const service = await demoService({ mount: { basePath: '/api', alias: 'demo' } });
    const result = await call(service, 'POST', '/api/demo/v1/login', { json: { user: 'alice', pass: '3092480224001c66a3170bdd19af3b61', appNames: ['crm'] } });
    const sessionId = result.body.data.sessionId;
    expect((await call(service, 'GET', '/api/demo/_CheckSession', { headers: { sessionId } })).body).toEqual({ status: OK, data: {} });
    expectError(await call(service, 'GET', '/api/demo/v1/_CheckSession', { headers: { sessionId } }), '404', 404);
  });
});

/** A store whose every call fails as an unreachable backend does, or never answers. */
function broken<T extends object>(target: T, how: 'fails' | 'hangs'): T {
  return new Proxy(target, {
    get: (object, name) =>
      name === 'close' ? undefined : () => (how === 'fails' ? Promise.reject(new StorageUnavailableError('down')) : new Promise(() => undefined)),
  });
}

describe('_CheckService', () => {
  test('answers without any header: name, version and the database modules', async () => {
    const service = await demoService({ databaseName: 'demo' });
    const response = await service.fetch(new Request('http://odbrest.test/_CheckService'));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: OK,
      data: {
        applicationName: 'odbrest',
        applicationVersion: VERSION,
        webservice: { version: VERSION, moduleVersion: { demo: [{ moduleName: 'odbrest', moduleVersion: VERSION }] } },
      },
    });
  });

  test('applicationName and applicationVersion are configurable', async () => {
    const service = await demoService({ serviceCheck: { applicationName: 'crm-backend', applicationVersion: '7.1.0' } });
    const result = await call(service, 'GET', '/_CheckService', { noAppKey: true });
    expect(result.body.data).toEqual({
      applicationName: 'crm-backend',
      applicationVersion: '7.1.0',
      webservice: { version: VERSION, moduleVersion: { odbrest: [{ moduleName: 'crm-backend', moduleVersion: '7.1.0' }] } },
    });
  });

  const stores = (): { store: ObjectStore; kv: KeyValueStore } => ({ store: new MemoryObjectStore(), kv: new MemoryKeyValueStore() });

  test.each([
    ['the object store fails', (s: ReturnType<typeof stores>) => ({ ...s, store: broken(s.store, 'fails') }), 'the object store does not answer'],
    ['the object store never answers', (s: ReturnType<typeof stores>) => ({ ...s, store: broken(s.store, 'hangs') }), 'the object store does not answer'],
    ['the key-value store fails', (s: ReturnType<typeof stores>) => ({ ...s, kv: broken(s.kv, 'fails') }), 'the key-value store does not answer'],
    ['the key-value store never answers', (s: ReturnType<typeof stores>) => ({ ...s, kv: broken(s.kv, 'hangs') }), 'the key-value store does not answer'],
  ])('503 when %s', async (_case, make, message) => {
    const service = await demoService({ data: undefined, ...make(stores()), serviceCheck: { timeoutMs: 50 } });
    const result = await call(service, 'GET', '/_CheckService', { noAppKey: true });
    expectError(result, '503', 503);
    expect(result.body.status.statusMessage).toBe(message);
  });

  test('a timeout that is not positive is refused at start', async () => {
    await expect(demoService({ serviceCheck: { timeoutMs: 0 } })).rejects.toThrow(/timeoutMs/);
  });
});

describe('/v1/versioninfo', () => {
  test('any session: the webservice version, when the structure changed, the modules', async () => {
    const clock = testClock();
    const service = await demoService({ now: clock.now });
    const sessionId = await login(service, 'alice', []);
    const result = await call(service, 'GET', '/v1/versioninfo', { headers: { sessionId } });
    expect(result.body).toEqual({
      status: OK,
      data: { webserviceVersion: VERSION, structureChangeDate: new Date(clock.now()).toISOString(), listOfModules: [{ moduleName: 'odbrest', moduleVersion: VERSION }] },
    });
  });

  test('204 without a session', async () => {
    expectError(await call(await demoService(), 'GET', '/v1/versioninfo'), '204', 401);
  });
});

describe('_CheckLive and _CheckReady (orchestrators)', () => {
  test('live answers while the process does; ready answers 503 with Retry-After while a store is down and once draining', async () => {
    let down = false;
    const kv = new MemoryKeyValueStore();
    const get = kv.get.bind(kv);
    kv.get = (key) => (down && key.startsWith('health') ? Promise.reject(new StorageUnavailableError('redis is gone')) : get(key));
    const service = await demoService({ kv });
    const sessionId = await login(service);
    const check = (path: string) => call(service, 'GET', path, { noAppKey: true });
    expect((await check('/_CheckLive')).body).toEqual({ status: OK, data: {} });
    expect((await check('/_CheckReady')).body).toEqual({ status: OK, data: {} });
    down = true;
    const storeDown = await check('/_CheckReady');
    expectError(storeDown, '503', 503);
    expect(storeDown.headers.get('retry-after')).toBe('1');
    expect((await check('/_CheckLive')).body).toEqual({ status: OK, data: {} });
    down = false;
    expect(service.draining).toBe(false);
    service.drain();
    expect(service.draining).toBe(true);
    const draining = await check('/_CheckReady');
    expectError(draining, '503', 503);
    expect(draining.body.status.statusMessage).toContain('draining');
    expect(draining.headers.get('retry-after')).toBe('1');
    expect((await check('/_CheckLive')).body).toEqual({ status: OK, data: {} });
    // requests in flight and after are still answered: draining only tells the balancer to go elsewhere
    expect((await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId } })).body.status).toEqual(OK);
  });
});
