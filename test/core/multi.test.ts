/** `POST /v1/multi` (PROTOCOL.md 6.5): items in order, as if sent alone with the outer credential. */
import { describe, expect, test } from 'vitest';
import type { Service } from '../../src/index.js';
import { call, demoService, expectError, login, loginBody, loginToken, USERS } from '../helpers.js';
import { nodeKeyPair, nodeSecureLogin, secureCall, secureRequest, sendSecure } from '../secure/node-client.js';

const OK = { internalStatus: '0', statusMessage: 'ok' };

/** A demo service with an `echo` macro that records the order of its calls. */
async function service(): Promise<{ service: Service; calls: unknown[] }> {
  const calls: unknown[] = [];
  const created = await demoService({
    macros: {
      echo: async (context, params) => {
        calls.push(params.n);
        return { params, user: (await context.user())?.fields.Name ?? null };
      },
    },
  });
  return { service: created, calls };
}

const multi = (target: Service, sessionId: string, items: unknown) => call(target, 'POST', '/v1/multi', { headers: { sessionId }, json: items });

/** The answer of one request sent alone, as a batch reports it. */
async function alone(target: Service, sessionId: string, method: string, path: string, json?: unknown) {
  const result = await call(target, method, path, { headers: { sessionId }, json });
  return { httpStatus: result.status, result: result.body };
}

describe('a batch', () => {
  test('runs its items in order, each answered as if sent alone: integer httpStatus, whole envelope; a failing item does not stop the others', async () => {
    const { service: target, calls } = await service();
    const sessionId = await login(target);
    const items = [
      { method: 'POST', path: '/v1/execute/echo', data: { n: 1 } },
      { method: 'GET', path: '/v1/object/NOPE0000' },
      { method: 'post', path: '/v1/execute/echo', data: { n: 3 } },
      { method: 'GET', path: '/v1/object/USR00001?' },
      { method: 'GET', path: '/_CheckSession' },
    ];
    const result = await multi(target, sessionId, items);
    expect(result.status).toBe(200);
    expect(result.body.status).toEqual(OK);
    const expected = [];
    for (const item of items) expected.push(await alone(target, sessionId, item.method.toUpperCase(), item.path, item.data));
    expect(result.body.data).toEqual(expected);
    expect(result.body.data.map((item: { httpStatus: unknown }) => item.httpStatus)).toEqual([200, 404, 200, 200, 200]);
    expect(result.body.data[0].result).toEqual({ status: OK, data: { params: { n: 1 }, user: 'alice' } });
    expect(calls).toEqual([1, 3, 1, 3]);
    expect(result.text).toContain('"httpStatus":404,');
  });

  test('an empty batch answers an empty list', async () => {
    const { service: target } = await service();
    expect((await multi(target, await login(target), [])).body).toEqual({ status: OK, data: [] });
  });

  test('items take the outer credential of any kind: a token', async () => {
    const { service: target } = await service();
    const token = await loginToken(target, 'bob');
    const result = await call(target, 'POST', '/v1/multi', { headers: { authorization: `Bearer ${token}` }, json: [{ method: 'POST', path: '/v1/execute/echo' }] });
    expect(result.body.data).toEqual([{ httpStatus: 200, result: { status: OK, data: { params: {}, user: 'bob' } } }]);
  });

  test('a macro-only session batches macros; its object reads get 307 in their items', async () => {
    const { service: target } = await service();
    const sessionId = await login(target, 'alice', []);
    const result = await multi(target, sessionId, [
      { method: 'GET', path: '/v1/object/USR00001' },
      { method: 'POST', path: '/v1/execute/echo', data: { n: 2 } },
    ]);
    expect(result.body.data.map((item: any) => [item.httpStatus, item.result.status.internalStatus])).toEqual([
      [403, '307'],
      [200, '0'],
    ]);
  });

  test('qb64 in an item path', async () => {
    const { service: target } = await service();
    const sessionId = await login(target);
    const query = Buffer.from('perPage=2').toString('base64url');
    const result = await multi(target, sessionId, [{ method: 'GET', path: `/v1/objects/Customer?qb64=${query}` }]);
    expect(result.body.data[0].result.data['~Count']).toBe(2);
  });

  test('100 items run; 101 are refused as a whole (400)', async () => {
    const { service: target, calls } = await service();
    const sessionId = await login(target);
    const items = (count: number) => Array.from({ length: count }, (_, n) => ({ method: 'POST', path: '/v1/execute/echo', data: { n } }));
    const hundred = await multi(target, sessionId, items(100));
    expect(hundred.body.data).toHaveLength(100);
    expect(calls).toHaveLength(100);
    const tooMany = await multi(target, sessionId, items(101));
    expectError(tooMany, '400', 400);
    expect(tooMany.body.status.statusMessage).toMatch(/at most 100 items/);
    expect(calls).toHaveLength(100);
  });
});

