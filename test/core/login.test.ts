import { decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, test } from 'vitest';
import { clientPassValue, createService, MemoryObjectStore } from '../../src/index.js';
import { call, CONTACTS, demoService, expectError, loginBody, testClock, USERS } from '../helpers.js';

describe('POST /v1/login', () => {
  test('expiresAt is the login time plus the absolute session lifetime', async () => {
    const clock = testClock();
    const service = await demoService({ now: clock.now, session: { absoluteTimeoutMs: 12 * 3_600_000 } });
    const result = await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice) });
    expect(Date.parse(result.body.data.expiresAt)).toBe(clock.now() + 12 * 3_600_000);
  });

  test('a jwtSecret shorter than 32 bytes is refused when the service is made', () => {
    expect(() => createService({ session: { jwtSecret: 'x'.repeat(31) } })).toThrow('jwtSecret must be at least 32 bytes');
  });

  test('answers the whole envelope with sessionId, the serialized user and databaseName', async () => {
    const service = await demoService({ databaseName: 'demo' });
    const result = await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice, ['crm', 'shop']) });
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toMatch(/^application\/json/);
    const { status, data } = result.body;
    expect(status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
    expect(Object.keys(data).sort()).toEqual(['acls', 'databaseName', 'expiresAt', 'sessionId', 'user']);
    expect(data.sessionId).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    expect(data.databaseName).toBe('demo');
    expect(data.user).toMatchObject({
      '~ClassName': 'User',
      '~ObjectID': 'USR00001',
      Name: 'alice',
      Description: 'Alice Schmidt',
      Groups: { '~Count': 2, '~UnfilteredCount': 2 },
      Employee: {
        '~ClassName': 'Employee',
        Name1: 'Alice',
        Name2: 'Schmidt',
        Name3: 'Head of sales',
        Bild: { '~ClassName': 'Bild', '~ObjectID': 'IMG00001' },
        // a contact person alice may not read (PROTOCOL.md 6.4): metadata only
        Mitarbeiteransprechpartner: { '~ClassName': 'ContactPerson', '~ObjectID': 'CON00001' },
      },
    });
    expect(Object.keys(data.user.Employee.Mitarbeiteransprechpartner)).toEqual(['~ClassName', '~ObjectID', '~StoreTime']);
    expect(data.user['~StoreTime']).toMatch(/^\d{8}T\d{6}\+00:00$/);
    expect(data.user.Groups['~Elements'].map((g: { Name: string }) => g.Name)).toEqual(['admins', 'sales']);
    // internal fields (password hash, licences) never leave the server
    expect(result.text).not.toMatch(/_password|_licences|pbkdf2/);
  });

  test('every login creates a new session', async () => {
    const service = await demoService();
    const first = await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) });
    const second = await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) });
    expect(first.body.data.sessionId).not.toBe(second.body.data.sessionId);
  });

  test('appNames may be a single string', async () => {
    const service = await demoService();
    const result = await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob, 'crm') });
    expect(result.body.status.internalStatus).toBe('0');
  });

  test('unknown members (device, furtherencryption) are ignored, and a null 2faToken means none', async () => {
    const service = await demoService();
    const json = { ...loginBody('bob', USERS.bob), device: 'phone', furtherencryption: true, '2faToken': null };
    const result = await call(service, 'POST', '/v1/login', { json });
    expect(result.body.status.internalStatus).toBe('0');
  });

  test('Content-Type with a charset parameter is accepted', async () => {
    const service = await demoService();
    const result = await call(service, 'POST', '/v1/login', {
      body: JSON.stringify(loginBody('bob', USERS.bob)),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(result.body.status.internalStatus).toBe('0');
  });

  test.each([
    ['user', { pass: 'x', appNames: [] }, 'user is required'],
    ['pass', { user: 'bob', appNames: [] }, 'pass is required'],
    ['appNames', { user: 'bob', pass: 'x' }, 'appNames is required'],
    ['user as number', { user: 7, pass: 'x', appNames: [] }, 'user must be a string'],
    ['pass as null', { user: 'bob', pass: null, appNames: [] }, 'pass must be a string'],
    ['appNames as number', { user: 'bob', pass: 'x', appNames: 3 }, 'appNames must be an array of strings or a string'],
    ['appNames with a number', { user: 'bob', pass: 'x', appNames: ['crm', 1] }, 'appNames must be an array of strings or a string'],
    ['user too long', { user: 'u'.repeat(1025), pass: 'x', appNames: [] }, 'user must be at most 1024 characters'],
  ])('%s is rejected with 400 naming the member', async (_name, json, message) => {
    const service = await demoService();
    const result = await call(service, 'POST', '/v1/login', { json });
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe(message);
  });

  test.each([
    ['an array', '[]'],
    ['a string', '"alice"'],
    ['null', 'null'],
    ['empty', ''],
  ])('a body that is %s is 400', async (_name, body) => {
    const service = await demoService();
    const result = await call(service, 'POST', '/v1/login', { body, headers: { 'content-type': 'application/json' } });
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe('request body must be a JSON object');
  });

  test('a body that is not JSON is 400', async () => {
    const service = await demoService();
    const result = await call(service, 'POST', '/v1/login', { body: '{"user":', headers: { 'content-type': 'application/json' } });
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe('request body is not valid JSON');
  });

  test.each(['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx'])('Content-Type %s is 415', async (type) => {
    const service = await demoService();
    const result = await call(service, 'POST', '/v1/login', { body: JSON.stringify(loginBody('bob', USERS.bob)), headers: { 'content-type': type } });
    expectError(result, '415', 415);
  });

  test('wrong password and unknown user give the same 302', async () => {
    const service = await demoService();
    const wrong = await call(service, 'POST', '/v1/login', { json: loginBody('bob', 'not-bobs') });
    const unknown = await call(service, 'POST', '/v1/login', { json: loginBody('nobody', 'whatever') });
    expectError(wrong, '302', 401);
    expectError(unknown, '302', 401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.text).not.toContain(clientPassValue('not-bobs'));
  });

  test('a user without the licence for a requested application gets 306', async () => {
    const service = await demoService();
    const result = await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob, ['crm', 'erp']) });
    expectError(result, '306', 403);
    expect(result.body.status.statusMessage).toBe('user holds no licence for application "erp"');
  });

  test('a user without any licence can only log in with empty appNames', async () => {
    const service = await demoService();
    expectError(await call(service, 'POST', '/v1/login', { json: loginBody('dave', USERS.dave, ['crm']) }), '306', 403);
    const ok = await call(service, 'POST', '/v1/login', { json: loginBody('dave', USERS.dave, []) });
    expect(ok.body.status.internalStatus).toBe('0');
  });
});

