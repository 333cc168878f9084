/**
 * Issue 12, finding 4: the request path came from the `Host` header. `GET /v1/object/CUS00003` with
 * `Host: x/v1/object/CUS00001?` answered CUS00001, and `POST /v1/logout` with
 * `Host: x/v1/execute/<macro>?` ran the macro past a host app that blocked `/v1/execute/*` by
 * `req.url`. The path the service routes must be the request-target's; such a `Host` is a `400`.
 * Each example runs as a real process (its API under `/api`).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, type RunningServer, type ServerKind } from '../adapters/servers.js';
import { loginBody } from '../helpers.js';
import { failure, rawRequest } from './raw-http.js';

const BAD_HOST = failure('400', 'the Host header must be host or host:port');
const NOT_NORMAL = failure('400', 'the request path must be in normal form: no dot segments, backslashes or unescaped characters');

const KINDS: ServerKind[] = ['node', 'express', 'koa', 'bun', 'deno'];
/** The kinds whose host app sees `req.url` as sent, while a web URL would drop its dot segments. */
const NODE_HTTP: ServerKind[] = ['node', 'express', 'koa'];

describe.each(KINDS)('%s', (kind) => {
  let server: RunningServer;
  let sessionId: string;
  const send = (method: string, path: string, host?: string, json?: unknown) =>
    rawRequest(server.origin, {
      method,
      path,
      host,
      headers: { appkey: 'sec', sessionid: sessionId, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });

  beforeAll(async () => {
    server = await startServer(kind);
    const login = await rawRequest(server.origin, {
      method: 'POST',
      path: '/api/v1/login',
      headers: { appkey: 'sec', 'content-type': 'application/json' },
      body: JSON.stringify(loginBody('alice', 'alice-secret')),
    });
    sessionId = login.body.data.sessionId;
  });
  afterAll(() => server?.stop());

  test('a Host carrying a path does not change the object read', async () => {
    const answer = await send('GET', '/api/v1/object/CUS00003', 'x/api/v1/object/CUS00001?');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(BAD_HOST);
  });

  test('a Host carrying a path does not turn a logout into a macro call', async () => {
    const answer = await send('POST', '/api/v1/logout', 'x/api/v1/execute/greet?', {});
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(BAD_HOST);
    // the refused request ran nothing: the session is still alive
    expect((await send('GET', '/api/v1/object/CUS00003')).body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
  });

  test('with any valid Host the path is the request-target', async () => {
    for (const host of ['evil.example', 'evil.example:8080', '10.0.0.1:1', '[::1]:443']) {
      const answer = await send('GET', '/api/v1/object/CUS00003', host);
      expect(answer.status, host).toBe(200);
      expect(answer.body.data['~ObjectID'], host).toBe('CUS00003');
    }
  });

  test.runIf(NODE_HTTP.includes(kind))('dot segments cannot route another path than req.url names', async () => {
    for (const path of ['/api/v1/logout/../execute/greet', '/api/v1/logout/%2e%2e/execute/greet', '/api/v1/logout/.%2E/execute/greet']) {
      const answer = await send('POST', path, undefined, {});
      expect(answer.status, path).toBe(400);
      expect(answer.body, path).toEqual(NOT_NORMAL);
    }
    const backslash = await send('POST', '/api/v1/logout\\..\\execute\\greet', undefined, {});
    expect(backslash.body).toEqual(NOT_NORMAL);
  });
});