describe('items that may not run in a batch: 400 in their item, the others run', () => {
  const LOGIN = loginBody('alice', USERS.alice);
  test.each([
    ['a login', { method: 'POST', path: '/v1/login', data: LOGIN }],
    ['a token login', { method: 'POST', path: '/v2/login', data: LOGIN }],
    ['a custom login', { method: 'POST', path: '/v1/auth/df', data: { user: 'carol', pass: 'x', appNames: [] } }],
    ['a secure login', { method: 'POST', path: '/v2/login/secure', data: { credentials: 'x', publicKey: 'y' } }],
    ['the hybrid key', { method: 'GET', path: '/v2/login/key' }],
    ['a logout', { method: 'POST', path: '/v1/logout' }],
    ['a nested batch', { method: 'POST', path: '/v1/multi', data: [{ method: 'GET', path: '/_CheckSession' }] }],
  ])('%s', async (_case, item) => {
    const { service: target, calls } = await service();
    const sessionId = await login(target);
    const result = await multi(target, sessionId, [
      { method: 'POST', path: '/v1/execute/echo', data: { n: 1 } },
      item,
      { method: 'POST', path: '/v1/execute/echo', data: { n: 2 } },
    ]);
    expect(result.body.status).toEqual(OK);
    const [first, refused, last] = result.body.data;
    expect([first.httpStatus, last.httpStatus]).toEqual([200, 200]);
    expect(refused.httpStatus).toBe(400);
    expect(refused.result).toEqual({ status: { internalStatus: '400', statusMessage: expect.stringMatching(/not allowed in \/v1\/multi/) }, data: {} });
    expect(calls).toEqual([1, 2]);
    // nothing logged out, nothing logged in
    expect((await call(target, 'GET', '/_CheckSession', { headers: { sessionId } })).status).toBe(200);
  });
});

