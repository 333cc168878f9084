/** PROTOCOL.md 2.8: the user's sessions, user administration, and both across two instances sharing Redis. */
import { afterAll, describe, expect, test } from 'vitest';
import { clientPassValue, createService, MemoryObjectStore, type Service } from '../../src/index.js';
import { RedisKeyValueStore } from '../../stores/redis.js';
import { call, demoData, demoService, expectError, login, loginBody, loginToken, USERS } from '../helpers.js';
import { nodeKeyPair, nodeSecureLogin, secureCall } from '../secure/node-client.js';
import { deleteKeys, REDIS_URL, RUN_ID, serverAvailable } from '../support/servers.js';
import { enrol, twoFactorService } from '../two-factor/support.js';

const ok = (result: { status: number; body: any; text: string }) => {
  if (result.status !== 200 || result.body?.status?.internalStatus !== '0') throw new Error(`expected success, got ${result.status}: ${result.text}`);
  return result.body.data;
};
const sid = (id: string) => ({ sessionId: id });
const ADMIN = { users: { admins: 'admins' } }; // alice is in the demo's admins group
const STORE_TIME = /^\d{8}T\d{6}\+00:00$/;

describe('GET /v1/sessions', () => {
  test('lists the caller\'s live sessions newest first, with handles that are not credentials', async () => {
    let now = Date.UTC(2026, 0, 15, 9, 0, 0);
    const service = await demoService({ now: () => now });
    const first = await login(service, 'bob');
    now += 2000;
    const jwt = await loginToken(service, 'bob', ['crm', 'hr']);
    now += 2000;
    const device = { deviceId: 'phone-1', name: 'Pixel' };
    const third = ok(await call(service, 'POST', '/v1/login', { json: { ...loginBody('bob', USERS.bob), device }, clientAddress: '10.2.3.4' })).sessionId as string;
    await login(service, 'alice'); // not bob's
    await call(service, 'POST', '/v1/logout', { headers: sid(first) });
    const list = ok(await call(service, 'GET', '/v1/sessions', { headers: sid(third) }));
    expect(list['~Count']).toBe(2);
    const [newest, older] = list['~Elements'];
    expect(newest).toEqual({ '~ObjectID': expect.any(String), Kind: 'session', Created: '20260115T090004+00:00', LastUsed: expect.stringMatching(STORE_TIME), Address: '10.2.3.4', Device: device, Apps: ['crm'], Current: true });
    expect(older).toMatchObject({ Kind: 'token', Created: '20260115T090002+00:00', Address: '127.0.0.1', Device: null, Apps: ['crm', 'hr'], Current: false });
    expect(JSON.stringify(list)).not.toContain(third);
    // a handle is no credential
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(newest['~ObjectID']) }), '201', 401);
    // the token session lists the same, itself current
    const fromToken = ok(await call(service, 'GET', '/v1/sessions', { headers: { authorization: `Bearer ${jwt}` } }));
    expect(fromToken['~Elements'].map((element: any) => element.Current)).toEqual([false, true]);
  });

  test('DELETE /v1/sessions/{handle} ends that session of the caller (seat given back); another user\'s handle is 404', async () => {
    const service = await demoService();
    const shop = await login(service, 'bob', ['shop']);
    const mine = await login(service, 'bob');
    const alice = await login(service, 'alice');
    const [, shopEntry] = ok(await call(service, 'GET', '/v1/sessions', { headers: sid(mine) }))['~Elements'];
    expectError(await call(service, 'DELETE', `/v1/sessions/${shopEntry['~ObjectID']}`, { headers: sid(alice) }), '404', 404);
    ok(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(shop) }));
    ok(await call(service, 'DELETE', `/v1/sessions/${shopEntry['~ObjectID']}`, { headers: sid(mine) }));
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(shop) }), '201', 401);
    ok(await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob, ['shop']) })); // the seat is free
    expectError(await call(service, 'DELETE', '/v1/sessions/not-a-handle', { headers: sid(mine) }), '404', 404);
  });

  test('DELETE /v1/sessions ends all of the caller\'s sessions but the current one, of every kind', async () => {
    const service = await demoService();
    const keys = nodeKeyPair();
    const secure = await nodeSecureLogin(service, keys, { user: 'bob' });
    const jwt = await loginToken(service, 'bob');
    const plain = await login(service, 'bob');
    const current = await login(service, 'bob');
    const alice = await login(service, 'alice');
    expect(ok(await call(service, 'DELETE', '/v1/sessions', { headers: sid(current) }))).toEqual({ ended: 3 });
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(plain) }), '201', 401);
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: { authorization: `Bearer ${jwt}` } }), '201', 401);
    const secured = await call(service, 'GET', '/v1/object/CUS00001', { headers: (await import('../secure/node-client.js')).secureRequest(secure, 1, 'GET', '/v1/object/CUS00001').headers });
    expectError(secured, '201', 401);
    ok(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(current) }));
    ok(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(alice) }));
    expect(ok(await call(service, 'GET', '/v1/sessions', { headers: sid(current) }))['~Count']).toBe(1);
  });

  test('?user= is for administrators only (403 for others, and when no admins group is configured)', async () => {
    const plain = await demoService();
    const alice = await login(plain, 'alice');
    expectError(await call(plain, 'GET', '/v1/sessions?user=bob', { headers: sid(alice) }), '403', 403);
    const service = await demoService(ADMIN);
    const bob = await login(service, 'bob');
    expectError(await call(service, 'GET', '/v1/sessions?user=alice', { headers: sid(bob) }), '403', 403);
    expectError(await call(service, 'DELETE', '/v1/sessions?user=alice', { headers: sid(bob) }), '403', 403);
    const admin = await login(service, 'alice');
    expect(ok(await call(service, 'GET', '/v1/sessions?user=bob', { headers: sid(admin) }))['~Elements']).toEqual([expect.objectContaining({ Kind: 'session', Current: false })]);
    expectError(await call(service, 'GET', '/v1/sessions?user=nobody', { headers: sid(admin) }), '404', 404);
    expect(ok(await call(service, 'DELETE', '/v1/sessions?user=bob', { headers: sid(admin) }))).toEqual({ ended: 1 });
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(bob) }), '201', 401);
  });
});

