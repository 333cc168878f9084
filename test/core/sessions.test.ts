import { SignJWT, decodeJwt } from 'jose';
import { describe, expect, test } from 'vitest';
import { MemoryKeyValueStore } from '../../src/index.js';
import { kvKeys } from '../../src/storage/keys.js';
import { call, countingCalls, demoService, expectError, login, loginBody, loginToken, testClock, USERS } from '../helpers.js';

const JWT_SECRET = 'a-test-secret-that-is-32-bytes-long!!';
const b64url = (value: object) => btoa(JSON.stringify(value)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

describe('credentials on object and macro endpoints', () => {
  const kinds = {
    sessionId: async (service: Awaited<ReturnType<typeof demoService>>) => ({ sessionId: await login(service) }),
    'Authorization: Bearer': async (service: Awaited<ReturnType<typeof demoService>>) => ({ authorization: `Bearer ${await loginToken(service)}` }),
    'Authorization without Bearer': async (service: Awaited<ReturnType<typeof demoService>>) => ({ authorization: await loginToken(service) }),
  };

  test.each(Object.keys(kinds))('%s reads objects, lists and executes macros', async (kind) => {
    const service = await demoService({ macros: { whoami: async (ctx) => ({ user: ctx.session?.user, name: (await ctx.user())?.fields.Name }) } });
    const headers = await kinds[kind as keyof typeof kinds](service);
    const object = await call(service, 'GET', '/v1/object/CUS00002', { headers });
    expect(object.body).toMatchObject({ status: { internalStatus: '0' }, data: { '~ObjectID': 'CUS00002', Name: 'Clara Bauer' } });
    const list = await call(service, 'GET', '/v1/objects/Customer?perPage=2', { headers });
    expect(list.body.data['~Count']).toBe(2);
    const macro = await call(service, 'POST', '/v1/execute/whoami', { headers });
    expect(macro.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { user: 'alice', name: 'alice' } });
  });

  test('header names are case-insensitive', async () => {
    const service = await demoService();
    const id = await login(service);
    for (const name of ['sessionId', 'sessionid', 'SESSIONID']) {
      const result = await call(service, 'GET', '/v1/object/CUS00001', { headers: { [name]: id, APPKEY: 'x' } });
      expect(result.body.status.internalStatus).toBe('0');
    }
  });

  test('no credential is 204', async () => {
    const service = await demoService();
    expectError(await call(service, 'GET', '/v1/object/CUS00001'), '204', 401);
    expectError(await call(service, 'POST', '/v1/execute/anything'), '204', 401);
    expectError(await call(service, 'POST', '/v1/logout'), '204', 401);
  });

  test('an unknown session id is 201', async () => {
    const service = await demoService();
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: 'AAAAAAAAAAAAAAAAAAAAAA' } }), '201', 401);
  });

  test('a session accepts only its own kind of credential', async () => {
    const service = await demoService();
    const token = await loginToken(service);
    const { sid } = decodeJwt(token) as { sid: string };
    // the token session's id sent as a plain session id
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: sid } }), '201', 401);
  });

  test('a macro-only session (empty appNames) gets 307 on objects but may execute and log out', async () => {
    const service = await demoService({ macros: { ping: () => ({ pong: true }) } });
    const id = await login(service, 'dave', []);
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: id } }), '307', 403);
    expectError(await call(service, 'GET', '/v1/objects/Customer', { headers: { sessionId: id } }), '307', 403);
    expect((await call(service, 'POST', '/v1/execute/ping', { headers: { sessionId: id } })).body.data).toEqual({ pong: true });
    expect((await call(service, 'POST', '/v1/logout', { headers: { sessionId: id } })).body.status.internalStatus).toBe('0');
  });
});

describe('logout', () => {
  test('revokes a session id', async () => {
    const service = await demoService();
    const id = await login(service);
    const out = await call(service, 'POST', '/v1/logout', { headers: { sessionId: id } });
    expect(out.body).toEqual({ status: { internalStatus: '0', statusMessage: 'logged out' }, data: {} });
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: id } }), '201', 401);
    expectError(await call(service, 'POST', '/v1/logout', { headers: { sessionId: id } }), '201', 401);
  });

  test('revokes a JWT although its signature and expiry are still valid', async () => {
    const service = await demoService();
    const token = await loginToken(service);
    expect((await call(service, 'POST', '/v1/logout', { headers: { authorization: `Bearer ${token}` } })).body.status.internalStatus).toBe('0');
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: { authorization: `Bearer ${token}` } }), '201', 401);
  });

  test('ends only the session it names', async () => {
    const service = await demoService();
    const first = await login(service);
    const second = await login(service);
    await call(service, 'POST', '/v1/logout', { headers: { sessionId: first } });
    expect((await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: second } })).body.status.internalStatus).toBe('0');
  });
});

