/**
 * The request log: one line per request with method, path, status, internalStatus and time; never a
 * password, token, session id or key, whichever login the request used.
 */
import { describe, expect, test, vi } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { jsonRequestLog, type RequestLogEntry, type Service } from '../../src/index.js';
import { generateRsaKeyPair } from '../../src/secure/keys.js';
import { APP_KEY, call, demoService, login, USERS } from '../helpers.js';

/** A service logging into `lines`, and a fetch to it that records every credential, key and body that travel. */
async function loggedService() {
  const lines: string[] = [];
  const secrets = new Set<string>([USERS.alice]);
  const service = await demoService({ logger: (line) => lines.push(line) });
  const fetchFn = async (input: string, init: RequestInit = {}) => {
    const request = new Request(input, init);
    for (const [name, value] of request.headers) if (!['appkey', 'content-type'].includes(name)) secrets.add(value);
    secrets.add(await request.clone().text());
    const response = await service.fetch(request, { clientAddress: '127.0.0.1' });
    secrets.add(await response.clone().text());
    for (const text of [...secrets]) for (const word of text.split(/[^A-Za-z0-9+/=_.-]+/)) if (word.length >= 16) secrets.add(word);
    return response;
  };
  return { service, lines, secrets, fetchFn };
}

/** The time that opens each text line. */
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /;

const alice = { user: 'alice', password: USERS.alice, appNames: ['crm'] };

describe('request log', () => {
  test('a plain, a token and a secure login and a secure request: one line each, none holding a secret', async () => {
    const { lines, secrets, fetchFn } = await loggedService();
    const clientOf = () => createClient({ baseUrl: 'http://odbrest.test', appKey: APP_KEY, fetch: fetchFn });
    const plain = clientOf();
    await plain.login(alice);
    await plain.getObject('CUS00001');
    const token = clientOf();
    await token.loginToken(alice);
    await token.getObject('CUS00001');
    const secure = clientOf();
    await secure.loginSecure(alice, { keyPair: await generateRsaKeyPair(2048) });
    await secure.getObject('CUS00001');
    await secure.logout();

    expect(lines.map((line) => line.replace(TIME, '').replace(/ [\d.]+ms [A-Za-z0-9._-]+$/, ' <ms>'))).toEqual([
      'POST /v1/login 200 0 <ms>',
      'GET /v1/object/CUS00001 200 0 <ms>',
      'POST /v2/login 200 0 <ms>',
      'GET /v1/object/CUS00001 200 0 <ms>',
      'GET /v2/login/secure/key 200 0 <ms>',
      'POST /v2/login/secure 200 - <ms>', // the answer is RSA-encrypted text, not an envelope
      'GET /v1/object/CUS00001 200 0 <ms>', // encrypted; its internalStatus is read before sealing
      'POST /v1/logout 200 0 <ms>',
    ]);
    const leaked = [...secrets].filter((secret) => secret.length >= 16 && lines.some((line) => line.includes(secret)));
    expect(leaked).toEqual([]);
    expect(secrets.size).toBeGreaterThan(20); // the check saw the session id, the token, the Secure-Token, the keys
  });

  test('query values are hidden, names kept; failures show their internalStatus', async () => {
    const { service, lines } = await loggedService();
    await call(service, 'GET', '/v1/objects/Customer?perPage=5&query=%7B%22Name%22%3A%22x%22%7D&sessionId=SECRETSESSIONID1&bare-secret-item');
    await call(service, 'GET', '/v1/object/CUS00001', { noAppKey: true });
    await call(service, 'POST', '/v1/login', { json: { user: 'alice', pass: 'wrong-password-value', appNames: ['crm'] } });
    expect(lines.map((line) => line.replace(TIME, '').replace(/ [\d.]+ms [A-Za-z0-9._-]+$/, ''))).toEqual([
      'GET /v1/objects/Customer?perPage=***&query=***&sessionId=***&*** 401 204',
      'GET /v1/object/CUS00001 401 100',
      'POST /v1/login 401 302',
    ]);
  });

  test('an object logger gets info(entry, line), as pino takes it', async () => {
    const entries: Array<[RequestLogEntry, string]> = [];
    const service: Service = await demoService({ logger: { info: (entry, line) => entries.push([entry, line]) } });
    await call(service, 'GET', '/v1/object/CUS00001');
    expect(entries).toEqual([
      // the answer's X-Request-Id closes the line (PROTOCOL.md 6.12)
      [
        { time: expect.any(Number), method: 'GET', path: '/v1/object/CUS00001', route: '/v1/object/:id', status: 401, internalStatus: '204', ms: expect.any(Number), requestId: expect.stringMatching(/^[A-Za-z0-9._-]+$/) },
        expect.stringMatching(/^\S+Z GET \/v1\/object\/CUS00001 401 204 [\d.]+ms [A-Za-z0-9._-]+$/),
      ],
    ]);
  });

  test('jsonRequestLog: one JSON line per request in pino\'s field names, its time from the service\'s clock, the session\'s user', async () => {
    const lines: string[] = [];
    const time = Date.UTC(2026, 10, 27, 19, 30);
    const service = await demoService({ logger: jsonRequestLog((line) => lines.push(line)), now: () => time });
    const sessionId = await login(service);
    await call(service, 'GET', '/v1/object/CUS00001?serialization=hidden', { headers: { sessionId, 'x-request-id': 'json-1' } });
    expect(lines.map((line) => JSON.parse(line)).at(-1)).toEqual({
      level: 30,
      time,
      reqId: 'json-1',
      req: { id: 'json-1', method: 'GET', url: '/v1/object/CUS00001?serialization=***', route: '/v1/object/:id' },
      res: { statusCode: 400 },
      internalStatus: '400',
      responseTime: expect.any(Number),
      user: 'alice',
      msg: 'request completed',
    });
    expect(lines.join('\n')).not.toContain(sessionId);
  });

  test('a logger that throws costs nothing but its line', async () => {
    const service = await demoService({ logger: () => {
      throw new Error('disk full');
    } });
    expect((await call(service, 'GET', '/v1/object/CUS00001')).body.status.internalStatus).toBe('204');
  });

  test('without a logger nothing is written', async () => {
    const written = [vi.spyOn(console, 'log'), vi.spyOn(console, 'info'), vi.spyOn(process.stdout, 'write')];
    const service = await demoService();
    expect((await call(service, 'GET', '/v1/object/CUS00001')).status).toBe(401);
    expect(written.map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0]);
    for (const spy of written) spy.mockRestore();
  });
});
