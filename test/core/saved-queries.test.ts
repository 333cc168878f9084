/** Saved queries (PROTOCOL.md 6.12): per user, at most 200, query text checked as listings check it. */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../src/index.js';
import { call, demoService, expectError, login } from '../helpers.js';

const VIEW = { Class: 'Customer', Query: 'City = "Kiel" and Active = true', OrderBy: '-Revenue', Columns: ['Name', 'City'] };

describe('/v1/savedQueries', () => {
  it('saves, lists, replaces and deletes a user own queries; another user sees none of them', async () => {
    const store = new MemoryObjectStore();
    const service = await demoService({ store });
    const alice = await login(service, 'alice');
    const bob = await login(service, 'bob');
    const as = (session: string, method: string, path: string, json?: unknown) => call(service, method, path, { headers: { sessionId: session }, json });
    expect((await as(alice, 'GET', '/v1/savedQueries')).body.data).toEqual({ '~Count': 0, '~UnfilteredCount': 0, '~Elements': [] });
    const saved = await as(alice, 'PUT', '/v1/savedQueries/Kiel%20customers', VIEW);
    expect(saved.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { Name: 'Kiel customers', ...VIEW } });
    await as(alice, 'PUT', '/v1/savedQueries/all', { Name: 'all', Class: 'Customer', Query: '' });
    await as(alice, 'PUT', '/v1/savedQueries/Kiel%20customers', { ...VIEW, Query: 'City = "Kiel"' });
    const listed = (await as(alice, 'GET', '/v1/savedQueries')).body.data;
    expect(listed['~Elements']).toEqual([{ Name: 'Kiel customers', ...VIEW, Query: 'City = "Kiel"' }, { Name: 'all', Class: 'Customer', Query: '' }]);
    expect((await as(bob, 'GET', '/v1/savedQueries')).body.data['~Count']).toBe(0);
    expectError(await as(bob, 'DELETE', '/v1/savedQueries/all'), '404', 404);
    // kept in the store: a restarted service still has them
    const restarted = await demoService({ store, data: undefined });
    const again = await login(restarted, 'alice');
    expect((await call(restarted, 'GET', '/v1/savedQueries', { headers: { sessionId: again } })).body.data['~Count']).toBe(2);
    expect((await as(alice, 'DELETE', '/v1/savedQueries/all')).body.data).toEqual({});
    expectError(await as(alice, 'DELETE', '/v1/savedQueries/all'), '404', 404);
    expect((await as(alice, 'GET', '/v1/savedQueries')).body.data['~Count']).toBe(1);
  });

  it('refuses query text that does not parse, with its position, and bodies of the wrong shape', async () => {
    const service = await demoService();
    const alice = await login(service, 'alice');
    const put = (json: unknown, name = 'x') => call(service, 'PUT', `/v1/savedQueries/${name}`, { headers: { sessionId: alice }, json });
    const bad = await put({ ...VIEW, Query: 'City = ' });
    expectError(bad, '400', 400);
    expect(bad.body.status.statusMessage).toMatch(/^query text: expected a value after .* at 7$/);
    expectError(await put({ ...VIEW, Class: '9x' }), '400', 400);
    expectError(await put({ ...VIEW, Name: 'other' }), '400', 400);
    expectError(await put({ ...VIEW, Extra: 1 }), '400', 400);
    expectError(await put({ Class: 'Customer' }), '400', 400);
    expectError(await put({ ...VIEW, Columns: 'Name' }), '400', 400);
    expectError(await put(VIEW, 'x'.repeat(129)), '400', 400);
    expectError(await call(service, 'GET', '/v1/savedQueries'), '204', 401);
  });

  it('keeps at most 200 a user', async () => {
    const service = await demoService();
    const alice = await login(service, 'alice');
    for (let i = 0; i < 200; i++) await call(service, 'PUT', `/v1/savedQueries/q${i}`, { headers: { sessionId: alice }, json: VIEW });
    expect((await call(service, 'PUT', '/v1/savedQueries/q5', { headers: { sessionId: alice }, json: VIEW })).status).toBe(200); // a replacement is fine
    const over = await call(service, 'PUT', '/v1/savedQueries/q200', { headers: { sessionId: alice }, json: VIEW });
    expectError(over, '400', 400);
    expect(over.body.status.statusMessage).toBe('a user may save at most 200 queries; delete one first');
  });
});
