/**
 * Issue 12, finding 6: `GET /v1/auth/google?appkey=%FF` (also `%C4%80`, `a%00b`) was a 500 with a
 * stack trace in the server log: the decoded value cannot be a header value, and copying it into a
 * `Headers` threw. Such a value is no app key: a `100` envelope. No provider needs to be configured.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startServer, type RunningServer } from '../adapters/servers.js';
import { failure, rawRequest } from './raw-http.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer('node');
});
afterAll(() => server?.stop());

const get = (query: string) => rawRequest(server.origin, { method: 'GET', path: `/api/v1/auth/google?${query}` });

test.each(['appkey=%FF', 'appkey=%C4%80', 'appkey=a%00b', 'appkey=a%0D%0Ab', 'appkey=%E2%80%A8', 'appkey=%F0%9F%94%91', 'appkey=%FF&appkey=ok'])(
  '%s is a 100 envelope',
  async (query) => {
    const answer = await get(query);
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(failure('100', 'appkey not accepted: it is not a valid header value'));
  },
);

test('the same query values after a valid appkey header are not read', async () => {
  const answer = await rawRequest(server.origin, { method: 'GET', path: '/api/v1/auth/google?appkey=%FF', headers: { appkey: 'sec' } });
  expect(answer.body.status.internalStatus).toBe('321');
});

test('a Latin-1 app key in the query is read as a header would be', async () => {
  // U+00E9 can be a header value: no provider is configured, so the route answers 321
  expect((await get('appkey=caf%C3%A9')).body.status.internalStatus).toBe('321');
  expect((await get('appkey=sec')).body.status.internalStatus).toBe('321');
});