describe('POST /v2/login', () => {
  test('answers a JWT with user and databaseName, and no session id', async () => {
    const service = await demoService();
    const result = await call(service, 'POST', '/v2/login', { json: loginBody('alice', USERS.alice) });
    expect(result.body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
    expect(Object.keys(result.body.data).sort()).toEqual(['acls', 'databaseName', 'expiresAt', 'token', 'user']);
    const header = decodeProtectedHeader(result.body.data.token);
    const payload = decodeJwt(result.body.data.token) as { sub: string; sid: string; exp: number; iat: number };
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload.sub).toBe('alice');
    expect(typeof payload.sid).toBe('string');
    expect(payload.exp - payload.iat).toBe(12 * 3600);
  });

  test('checks credentials like /v1/login', async () => {
    const service = await demoService();
    expectError(await call(service, 'POST', '/v2/login', { json: loginBody('alice', 'wrong') }), '302', 401);
    expectError(await call(service, 'POST', '/v2/login', { json: { user: 'alice' } }), '400', 400);
  });
});

describe('POST /v1/auth/df (custom login of non-database users)', () => {
  test('logs in a contact person with the default check', async () => {
    const service = await demoService();
    const result = await call(service, 'POST', '/v1/auth/df', { json: loginBody('carol', CONTACTS.carol) });
    expect(result.body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
    expect(result.body.data.user).toMatchObject({ '~ClassName': 'ContactPerson', '~ObjectID': 'CON00001', Name1: 'Carol' });
    expect(result.body.data.databaseName).toBe('odbrest');
    const object = await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: result.body.data.sessionId } });
    expect(object.body.data.Name).toBe('Ben Bauer');
  });

  test('database users are not custom-login users, and vice versa', async () => {
    const service = await demoService();
    expectError(await call(service, 'POST', '/v1/auth/df', { json: loginBody('alice', USERS.alice) }), '302', 401);
    expectError(await call(service, 'POST', '/v1/login', { json: loginBody('carol', CONTACTS.carol) }), '302', 401);
  });

  test('a host-supplied check replaces the default', async () => {
    const store = new MemoryObjectStore();
    const kiosk = await store.put({ className: 'Kiosk', fields: { Name: 'kiosk-1', _licences: ['crm'] } });
    const service = createService({
      store,
      customLogin: { authenticate: async (user, pass) => (user === 'kiosk-1' && pass === 'open sesame' ? kiosk : undefined) },
    });
    const ok = await call(service, 'POST', '/v1/auth/df', { json: { user: 'kiosk-1', pass: 'open sesame', appNames: 'crm' } });
    expect(ok.body.data.user).toMatchObject({ '~ClassName': 'Kiosk', '~ObjectID': kiosk.id, Name: 'kiosk-1' });
    expectError(await call(service, 'POST', '/v1/auth/df', { json: { user: 'kiosk-1', pass: 'no', appNames: 'crm' } }), '302', 401);
  });
});

describe('users.className and customLogin.className', () => {
  test('name the classes /v1/login and /v1/auth/df check', async () => {
    const service = createService({
      users: { className: 'Member', passwordIterations: 1000 },
      customLogin: { className: 'Partner' },
      data: {
        objects: [
          { '~ClassName': 'Member', Name: 'mia', _password: 'mia-secret', _licences: ['crm'] },
          { '~ClassName': 'User', Name: 'uwe', _password: 'uwe-secret', _licences: ['crm'] },
          { '~ClassName': 'Partner', Name: 'pat', _password: 'pat-secret' },
          { '~ClassName': 'ContactPerson', Name: 'cid', _password: 'cid-secret' },
        ],
      },
    });
    await service.ready;
    const login = (path: string, user: string, password: string, appNames: string[]) =>
      call(service, 'POST', path, { json: loginBody(user, password, appNames) });
    const member = await login('/v1/login', 'mia', 'mia-secret', ['crm']);
    expect(member.body.status.internalStatus).toBe('0');
    expect(member.body.data.user['~ClassName']).toBe('Member');
    expectError(await login('/v1/login', 'uwe', 'uwe-secret', ['crm']), '302', 401); // a User, not a Member
    const partner = await login('/v1/auth/df', 'pat', 'pat-secret', []);
    expect(partner.body.status.internalStatus).toBe('0');
    expect(partner.body.data.user['~ClassName']).toBe('Partner');
    expectError(await login('/v1/auth/df', 'cid', 'cid-secret', []), '302', 401); // a ContactPerson, not a Partner
  });
});