describe('forged and expired JWTs get 201', () => {
  async function realToken() {
    const clock = testClock();
    const service = await demoService({ session: { jwtSecret: JWT_SECRET }, now: clock.now });
    const token = await loginToken(service);
    return { service, clock, token, claims: decodeJwt(token) };
  }
  const get = (service: Awaited<ReturnType<typeof demoService>>, token: string) =>
    call(service, 'GET', '/v1/object/CUS00001', { headers: { authorization: `Bearer ${token}` } });

  test('alg none with a live session id', async () => {
    const { service, claims } = await realToken();
    const forged = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
    expectError(await get(service, forged), '201', 401);
  });

  test('signed with another key', async () => {
    const { service, claims } = await realToken();
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('another-secret-another-secret-32b!'));
    expectError(await get(service, forged), '201', 401);
  });

  test('HS512 with the right key (algorithm not allowed)', async () => {
    const { service, claims } = await realToken();
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).sign(new TextEncoder().encode(JWT_SECRET));
    expectError(await get(service, forged), '201', 401);
  });

  test('a changed payload (sub) breaks the signature', async () => {
    const { service, token, claims } = await realToken();
    const [header, , signature] = token.split('.');
    expectError(await get(service, `${header}.${b64url({ ...claims, sub: 'bob' })}.${signature}`), '201', 401);
  });

  test('expired (the session lifetime has passed)', async () => {
    const { service, token, clock } = await realToken();
    expect((await get(service, token)).body.status.internalStatus).toBe('0');
    clock.advance(12 * 3600_000 + 1000);
    expectError(await get(service, token), '201', 401);
  });

  test('garbage', async () => {
    const { service } = await realToken();
    expectError(await get(service, 'not.a.jwt'), '201', 401);
  });
});

describe('session expiry (controllable clock)', () => {
  test('idle timeout ends a session; each request renews it', async () => {
    const clock = testClock();
    const service = await demoService({ now: clock.now, session: { idleTimeoutMs: 10 * 60_000 } });
    const id = await login(service);
    const get = () => call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: id } });
    for (let i = 0; i < 5; i++) {
      clock.advance(9 * 60_000);
      expect((await get()).body.status.internalStatus).toBe('0'); // 45 minutes in, kept alive
    }
    clock.advance(10 * 60_000 + 1);
    expectError(await get(), '201', 401);
  });

  test('the absolute lifetime ends a session even when it is in use', async () => {
    const clock = testClock();
    const service = await demoService({ now: clock.now, session: { idleTimeoutMs: 60 * 60_000, absoluteTimeoutMs: 2 * 3600_000 } });
    const id = await login(service);
    const token = await loginToken(service);
    for (let i = 0; i < 3; i++) {
      clock.advance(35 * 60_000); // 105 minutes in use
      expect((await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: id } })).body.status.internalStatus).toBe('0');
      expect((await call(service, 'GET', '/v1/object/CUS00001', { headers: { authorization: token } })).body.status.internalStatus).toBe('0');
    }
    clock.advance(15 * 60_000);
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: id } }), '201', 401);
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: { authorization: token } }), '201', 401);
  });

  test('a request reads and renews its session in one store operation', async () => {
    const clock = testClock();
    const { view, calls } = countingCalls(new MemoryKeyValueStore({ now: clock.now }));
    const service = await demoService({ now: clock.now, kv: view });
    const headers = { sessionId: await login(service) };
    for (const name of Object.keys(calls)) delete calls[name];
    expect((await call(service, 'GET', '/v1/object/CUS00001', { headers })).body.status.internalStatus).toBe('0');
    // the memory store answers it without a promise (`getAndExpireNow`), still one operation
    expect(calls).toEqual({ getAndExpireNow: 1 });
  });

  test('renewed by an instance that has not seen the session before, it still ends at its absolute end', async () => {
    const clock = testClock();
    const kv = new MemoryKeyValueStore({ now: clock.now });
    const options = { now: clock.now, kv, session: { idleTimeoutMs: 60 * 60_000, absoluteTimeoutMs: 2 * 3600_000 } };
    const [first, second] = [await demoService(options), await demoService(options)];
    const id = await login(first);
    const get = (service: typeof first) => call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: id } });
    clock.advance(50 * 60_000);
    expect((await get(first)).body.status.internalStatus).toBe('0');
    clock.advance(50 * 60_000); // 20 minutes of its life left, less than an idle timeout
    expect((await get(second)).body.status.internalStatus).toBe('0');
    expect(await kv.ttl(kvKeys.session(id))).toBe(20 * 60_000);
    clock.advance(20 * 60_000);
    expect(await kv.get(kvKeys.session(id))).toBeUndefined();
    expectError(await get(first), '201', 401);
  });
});

