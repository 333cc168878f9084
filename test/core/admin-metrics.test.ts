/**
 * The instance's metrics and recent requests (PROTOCOL.md 6.12) and `X-Request-Id` on every answer.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, type ServiceOptions } from '../../src/index.js';
import { call, demoService, expectError, login, testClock } from '../helpers.js';

async function adminService(options: ServiceOptions = {}) {
  const service = await demoService({ users: { admins: 'admins' }, ...options });
  const alice = await login(service, 'alice');
  const as = (method: string, path: string, headers: Record<string, string> = {}) => call(service, method, path, { headers: { sessionId: alice, ...headers } });
  return { service, alice, as };
}

describe('X-Request-Id', () => {
  it('is on every answer: a new one, or the client valid own', async () => {
    const { service, as } = await adminService();
    const answers = [
      await as('GET', '/v1/object/CUS00001'),
      await as('GET', '/v1/no/such/route'),
      await call(service, 'GET', '/v1/object/CUS00001', { noAppKey: true }),
      await call(service, 'GET', '/_CheckService', { noAppKey: true }),
      await call(service, 'GET', '/openapi.json'),
      await as('POST', '/v1/object/Customer'), // 403: no write rights
    ];
    const ids = answers.map((answer) => answer.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect((await as('GET', '/v1/object/CUS00001', { 'x-request-id': 'trace-42.a_b' })).headers.get('x-request-id')).toBe('trace-42.a_b');
    for (const bad of ['x'.repeat(65), 'has space', 'semi;colon', '']) {
      const id = (await as('GET', '/v1/object/CUS00001', { 'x-request-id': bad })).headers.get('x-request-id');
      expect(id).not.toBe(bad);
      expect(id).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    }
  });

  it('is written in the request log line and entry', async () => {
    const lines: string[] = [];
    const service = await demoService({ logger: (line) => lines.push(line) });
    const answer = await call(service, 'GET', '/_CheckService', { noAppKey: true, headers: { 'x-request-id': 'follow-me' } });
    expect(answer.headers.get('x-request-id')).toBe('follow-me');
    expect(lines.at(-1)).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z GET \/_CheckService 200 0 [\d.]+ms follow-me$/);
  });
});

describe('GET /v1/admin/metrics', () => {
  it('counts requests, 5xx errors, latency and sessions per interval and per route, for admins only', async () => {
    const clock = testClock(Date.UTC(2026, 10, 27, 12, 0, 5));
    const { service, as } = await adminService({ now: clock.now, macros: { boom: () => Promise.reject(new Error('internal detail')), refuse: () => Promise.reject(new ApiError('400', 'no')) } });
    const bob = await login(service, 'bob');
    for (let i = 0; i < 3; i++) await as('GET', '/v1/object/CUS00001');
    await call(service, 'GET', '/v1/object/CUS00002', { headers: { sessionId: bob } });
    await as('POST', '/v1/execute/boom');
    await as('POST', '/v1/execute/refuse');
    clock.advance(60_000);
    await as('GET', '/v1/objects/Customer');
    expectError(await call(service, 'GET', '/v1/admin/metrics', { headers: { sessionId: bob } }), '403', 403);
    const metrics = await as('GET', '/v1/admin/metrics?minutes=15');
    expect(metrics.status).toBe(200);
    const data = metrics.body.data;
    expect(data.Interval).toBe(10);
    expect(typeof data.Instance).toBe('string');
    for (const series of Object.values(data.Series) as unknown[][]) expect(series).toHaveLength(90);
    // two logins, 4 reads, 2 macros in the first interval; a listing and this request's own metrics in the current one (not yet counted)
    const requests: number[] = data.Series.Requests;
    expect(requests.reduce((a, b) => a + b, 0)).toBe(2 + 4 + 2 + 1 + 1); // + bob's 403
    expect(requests.at(-1)).toBe(2);
    expect(data.Series.Errors.reduce((a: number, b: number) => a + b, 0)).toBe(1);
    expect(data.Series.Sessions[data.Series.Sessions.length - 7]).toBe(2);
    const read = data.Routes.find((row: { Route: string }) => row.Route === '/v1/object/:id');
    expect(read).toMatchObject({ Method: 'GET', Count: 4, Errors: 0 });
    expect(read.P50Ms).toBeGreaterThan(0);
    expect(read.P99Ms).toBeGreaterThanOrEqual(read.P50Ms);
    expect(data.Routes.find((row: { Route: string }) => row.Route === '/v1/execute/:macroName')).toMatchObject({ Count: 2, Errors: 1 });
    const hour = (await as('GET', '/v1/admin/metrics?minutes=60')).body.data;
    expect(hour.Interval).toBe(60);
    expect(hour.Series.Requests).toHaveLength(60);
    for (const bad of ['0', '61', 'abc', '1.5']) expectError(await as('GET', `/v1/admin/metrics?minutes=${bad}`), '400', 400);
  });
});

describe('GET /v1/admin/requests', () => {
  it('lists the recent requests newest first, by route template, without credentials, query text or header values', async () => {
    const { service, alice, as } = await adminService();
    await as('GET', `/v1/objects/Customer?query=${encodeURIComponent('{"queryString":"Name = \\"very-secret-name\\""}')}`, { 'x-request-id': 'mine-1', 'x-custom': 'header-secret' });
    await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: 'not-a-session-but-secret' } });
    const listed = await as('GET', '/v1/admin/requests?perPage=3');
    expect(listed.body.data['~Count']).toBe(3);
    const [first, second, third] = listed.body.data['~Elements'];
    expect(first).toMatchObject({ Method: 'GET', Route: '/v1/object/:id', Status: 401, Code: '201', User: null });
    expect(second).toMatchObject({ Method: 'GET', Route: '/v1/objects/:className', Status: 200, Code: '0', User: 'alice', RequestId: 'mine-1' });
    expect(third.Route).toBe('/v1/login');
    expect(first.Time).toMatch(/^\d{8}T\d{6}\+00:00$/);
    expect(typeof first.DurationMs).toBe('number');
    const all = (await as('GET', '/v1/admin/requests?perPage=1000')).text;
    for (const secret of ['very-secret-name', 'header-secret', 'not-a-session-but-secret', alice, 'alice-secret', 'CUS00001']) expect(all).not.toContain(secret);
    const paged = await as('GET', '/v1/admin/requests?page=1&perPage=2');
    expect(paged.body.data['~Elements'][0].RequestId).toBe(listed.body.data['~Elements'][0].RequestId); // the two listings since came first
    expectError(await as('GET', '/v1/admin/requests?perPage=1001'), '400', 400);
  });

  it('lists a /v1/multi as one request of its own route, whatever its items', async () => {
    const { service, alice, as } = await adminService();
    const json = [
      { method: 'GET', path: '/v1/object/CUS00001' },
      { method: 'GET', path: '/v1/objects/Customer' },
    ];
    const answer = await call(service, 'POST', '/v1/multi', { headers: { sessionId: alice }, json });
    expect(answer.status).toBe(200);
    const [latest] = (await as('GET', '/v1/admin/requests?perPage=1')).body.data['~Elements'];
    expect(latest).toMatchObject({ Method: 'POST', Route: '/v1/multi', Status: 200, Code: '0', User: 'alice', RequestId: answer.headers.get('x-request-id') });
  });

  it('keeps nothing with metrics: false, and the answer still carries X-Request-Id', async () => {
    const { as } = await adminService({ metrics: false });
    await as('GET', '/v1/object/CUS00001');
    const listed = await as('GET', '/v1/admin/requests');
    expect(listed.body.data['~UnfilteredCount']).toBe(0);
    expect(listed.headers.get('x-request-id')).toBeTruthy();
  });
});
