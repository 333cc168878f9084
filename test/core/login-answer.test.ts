/**
 * Issue 25, items 5 and 6: what the product's clients read of a login. The Dart client casts each
 * member of `acls` strictly (PROTOCOL.md 2.2); the C# sample sends its password in plain text and
 * looks for the message `Session is invalid` (2.1, 1.4); the TypeScript sample fetches the key with
 * no headers (1.2, tested in test/secure/login.test.ts); the second-factor status takes `username` (2.6).
 */
import { describe, expect, test } from 'vitest';
import { demoAccess } from '../../examples/demo-access.mjs';
import { call, demoService, loginBody, USERS } from '../helpers.js';
import { enrol, twoFactorService } from '../two-factor/support.js';

const aclShape = (app: string, parallel: number, deviceId: string | null, tfa = false) => ({
  Oid: expect.any(String),
  Status: 0,
  UserName: 'bob',
  DeviceID: deviceId,
  LicenseKey: expect.any(String),
  LicenseLevel: null,
  ParallelConnections: parallel,
  TFAActivated: tfa,
  TFAConfirmed: tfa,
  Application: app,
  AddOns: { '~Count': 0, '~Elements': [] },
});

describe('acls in every session-making login answer', () => {
  test('one entry per application, each member of the type 2.2 gives; DeviceID from device.deviceId', async () => {
    const service = await demoService({ access: demoAccess });
    const json = { ...loginBody('bob', USERS.bob, ['crm', 'hr']), device: { deviceId: 'dev-42', deviceName: 'Pixel' } };
    for (const path of ['/v1/login', '/v2/login']) {
      const { data } = (await call(service, 'POST', path, { json })).body;
      expect(data.acls).toEqual({ '~Count': 2, '~Elements': [aclShape('crm', 0, 'dev-42'), aclShape('hr', 0, 'dev-42')] });
    }
    // bob's shop licence has one seat: ParallelConnections 1
    const shop = (await call(service, 'POST', '/v1/login', { json: { ...json, appNames: ['shop'] } })).body.data;
    expect(shop.acls['~Elements']).toEqual([aclShape('shop', 1, 'dev-42')]);
    const withoutDevice = (await call(service, 'POST', '/v1/login', { json: { ...loginBody('bob', USERS.bob, 'crm'), device: 'not an object' } })).body.data;
    expect(withoutDevice.acls['~Elements']).toEqual([aclShape('crm', 0, null)]);
  });

  test('a macro-only login (appNames []) has an empty acls set', async () => {
    const service = await demoService();
    const { data } = (await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob, []) })).body;
    expect(data.acls).toEqual({ '~Count': 0, '~Elements': [] });
  });
});

describe('pass in either form (PROTOCOL.md 2.1)', () => {
  test('the MD5 form and the plain password both log in; a wrong plain password is 302', async () => {
    const service = await demoService();
    const md5 = await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice) });
    const plain = await call(service, 'POST', '/v1/login', { json: { user: 'alice', pass: USERS.alice, appNames: ['crm'] } });
    expect([md5.body.status.internalStatus, plain.body.status.internalStatus]).toEqual(['0', '0']);
    const wrong = await call(service, 'POST', '/v1/login', { json: { user: 'alice', pass: 'alice-secreT', appNames: ['crm'] } });
    expect(wrong.body.status).toEqual({ internalStatus: '302', statusMessage: 'wrong user name or password' });
  });

  test('users.acceptPlainPasswords: false refuses the plain form (302), the MD5 form still logs in', async () => {
    const service = await demoService({ users: { acceptPlainPasswords: false } });
    const plain = await call(service, 'POST', '/v1/login', { json: { user: 'alice', pass: USERS.alice, appNames: ['crm'] } });
    expect(plain.body.status.internalStatus).toBe('302');
    expect((await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice) })).body.status.internalStatus).toBe('0');
  });
});

test('an invalid sessionId answers 201 with exactly "Session is invalid" (the C# sample looks for it)', async () => {
  const service = await demoService();
  const answer = await call(service, 'GET', '/v1/objects/Customer', { headers: { sessionId: 'no-such-session' } });
  expect([answer.status, answer.body]).toEqual([401, { status: { internalStatus: '201', statusMessage: 'Session is invalid' }, data: {} }]);
});

describe('GET /v1/2fa/secret?username=', () => {
  test('the own name answers; another user needs the users.admins group (403), which then sees its status', async () => {
    const { service, clock } = await twoFactorService({ users: { passwordIterations: 1000, admins: 'admins' } });
    await enrol(service, clock, 'bob');
    const bob = (await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) })).body.data.sessionId;
    const alice = (await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice) })).body.data.sessionId;
    const own = await call(service, 'GET', '/v1/2fa/secret?app=hr&username=bob', { headers: { sessionId: bob } });
    expect(own.body.data).toEqual({ isActivated: true, isConfirmed: true, '2faStatus': 2 });
    const refused = await call(service, 'GET', '/v1/2fa/secret?app=hr&username=alice', { headers: { sessionId: bob } });
    expect([refused.status, refused.body.status.internalStatus]).toEqual([403, '403']);
    const asAdmin = await call(service, 'GET', '/v1/2fa/secret?app=hr&username=bob', { headers: { sessionId: alice } });
    expect(asAdmin.body.data).toEqual({ isActivated: true, isConfirmed: true, '2faStatus': 2 });
    const unknown = await call(service, 'GET', '/v1/2fa/secret?app=hr&username=nobody', { headers: { sessionId: alice } });
    expect(unknown.body.status.internalStatus).toBe('404');
  });
});