describe('user administration', () => {
  test('GET /v1/users: a page of the users by name, without any _ field, with groups and two-factor state; 403 for others', async () => {
    const { service, clock } = await twoFactorService(ADMIN);
    await enrol(service, clock, 'bob');
    const admin = await login(service, 'alice');
    ok(await call(service, 'PATCH', '/v1/user/dave', { headers: sid(admin), json: { Disabled: true } }));
    const all = ok(await call(service, 'GET', '/v1/users', { headers: sid(admin) }));
    expect(all['~Elements'].map((user: { Name: string }) => user.Name)).toEqual(['alice', 'bob', 'dave', 'extern']);
    expect(all['~Elements'][1]).toEqual({ '~ObjectID': 'USR00002', Name: 'bob', Description: 'Bob Weber', Disabled: false, Groups: ['support'], TwoFactor: true, Passkeys: 0 });
    expect(all['~Elements'][0]).toMatchObject({ Groups: ['admins', 'sales'], TwoFactor: false });
    expect(all['~Elements'][2]).toMatchObject({ Name: 'dave', Disabled: true, Groups: [] });
    expect(JSON.stringify(all)).not.toMatch(/"_|password|secret/i);
    const page = ok(await call(service, 'GET', '/v1/users?page=1&perPage=3', { headers: sid(admin) }));
    expect(page).toMatchObject({ '~Count': 1, '~UnfilteredCount': 4, '~Elements': [{ Name: 'extern' }] });
    expect(ok(await call(service, 'GET', '/v1/users?perPage=0', { headers: sid(admin) }))).toEqual({ '~Count': 0, '~UnfilteredCount': 4, '~Elements': [] });
    const bob = await login(service, 'bob', ['crm']);
    expectError(await call(service, 'GET', '/v1/users', { headers: sid(bob) }), '403', 403);
    expectError(await call(service, 'GET', '/v1/users?perPage=1001', { headers: sid(admin) }), '400', 400);
    expectError(await call(service, 'GET', '/v1/users?page=-1', { headers: sid(admin) }), '400', 400);
    expectError(await call(service, 'GET', '/v1/users'), '204', 401);
    const off = await demoService();
    expectError(await call(off, 'GET', '/v1/users', { headers: sid(await login(off, 'alice')) }), '403', 403);
  });

  test('POST /v1/user creates a user who can log in; 409 for a taken name; 403 for others', async () => {
    const service = await demoService(ADMIN);
    const admin = await login(service, 'alice');
    const bob = await login(service, 'bob');
    const user = { Name: 'erin', pass: 'erin long secret', Groups: ['sales'], Description: 'Erin', Licences: ['crm', { app: 'shop', parallel: 1 }] };
    expectError(await call(service, 'POST', '/v1/user', { headers: sid(bob), json: user }), '403', 403);
    expect(ok(await call(service, 'POST', '/v1/user', { headers: sid(admin), json: user }))).toEqual({ '~ObjectID': expect.stringMatching(/^[0-9A-Z]{8}$/), Name: 'erin' });
    const erin = ok(await call(service, 'POST', '/v1/login', { json: { user: 'erin', pass: clientPassValue('erin long secret'), appNames: ['crm', 'shop'] } }));
    expect(erin.user).toMatchObject({ Name: 'erin', Description: 'Erin', Groups: { '~Count': 1 } });
    expectError(await call(service, 'POST', '/v1/login', { json: { user: 'erin', pass: clientPassValue('erin long secret'), appNames: ['shop'] } }), '101', 403);
    expectError(await call(service, 'POST', '/v1/user', { headers: sid(admin), json: user }), '409', 409);
  });

  test('bad bodies are 400 naming the member: unknown members, unknown groups, short or long passwords, bad licences', async () => {
    const service = await demoService(ADMIN);
    const admin = await login(service, 'alice');
    const cases: Array<[unknown, RegExp]> = [
      [{ Name: 'x', pass: 'long enough pass', Admin: true }, /unknown member "Admin"/],
      [{ Name: 'x', pass: 'long enough pass', Groups: ['nope'] }, /no group named "nope"/],
      [{ Name: 'x', pass: 'short' }, /pass refused: .*at least 10/],
      [{ Name: 'x', pass: 'y'.repeat(1025) }, /pass must be at most 1024/],
      [{ Name: 'x', pass: 'long enough pass', Licences: [{ app: 'shop' }] }, /licence/],
      [{ pass: 'long enough pass' }, /Name is required/],
    ];
    for (const [body, message] of cases) {
      const result = await call(service, 'POST', '/v1/user', { headers: sid(admin), json: body });
      expectError(result, '400', 400);
      expect(result.body.status.statusMessage).toMatch(message);
    }
    expectError(await call(service, 'PATCH', '/v1/user/bob', { headers: sid(admin), json: { Disabled: 'yes' } }), '400', 400);
    expectError(await call(service, 'PATCH', '/v1/user/nobody', { headers: sid(admin), json: { Disabled: true } }), '404', 404);
  });

  test('PATCH Disabled: logins answer 302 (as a wrong password) and its plain, JWT and secure sessions end; enabling again', async () => {
    const service = await demoService(ADMIN);
    const admin = await login(service, 'alice');
    const plain = await login(service, 'bob');
    const jwt = await loginToken(service, 'bob');
    const secure = await nodeSecureLogin(service, nodeKeyPair(), { user: 'bob' });
    expect(ok(await call(service, 'PATCH', '/v1/user/bob', { headers: sid(admin), json: { Disabled: true } }))).toMatchObject({ Name: 'bob', Disabled: true });
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(plain) }), '201', 401);
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: { authorization: `Bearer ${jwt}` } }), '201', 401);
    await expect(secureCall(service, secure, 1, 'GET', '/v1/object/CUS00001')).rejects.toThrow(/not encrypted: 401/);
    const refused = await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) });
    expectError(refused, '302', 401);
    expect(refused.text).toBe((await call(service, 'POST', '/v1/login', { json: loginBody('bob', 'wrong password') })).text);
    ok(await call(service, 'PATCH', '/v1/user/bob', { headers: sid(admin), json: { Disabled: false, Groups: ['sales'], Licences: ['crm'] } }));
    const back = ok(await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) }));
    expect(back.user.Groups['~Elements'].map((group: any) => group.Name)).toEqual(['sales']);
    expectError(await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob, ['hr']) }), '306', 403);
  });

  test('PATCH pass sets the password and ends the user\'s sessions', async () => {
    const service = await demoService(ADMIN);
    const admin = await login(service, 'alice');
    const bob = await login(service, 'bob');
    ok(await call(service, 'PATCH', '/v1/user/bob', { headers: sid(admin), json: { pass: 'set by the admin' } }));
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(bob) }), '201', 401);
    ok(await call(service, 'POST', '/v1/login', { json: loginBody('bob', 'set by the admin') }));
    ok(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(admin) })); // the admin's own session lives
  });
});

