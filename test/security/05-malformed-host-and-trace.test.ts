/**
 * Issue 12, finding 5: a malformed `Host` or the `TRACE` method gave HTTP 500 with an empty body
 * (Node), an HTML page with a stack trace (Express) or plain text (Koa). Every adapter answers them
 * with an envelope: `400` for the `Host`, `405` for the method. Each example runs as a real process.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, type RunningServer, type ServerKind } from '../adapters/servers.js';
import { failure, rawRequest } from './raw-http.js';

const KINDS: ServerKind[] = ['node', 'express', 'koa', 'bun', 'deno'];
const MALFORMED_HOSTS = ['a b', 'x:99999', '[', 'user@evil', '%', 'x:', '1.2.3.999', '[::1', 'a\\b', 'x/y', 'x?y', 'x#y'];
/** Node-based adapters refuse TRACE before the service (a web Request cannot carry it); Bun and Deno pass it on. */
const TRACE_REFUSAL: Partial<Record<ServerKind, string>> = {
  node: 'method TRACE is not allowed',
  express: 'method TRACE is not allowed',
  koa: 'method TRACE is not allowed',
  bun: 'method TRACE not allowed here; use GET, POST, PATCH, DELETE',
  deno: 'method TRACE not allowed here; use GET, POST, PATCH, DELETE',
};

describe.each(KINDS)('%s', (kind) => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(kind);
  });
  afterAll(() => server?.stop());

  test.each(MALFORMED_HOSTS)('Host %j is a 400 envelope', async (host) => {
    for (const method of ['GET', 'POST']) {
      const answer = await rawRequest(server.origin, { method, path: '/api/v1/object/CUS00001', host, headers: { appkey: 'sec' } });
      expect(answer.status, method).toBe(400);
      expect(answer.contentType, method).toMatch(/^application\/json/);
      expect(answer.body, method).toEqual(failure('400', 'the Host header must be host or host:port'));
    }
  });

  test('TRACE is a 405 envelope', async () => {
    const answer = await rawRequest(server.origin, { method: 'TRACE', path: '/api/v1/object/CUS00001', headers: { appkey: 'sec' } });
    expect(answer.status).toBe(405);
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(answer.body).toEqual(failure('405', TRACE_REFUSAL[kind]!));
  });

  test("TRACE with a body is a 405 envelope, or Node's own parser refusing it", async () => {
    const answer = await rawRequest(server.origin, { method: 'TRACE', path: '/api/v1/object/CUS00001', headers: { appkey: 'sec' }, body: 'x' });
    if (answer.body === undefined) expect({ status: answer.status, text: answer.text }).toEqual({ status: 400, text: '' });
    else expect(answer.body).toEqual(failure('405', TRACE_REFUSAL[kind]!));
  });

  test('TRACE with a malformed Host is still an envelope', async () => {
    const answer = await rawRequest(server.origin, { method: 'TRACE', path: '/api/v1/object/CUS00001', host: 'a b', headers: { appkey: 'sec' } });
    expect(answer.body?.status?.internalStatus).toMatch(/^(400|405)$/);
    expect(answer.body?.data).toEqual({});
  });
});