describe('failed-login limit', () => {
  const attempt = (service: Awaited<ReturnType<typeof demoService>>, user: keyof typeof USERS, password: string, clientAddress = '10.0.0.1') =>
    call(service, 'POST', '/v1/login', { json: loginBody(user, password), clientAddress });

  test('after 5 failures for a user, even the right password gets 303 with Retry-After until the window passes', async () => {
    const clock = testClock();
    const service = await demoService({ now: clock.now });
    for (let i = 0; i < 5; i++) expectError(await attempt(service, 'bob', 'wrong', `10.0.0.${i}`), '302', 401);
    const blocked = await attempt(service, 'bob', USERS.bob, '10.0.0.99');
    expectError(blocked, '303', 429);
    expect(blocked.headers.get('retry-after')).toBe('900');
    expect(blocked.body.status.statusMessage).toBe('too many failed logins, try again in 900 seconds');
    // token login shares the limit
    expectError(await call(service, 'POST', '/v2/login', { json: loginBody('bob', USERS.bob) }), '303', 429);
    clock.advance(10 * 60_000);
    expect((await attempt(service, 'bob', USERS.bob)).headers.get('retry-after')).toBe('300');
    clock.advance(5 * 60_000);
    expect((await attempt(service, 'bob', USERS.bob)).body.status.internalStatus).toBe('0');
  });

  test('the limit of one user does not lock out another', async () => {
    const service = await demoService();
    for (let i = 0; i < 5; i++) await attempt(service, 'bob', 'wrong', `10.0.1.${i}`);
    expect((await attempt(service, 'alice', USERS.alice, '10.0.2.1')).body.status.internalStatus).toBe('0');
  });

  test('a successful login resets the user count', async () => {
    const service = await demoService();
    for (let i = 0; i < 4; i++) await attempt(service, 'bob', 'wrong');
    expect((await attempt(service, 'bob', USERS.bob)).body.status.internalStatus).toBe('0');
    for (let i = 0; i < 4; i++) expectError(await attempt(service, 'bob', 'wrong'), '302', 401);
    expect((await attempt(service, 'bob', USERS.bob)).body.status.internalStatus).toBe('0');
  });

  test('20 failures from one address block that address for every user', async () => {
    const service = await demoService();
    for (let i = 0; i < 20; i++) {
      const result = await call(service, 'POST', '/v1/login', { json: loginBody(`guess${i}`, 'wrong'), clientAddress: '10.9.9.9' });
      expectError(result, '302', 401);
    }
    expectError(await attempt(service, 'alice', USERS.alice, '10.9.9.9'), '303', 429);
    expect((await attempt(service, 'alice', USERS.alice, '10.9.9.10')).body.status.internalStatus).toBe('0');
  });

  test('limits are configurable', async () => {
    const service = await demoService({ loginLimit: { perUser: 2, windowMs: 60_000 } });
    await attempt(service, 'bob', 'wrong');
    await attempt(service, 'bob', 'wrong');
    const blocked = await attempt(service, 'bob', USERS.bob);
    expectError(blocked, '303', 429);
    expect(blocked.headers.get('retry-after')).toBe('60');
  });

  test('X-Forwarded-For counts only with trustProxy', async () => {
    const plain = await demoService({ loginLimit: { perAddress: 3 } });
    const names = ['alice', 'bob', 'dave'] as const;
    for (let i = 0; i < 3; i++) {
      await call(plain, 'POST', '/v1/login', { json: loginBody(names[i]!, 'wrong'), headers: { 'x-forwarded-for': `1.1.1.${i}` }, clientAddress: '10.0.0.1' });
    }
    expectError(await call(plain, 'POST', '/v1/login', { json: loginBody('extern', USERS.extern), headers: { 'x-forwarded-for': '2.2.2.2' }, clientAddress: '10.0.0.1' }), '303', 429);

    const proxied = await demoService({ loginLimit: { perAddress: 3 }, trustProxy: true });
    for (let i = 0; i < 3; i++) {
      await call(proxied, 'POST', '/v1/login', { json: loginBody(names[i]!, 'wrong'), headers: { 'x-forwarded-for': '1.1.1.1, 10.0.0.1' }, clientAddress: '10.0.0.1' });
    }
    expectError(await call(proxied, 'POST', '/v1/login', { json: loginBody('extern', USERS.extern), headers: { 'x-forwarded-for': '1.1.1.1' }, clientAddress: '10.0.0.2' }), '303', 429);
    const other = await call(proxied, 'POST', '/v1/login', { json: loginBody('extern', USERS.extern), headers: { 'x-forwarded-for': '3.3.3.3' }, clientAddress: '10.0.0.1' });
    expect(other.body.status.internalStatus).toBe('0');
  });
});