const redis = await serverAvailable('Redis', 'the accounts test of two instances sharing Redis');

describe.runIf(redis)('two instances sharing Redis', () => {
  const prefix = `odbrest-accounts:${RUN_ID}:`;
  const services: Service[] = [];
  afterAll(async () => {
    for (const service of services) await service.close();
    await deleteKeys(prefix);
  });

  test('a session ended on one instance answers 201 at once on the other, and its seat is free on both', async () => {
    const store = new MemoryObjectStore();
    const make = async (data?: ReturnType<typeof demoData>) => {
      const service = createService({ store, data, kv: new RedisKeyValueStore({ url: REDIS_URL, prefix }), session: { jwtSecret: `shared secret of the accounts test ${RUN_ID}` }, users: { passwordIterations: 1000, admins: 'admins' } });
      await service.ready;
      services.push(service);
      return service;
    };
    const a = await make(demoData());
    const b = await make();
    const shop = await login(b, 'bob', ['shop']);
    const jwt = await loginToken(b, 'bob');
    const current = await login(a, 'bob');
    ok(await call(b, 'GET', '/v1/object/CUS00001', { headers: sid(shop) })); // b has it parsed and cached
    ok(await call(b, 'GET', '/v1/object/CUS00001', { headers: { authorization: `Bearer ${jwt}` } }));
    const listed = ok(await call(a, 'GET', '/v1/sessions', { headers: sid(current) }));
    expect(listed['~Count']).toBe(3);
    const shopHandle = listed['~Elements'].find((element: any) => element.Apps.includes('shop'))['~ObjectID'];
    ok(await call(a, 'DELETE', `/v1/sessions/${shopHandle}`, { headers: sid(current) }));
    expectError(await call(b, 'GET', '/v1/object/CUS00001', { headers: sid(shop) }), '201', 401);
    ok(await call(b, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob, ['shop']) }));
    // an administrator on b disables bob: a's session ends too
    const admin = await login(b, 'alice');
    ok(await call(b, 'PATCH', '/v1/user/bob', { headers: sid(admin), json: { Disabled: true } }));
    expectError(await call(a, 'GET', '/v1/object/CUS00001', { headers: sid(current) }), '201', 401);
    expectError(await call(a, 'GET', '/v1/object/CUS00001', { headers: { authorization: `Bearer ${jwt}` } }), '201', 401);
  });
});
