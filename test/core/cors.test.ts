/** Cross-origin requests (PROTOCOL.md 1.5), as a browser sends them; test/browser/cors.test.ts drives a real one. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../adapters/node-config.js';
import { createService, type Service } from '../../src/index.js';
import { call, demoService, expectError, login } from '../helpers.js';
import { nodeKeyPair, nodeSecureLogin, secureRequest } from '../secure/node-client.js';

const APP = 'https://app.example.com';
const OTHER = 'https://evil.example.com';

const corsHeaders = (headers: Headers) => Object.fromEntries([...headers].filter(([name]) => name.startsWith('access-control-')));

const preflight = (service: Service, path: string, origin: string, headers = 'appkey, sessionid, content-type') =>
  service.fetch(new Request(`http://odbrest.test${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers } }));

const EXPOSED = { 'access-control-allow-origin': APP, 'access-control-expose-headers': 'Encrypted, Secure-Counter, Secure-Signature, Retry-After, Login-Signature' };

describe('with listed origins', () => {
  test('a preflight to any route is answered by the service: 204 without appkey, the listed methods and headers', async () => {
    const service = await demoService({ cors: { origins: [APP, 'http://localhost:5173'] } });
    for (const path of ['/v1/login', '/v2/login', '/v1/object/USR00001', '/v1/multi', '/_CheckSession']) {
      const response = await preflight(service, path, APP);
      expect(response.status).toBe(204);
      expect(await response.text()).toBe('');
      expect(corsHeaders(response.headers)).toEqual({
        'access-control-allow-origin': APP,
        'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
        'access-control-allow-headers': 'appkey, sessionId, Authorization, Content-Type, Secure-Token, Secure-Counter, Secure-Signature',
        'access-control-max-age': '600',
      });
      expect(response.headers.get('vary')).toBe('Origin');
    }
  });

  test('the preflight cache time is configurable', async () => {
    const service = await demoService({ cors: { origins: [APP], maxAgeSeconds: 60 } });
    expect((await preflight(service, '/v1/login', APP)).headers.get('access-control-max-age')).toBe('60');
  });

  test('under base path and alias', async () => {
    const service = await demoService({ mount: { basePath: '/api', alias: 'demo' }, cors: { origins: [APP] } });
    expect((await preflight(service, '/api/demo/v1/login', APP)).status).toBe(204);
    // outside the service the request is not a preflight it answers
    const outside = await preflight(service, '/elsewhere', APP);
    expect(outside.status).not.toBe(204);
  });

  test('every answer to the origin carries the allowed origin, the exposed headers and Vary: Origin; never Allow-Credentials', async () => {
    const service = await demoService({ cors: { origins: [APP] } });
    const sessionId = await login(service);
    const answers = [
      await call(service, 'GET', '/v1/object/USR00001', { headers: { origin: APP, sessionId } }),
      await call(service, 'GET', '/v1/object/USR00001', { headers: { origin: APP } }),
      await call(service, 'GET', '/v1/object/USR00001', { headers: { origin: APP }, noAppKey: true }),
      await call(service, 'GET', '/_CheckService', { headers: { origin: APP }, noAppKey: true }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 401, 200]);
    for (const answer of answers) {
      expect(corsHeaders(answer.headers)).toEqual(EXPOSED);
      expect(answer.headers.get('vary')).toBe('Origin');
    }
  });

  test('encrypted answers of the secure transport expose their headers', async () => {
    const service = await demoService({ cors: { origins: [APP] } });
    const secure = await nodeSecureLogin(service, nodeKeyPair());
    const message = secureRequest(secure, 1, 'GET', '/v1/object/USR00001');
    const answer = await call(service, 'GET', '/v1/object/USR00001', { headers: { ...message.headers, origin: APP } });
    expect([answer.status, answer.headers.get('encrypted')]).toEqual([200, 'true']);
    expect(corsHeaders(answer.headers)).toEqual(EXPOSED);
  });

  test('an unlisted origin gets no CORS header, for its preflight and its requests', async () => {
    const service = await demoService({ cors: { origins: [APP] } });
    const refused = await preflight(service, '/v1/login', OTHER);
    expect(corsHeaders(refused.headers)).toEqual({});
    expectError({ status: refused.status, headers: refused.headers, text: '', body: await refused.json() }, '100', 401);
    for (const origin of [OTHER, `${APP}.evil.com`, 'null', APP.toUpperCase()]) {
      const answer = await call(service, 'GET', '/v1/object/USR00001', { headers: { origin, sessionId: await login(service) } });
      expect(answer.status).toBe(200);
      expect(corsHeaders(answer.headers)).toEqual({});
    }
  });

  test('an OPTIONS request that is not a preflight is routed as any other', async () => {
    const service = await demoService({ cors: { origins: [APP] } });
    const answer = await call(service, 'OPTIONS', '/v1/login', { headers: { origin: APP } });
    expectError(answer, '405', 405);
    expect(corsHeaders(answer.headers)).toEqual(EXPOSED);
  });
});

test('not configured: no CORS header and no preflight answer', async () => {
  const service = await demoService();
  const refused = await preflight(service, '/v1/login', APP);
  expect(refused.status).toBe(401);
  expect(corsHeaders(refused.headers)).toEqual({});
  const answer = await call(service, 'GET', '/v1/object/USR00001', { headers: { origin: APP, sessionId: await login(service) } });
  expect(corsHeaders(answer.headers)).toEqual({});
  expect(answer.headers.get('vary')).toBeNull();
});

test.each(['*', 'app.example.com', `${APP}/`, `${APP}/path`, 'null', ''])('%j is not an origin: refused at start', (origin) => {
  expect(() => createService({ cors: { origins: [origin] } })).toThrow(/cors\.origins/);
});

describe('in the standalone configuration', () => {
  test('ODBREST_CORS_ORIGINS (comma-separated)', () => {
    const config = loadConfig({ ODBREST_CORS_ORIGINS: `${APP}, http://localhost:5173` }, mkdtempSync(join(tmpdir(), 'odbrest-cors-')));
    expect(config.options.cors).toEqual({ origins: [APP, 'http://localhost:5173'] });
  });

  test('cors and serviceCheck in api-config.yml', () => {
    const dir = mkdtempSync(join(tmpdir(), 'odbrest-cors-'));
    writeFileSync(join(dir, 'api-config.yml'), `cors:\n  origins: [${APP}]\n  maxAgeSeconds: 60\nserviceCheck:\n  applicationName: crm\n  applicationVersion: 2.0.0\n`);
    const config = loadConfig({}, dir);
    expect([config.options.cors, config.options.serviceCheck]).toEqual([{ origins: [APP], maxAgeSeconds: 60 }, { applicationName: 'crm', applicationVersion: '2.0.0' }]);
  });

  test('cors without origins is refused with a message naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'odbrest-cors-'));
    writeFileSync(join(dir, 'api-config.yml'), 'cors:\n  maxAgeSeconds: 60\n');
    expect(() => loadConfig({}, dir)).toThrow(/cors\.origins/);
  });
});
