/**
 * Issue 12, finding 7: a 1 MiB login body of 520,000 nested arrays was refused (`400`) only after
 * `JSON.parse` had worked on it for 130-520 ms, holding the event loop. JSON nested deeper than 64
 * levels is refused before any value is built, with its own message; 64 levels are read as before.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startServer, type RunningServer } from '../adapters/servers.js';
import { ApiError } from '../../src/http/errors.js';
import { parseJsonText } from '../../src/http/json.js';
import { loginBody } from '../helpers.js';
import { failure, rawRequest } from './raw-http.js';

const TOO_DEEP = failure('400', 'request body nests JSON arrays and objects deeper than 64 levels');

let server: RunningServer;
beforeAll(async () => {
  server = await startServer('node');
});
afterAll(() => server?.stop());

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  rawRequest(server.origin, { method: 'POST', path, body, headers: { appkey: 'sec', 'content-type': 'application/json', ...headers } });

/** The login body with an extra member nested so that the whole body is `depth` levels deep. */
const loginNested = (depth: number, open = '[', close = ']') =>
  JSON.stringify(loginBody('alice', 'alice-secret')).replace(/}$/, `,"device":${open.repeat(depth - 1)}${close.repeat(depth - 1)}}`);

test('a 1 MiB login body of 520,000 nested arrays is refused as too deep', async () => {
  const answer = await post('/api/v1/login', '['.repeat(520_000) + ']'.repeat(520_000));
  expect(answer.status).toBe(400);
  expect(answer.body).toEqual(TOO_DEEP);
});

test('nested objects count as arrays do, and malformed nesting is refused too', async () => {
  expect((await post('/api/v1/login', '{"a":'.repeat(100_000))).body).toEqual(TOO_DEEP);
  expect((await post('/api/v1/login', '[{"a":'.repeat(50_000))).body).toEqual(TOO_DEEP);
  expect((await post('/api/v1/login', '[]'.repeat(100_000) + '['.repeat(65))).body).toEqual(TOO_DEEP);
});

test('64 levels are read; 65 are not', async () => {
  const at64 = await post('/api/v1/login', loginNested(64));
  expect(at64.body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
  expect((await post('/api/v1/login', loginNested(65))).body).toEqual(TOO_DEEP);
  expect((await post('/api/v1/login', loginNested(65, '{"a":', '}'))).body).toEqual(TOO_DEEP);
});

test('brackets inside strings do not count', async () => {
  const body = JSON.stringify({ ...loginBody('alice', 'alice-secret'), device: `\\"${'['.repeat(10_000)}`, note: '{'.repeat(10_000) });
  expect((await post('/api/v1/login', body)).body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
});

test('a macro body nested too deep is refused before the macro runs', async () => {
  const login = await post('/api/v1/login', JSON.stringify(loginBody('alice', 'alice-secret')));
  const answer = await post('/api/v1/execute/greet', `{"name":${'['.repeat(100)}${']'.repeat(100)}}`, { sessionid: login.body.data.sessionId });
  expect(answer.body).toEqual(TOO_DEEP);
});

test('parseJsonText: the scan skips escaped quotes and names what it read', () => {
  expect(parseJsonText(JSON.stringify({ a: `\\"[[[\\\\`, b: [[]] }))).toEqual({ a: `\\"[[[\\\\`, b: [[]] });
  expect(parseJsonText(`[${JSON.stringify('\\"]]]]')}]`)).toEqual(['\\"]]]]']);
  expect(() => parseJsonText('{"a":', 'query')).toThrow(new ApiError('400', 'query is not valid JSON'));
  expect(() => parseJsonText('"[' + '['.repeat(70), 'query')).toThrow(new ApiError('400', 'query is not valid JSON'));
  expect(() => parseJsonText('['.repeat(65) + ']'.repeat(65), 'query')).toThrow(new ApiError('400', 'query nests JSON arrays and objects deeper than 64 levels'));
});