describe('malformed items: 400 in their item, the others run', () => {
  test.each([
    ['a number', 5, /item 1 must be a JSON object/],
    ['a string', 'GET /v1/object/USR00001', /item 1 must be a JSON object/],
    ['null', null, /item 1 must be a JSON object/],
    ['an array', ['GET', '/v1/object/USR00001'], /item 1 must be a JSON object/],
    ['no method', { path: '/v1/object/USR00001' }, /method is required/],
    ['a method that is not a string', { method: 1, path: '/v1/object/USR00001' }, /method must be a string/],
    ['an unknown method', { method: 'FETCH', path: '/v1/object/USR00001' }, /method must be one of/],
    ['no path', { method: 'GET' }, /path is required/],
    ['a path that is not a string', { method: 'GET', path: ['/v1'] }, /path must be a string/],
    ['a path without a leading /', { method: 'GET', path: 'v1/object/USR00001' }, /path must start with one \//],
    ['a path naming a host', { method: 'GET', path: '//example.com/v1/object/USR00001' }, /path must start with one \//],
    ['a path that is too long', { method: 'GET', path: `/v1/object/${'A'.repeat(5000)}` }, /path must be at most/],
    ['data that is not a macro parameter object', { method: 'POST', path: '/v1/execute/echo', data: [1, 2] }, /macro parameters must be a JSON object/],
    ['an unknown route', { method: 'GET', path: '/v1/nothing' }, /no route/],
  ])('%s', async (_case, item, message) => {
    const { service: target, calls } = await service();
    const sessionId = await login(target);
    const result = await multi(target, sessionId, [{ method: 'POST', path: '/v1/execute/echo', data: { n: 1 } }, item, { method: 'POST', path: '/v1/execute/echo', data: { n: 2 } }]);
    const [first, bad, last] = result.body.data;
    expect([first.httpStatus, last.httpStatus, calls]).toEqual([200, 200, [1, 2]]);
    expect(bad.result.status.statusMessage).toMatch(message);
    expect(bad.result.data).toEqual({});
    expect(bad.httpStatus).toBe(Number(bad.result.status.internalStatus));
    expect([400, 404]).toContain(bad.httpStatus);
  });
});

describe('a failure of the outer request is an ordinary envelope', () => {
  const items = [{ method: 'GET', path: '/_CheckSession' }];
  test('no credential: 204', async () => {
    const { service: target } = await service();
    expectError(await call(target, 'POST', '/v1/multi', { json: items }), '204', 401);
  });
  test('an unknown session: 201', async () => {
    const { service: target } = await service();
    expectError(await multi(target, 'nope', items), '201', 401);
  });
  test('no appkey: 100', async () => {
    const { service: target } = await service();
    expectError(await call(target, 'POST', '/v1/multi', { headers: { sessionId: await login(target) }, json: items, noAppKey: true }), '100', 401);
  });
  test.each([
    ['an object', { items }],
    ['no body', undefined],
    ['a string', 'x'],
  ])('a body that is not an array (%s): 400', async (_case, body) => {
    const { service: target } = await service();
    const result = await multi(target, await login(target), body);
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toMatch(/JSON array/);
  });
  test('a body that is not JSON: 400', async () => {
    const { service: target } = await service();
    const sessionId = await login(target);
    expectError(await call(target, 'POST', '/v1/multi', { headers: { sessionId, 'content-type': 'application/json' }, body: '[{' }), '400', 400);
  });
  test('a body that is not declared JSON: 415', async () => {
    const { service: target } = await service();
    const sessionId = await login(target);
    expectError(await call(target, 'POST', '/v1/multi', { headers: { sessionId, 'content-type': 'text/csv' }, body: JSON.stringify(items) }), '415', 415);
  });
});

describe('through the secure transport', () => {
  test('one encrypted message: the items share its session and leave the replay window alone', async () => {
    const { service: target } = await service();
    const secure = await nodeSecureLogin(target, nodeKeyPair());
    const items = [
      { method: 'GET', path: '/v1/object/USR00001' },
      { method: 'GET', path: '/v1/object/NOPE0000' },
      { method: 'POST', path: '/v1/execute/echo', data: { n: 1 } },
      { method: 'GET', path: '/_CheckSession' },
      { method: 'POST', path: '/v1/logout' },
    ];
    const batch = await secureCall(target, secure, 1, 'POST', '/v1/multi', items);
    expect([batch.status, batch.envelope.status]).toEqual([200, OK]);
    expect(batch.envelope.data.map((item: any) => [item.httpStatus, item.result.status.internalStatus])).toEqual([
      [200, '0'],
      [404, '404'],
      [200, '0'],
      [200, '0'],
      [400, '400'],
    ]);
    expect(batch.envelope.data[0].result.data.Name).toBe('alice');
    // the same items one by one, as messages 2 to 5: the batch used only number 1
    for (const [index, item] of items.slice(0, 4).entries()) {
      const single = await secureCall(target, secure, index + 2, item.method, item.path, item.data);
      expect({ httpStatus: single.status, result: single.envelope }).toEqual(batch.envelope.data[index]);
    }
    const replayed = await sendSecure(target, 'POST', '/v1/multi', secureRequest(secure, 1, 'POST', '/v1/multi', items));
    expectError(replayed, '205', 401);
  });
});
