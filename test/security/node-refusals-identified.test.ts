/**
 * Issue 50, item 8: what the Node adapter refuses itself, before the service could read the request
 * (a dot segment in the path, a malformed `Host`), is answered like every other answer: with an
 * `X-Request-Id` (the client's own when valid), a line in the request log, and an entry in the
 * instance's recent requests (PROTOCOL.md 6.12), through a real server.
 */
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serve } from '../../adapters/node.js';
import type { Service } from '../../src/index.js';
import { call, demoService, login } from '../helpers.js';
import { failure, rawRequest } from './raw-http.js';

let service: Service;
let server: Server;
let origin: string;
const lines: string[] = [];
beforeAll(async () => {
  service = await demoService({ users: { admins: 'admins' }, logger: (line) => lines.push(line) });
  server = await serve(service, { port: 0, hostname: '127.0.0.1' });
  const address = server.address() as { port: number };
  origin = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await service?.close();
});

describe('the Node adapter’s own refusals', () => {
  test('carry an X-Request-Id and reach the request log and /v1/admin/requests', async () => {
    const dotted = await rawRequest(origin, { method: 'GET', path: '/v1/object/../object/CUS00001', headers: { appkey: 'test-app', 'x-request-id': 'mine-dot-1' } });
    expect([dotted.status, dotted.headers['x-request-id'], dotted.body]).toEqual([400, 'mine-dot-1', failure('400', 'the request path must be in normal form: no dot segments, backslashes or unescaped characters')]);
    const host = await rawRequest(origin, { method: 'POST', path: '/v1/object/Customer', host: 'a b', headers: { appkey: 'test-app' }, body: '{}' });
    expect([host.status, host.body]).toEqual([400, failure('400', 'the Host header must be host or host:port')]);
    const hostId = host.headers['x-request-id'];
    expect(hostId).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    // a client's id that is not valid is replaced, as for any answer
    const invalidId = await rawRequest(origin, { method: 'GET', path: '/v1/./objects/Customer', headers: { appkey: 'test-app', 'x-request-id': 'no spaces allowed' } });
    expect([invalidId.status, invalidId.headers['x-request-id']]).toEqual([400, expect.stringMatching(/^[A-Za-z0-9._-]{1,64}$/)]);
    expect(invalidId.headers['x-request-id']).not.toBe(hostId);

    for (const id of ['mine-dot-1', hostId, invalidId.headers['x-request-id']]) expect(lines.some((line) => line.includes(' 400 400 ') && line.endsWith(` ${id}`)), `log line of ${id}`).toBe(true);
    const alice = await login(service, 'alice');
    const listed = await call(service, 'GET', '/v1/admin/requests?perPage=10', { headers: { sessionId: alice } });
    const refused = listed.body.data['~Elements'].filter((entry: { Status: number }) => entry.Status === 400);
    expect(refused).toEqual([
      expect.objectContaining({ Method: 'GET', Route: null, Status: 400, Code: '400', User: null, RequestId: invalidId.headers['x-request-id'] }),
      expect.objectContaining({ Method: 'POST', Route: null, Status: 400, Code: '400', User: null, RequestId: hostId }),
      expect.objectContaining({ Method: 'GET', Route: null, Status: 400, Code: '400', User: null, RequestId: 'mine-dot-1' }),
    ]);
  });
});
