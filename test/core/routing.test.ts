import { describe, expect, test } from 'vitest';
import { createService } from '../../src/index.js';
import { call, demoService, expectError, login, loginBody, USERS } from '../helpers.js';

describe('appkey', () => {
  test.each([
    ['missing', undefined, 'appkey header missing'],
    ['empty', '', 'appkey header missing'],
  ])('%s is 100 on every endpoint', async (_name, value, message) => {
    const service = await demoService();
    const headers: Record<string, string> = value === undefined ? {} : { appkey: value };
    for (const [method, path] of [['POST', '/v1/login'], ['GET', '/v1/object/CUS00001'], ['POST', '/v1/execute/x'], ['GET', '/v1/nothing']] as const) {
      const result = await call(service, method, path, { headers, noAppKey: true, json: method === 'POST' ? loginBody('alice', USERS.alice) : undefined });
      expectError(result, '100', 401);
      expect(result.body.status.statusMessage).toBe(message);
    }
  });

  test('with configured appKeys, other values are 100', async () => {
    const service = await demoService({ appKeys: ['mobile', 'web'] });
    expectError(await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob), headers: { appkey: 'other' } }), '100', 401);
    const ok = await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob), headers: { appkey: 'web' } });
    expect(ok.body.status.internalStatus).toBe('0');
  });
});

describe('routes', () => {
  test('an unknown route is 404', async () => {
    const service = await demoService();
    expectError(await call(service, 'GET', '/v1/unknown'), '404', 404);
    expectError(await call(service, 'GET', '/V1/LOGIN'), '404', 404); // paths are case-sensitive
  });

  test('a wrong method is 405 with Allow', async () => {
    const service = await demoService();
    const result = await call(service, 'GET', '/v1/login');
    expectError(result, '405', 405);
    expect(result.headers.get('allow')).toBe('POST');
    expect((await call(service, 'PUT', '/v1/object/X')).headers.get('allow')).toBe('GET, POST, PATCH, DELETE');
  });

  test('a base path and an alias prefix every route', async () => {
    const service = await demoService({ mount: { basePath: '/api/', alias: 'crmdb' } });
    const ok = await call(service, 'POST', '/api/crmdb/v1/login', { json: loginBody('bob', USERS.bob) });
    expect(ok.body.status.internalStatus).toBe('0');
    expectError(await call(service, 'POST', '/api/v1/login', { json: loginBody('bob', USERS.bob) }), '404', 404);
    expectError(await call(service, 'POST', '/crmdb/v1/login', { json: loginBody('bob', USERS.bob) }), '404', 404);
    expectError(await call(service, 'POST', '/api/other/v1/login', { json: loginBody('bob', USERS.bob) }), '404', 404);
  });

  test('serves(): ours exactly when fetch would not answer 404 (a wrong method or a bad encoding is still ours)', async () => {
    const service = await demoService({ mount: { basePath: '/api/', alias: 'crmdb' } });
    const cases: Array<[string, string, boolean]> = [
      ['GET', 'http://h/api/crmdb/v1/object/USR00001', true],
      ['GET', 'http://h/api/crmdb/v1/login', true], // 405
      ['GET', 'http://h/api/crmdb/v1/object/%E0%A4%A', true], // 400
      ['GET', 'http://h/api/crmdb/v1/nothing', false],
      ['GET', 'http://h/api/v1/object/USR00001', false], // no alias
      ['GET', 'http://h/hello', false], // outside the base path
      ['GET', 'not a url', false],
    ];
    for (const [method, url, expected] of cases) {
      expect(service.serves(url), `${method} ${url}`).toBe(expected);
      if (url.startsWith('http')) expect((await call(service, method, url.slice('http://h'.length))).status !== 404, url).toBe(expected);
    }
  });

  test.each(['v1', 'v2', 'a/b', ''])('alias %j is refused at start-up', (alias) => {
    expect(() => createService({ mount: { alias } })).toThrow(/alias .* is not allowed/);
  });

  test('percent-encoded object ids are decoded', async () => {
    const service = await demoService();
    await service.store.put({ id: 'A B', className: 'Thing', fields: { Name: 'spaced' } });
    const result = await call(service, 'GET', '/v1/object/A%20B', { headers: { sessionId: await login(service) } });
    expect(result.body.data).toMatchObject({ '~ObjectID': 'A B', Name: 'spaced' });
  });
});

describe('body size limit', () => {
  test('a body over maxBodyBytes is 413, declared or streamed', async () => {
    const service = await demoService({ maxBodyBytes: 100 });
    const big = JSON.stringify({ ...loginBody('bob', USERS.bob), pad: 'x'.repeat(100) });
    const declared = await call(service, 'POST', '/v1/login', { body: big, headers: { 'content-type': 'application/json' } });
    expectError(declared, '413', 413);
    expect(declared.body.status.statusMessage).toBe('request body is larger than 100 bytes');
    const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(big)); c.close(); } });
    const streamed = await service.fetch(new Request('http://x/v1/login', { method: 'POST', body: stream, headers: { appkey: 'k', 'content-type': 'application/json' }, duplex: 'half' } as RequestInit));
    expect(streamed.status).toBe(413);
    const small = await call(service, 'POST', '/v1/login', { json: { user: 'bob', pass: 'x', appNames: [] } });
    expectError(small, '302', 401);
  });

  test('the default limit is 1 MiB', async () => {
    const service = await demoService();
    const result = await call(service, 'POST', '/v1/execute/x', { body: 'x'.repeat(1024 * 1024 + 1), headers: { 'content-type': 'application/json' } });
    expectError(result, '413', 413);
  });
});
