/**
 * The bad-input suite: a few hundred generated malformed requests (test/bad-input.cases.ts) against
 * every endpoint. Each answer must be a JSON error envelope with the expected code and its HTTP
 * status, never a 5xx, never an unexpected error reported to the host, never a stack trace or an
 * echoed secret, and it must come within a bound.
 */
import { SignJWT, UnsecuredJWT, decodeJwt } from 'jose';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { STATUS_CODES, type Service } from '../src/index.js';
import { FORGED, JWT_SECRET, SECRET_PASS, SEED, generateCases, type BadCase, type Ctx } from './bad-input.cases.js';
import { APP_KEY, CONTACTS, USERS, call, type CallResult, demoService, login, loginBody, loginToken } from './helpers.js';

const ANSWER_WITHIN_MS = 10_000;
const unexpected: unknown[] = [];
let service: Service;
let ctx: Ctx;

beforeAll(async () => {
  service = await demoService({
    appKeys: [APP_KEY],
    session: { jwtSecret: JWT_SECRET },
    // failed logins are part of this suite; the limit itself has its own cases below
    loginLimit: { perUser: 1e9, perAddress: 1e9 },
    macros: {
      ping: () => ({ pong: true }),
      xApi_BuildSerialization: (_context, { objectJson }) => objectJson,
    },
    onError: (error) => unexpected.push(error),
  });
  const token = await loginToken(service);
  const plain = await login(service);
  ctx = {
    plain,
    token,
    tokenSid: String(decodeJwt(token).sid),
    macroOnly: await login(service, 'alice', []),
    forged: await forgeTokens(token, plain),
  };
});

afterEach(() => {
  const errors = unexpected.splice(0);
  expect(errors.map(String), 'errors reported to onError').toEqual([]);
});

/** Tokens an attacker could make: every one names a live session, none may be accepted. */
async function forgeTokens(token: string, plainId: string): Promise<Record<(typeof FORGED)[number], string>> {
  const { sid, sub } = decodeJwt(token);
  const now = Math.floor(Date.now() / 1000);
  const key = new TextEncoder().encode(JWT_SECRET);
  const sign = (claims: Record<string, unknown>, alg = 'HS256', signingKey = key) => {
    const jwt = new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).setSubject(String(sub));
    return jwt.sign(signingKey);
  };
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const otherPayload = (await sign({ sid, iat: now, exp: now + 7200 })).split('.')[1]!;
  const flipped = signature.slice(0, 5) + (signature[5] === 'A' ? 'B' : 'A') + signature.slice(6);
  return {
    'alg none': new UnsecuredJWT({ sid, sub, iat: now, exp: now + 3600 }).encode(),
    'wrong key': await sign({ sid, iat: now, exp: now + 3600 }, 'HS256', new TextEncoder().encode('another-secret-that-is-32-bytes-long')),
    'HS512 with the right key': await sign({ sid, iat: now, exp: now + 3600 }, 'HS512'),
    'right key, unknown sid': await sign({ sid: 'AAAAAAAAAAAAAAAAAAAAAA', iat: now, exp: now + 3600 }),
    'right key, sid of a plain session': await sign({ sid: plainId, iat: now, exp: now + 3600 }),
    'right key, expired': await sign({ sid, iat: now - 7200, exp: now - 3600 }),
    'right key, no sid claim': await sign({ iat: now, exp: now + 3600 }),
    'right key, numeric sid': await sign({ sid: 12345, iat: now, exp: now + 3600 }),
    'right key, no exp': await sign({ sid, iat: now }),
    'truncated real token': token.slice(0, -10),
    'real token, one signature character changed': `${header}.${payload}.${flipped}`,
    'real header and signature, other payload': `${header}.${otherPayload}.${signature}`,
  };
}

/** Resolves with the answer, or fails when the service takes longer than the bound. */
async function send(badCase: BadCase) {
  const headers: Record<string, string> = { ...badCase.headers?.(ctx) };
  if (badCase.appKey !== null) headers.appkey = badCase.appKey ?? APP_KEY;
  const init: RequestInit & { duplex?: 'half' } = { headers, body: badCase.body?.() };
  if (init.body instanceof ReadableStream) init.duplex = 'half';
  const request = new Request(`http://odbrest.test${badCase.path}`, { ...init, method: badCase.method });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms`)), ANSWER_WITHIN_MS);
  });
  try {
    const response = await Promise.race([service.fetch(request, { clientAddress: '192.0.2.1' }), timeout]);
    return { response, text: await Promise.race([response.text(), timeout]), secrets: secretsOf(headers) };
  } finally {
    clearTimeout(timer);
  }
}

/** Credential values sent with a request, which no answer may repeat. */
function secretsOf(headers: Record<string, string>): string[] {
  return [SECRET_PASS, headers.authorization, headers.sessionid].filter((value): value is string => !!value && value.trim().length >= 12);
}

const STACK_TRACE = /\bat .*:\d+:\d+|(Type|Range|Syntax|Reference)Error|node_modules|\.ts\b/;

/** Asserts the whole answer of a refused request. */
function expectRefused(result: Awaited<ReturnType<typeof send>>, expected: BadCase['expect']) {
  const { response, text, secrets } = result;
  const body = JSON.parse(text);
  const statusMessage: unknown = body?.status?.statusMessage;
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect({ http: response.status, internalStatus: body.status?.internalStatus, data: body.data }).toEqual({
    http: (STATUS_CODES as Record<string, number>)[expected.code],
    internalStatus: expected.code,
    data: {},
  });
  expect(Object.keys(body).sort()).toEqual(['data', 'status']);
  expect(typeof statusMessage === 'string' && statusMessage.length > 0, 'statusMessage is a non-empty string').toBe(true);
  // a message names the problem; it does not repeat unbounded input back
  expect((statusMessage as string).length, 'statusMessage length').toBeLessThanOrEqual(300);
  if (expected.mentions) expect(statusMessage).toContain(expected.mentions);
  if (expected.allow) expect(response.headers.get('allow')).toBe(expected.allow);
  expect(text).not.toMatch(STACK_TRACE);
  for (const secret of secrets) expect(text.includes(secret), 'a credential was echoed').toBe(false);
}

const groups = generateCases();
const all = Object.values(groups).flat();

test(`at least 200 generated cases with distinct names (seed ${SEED})`, () => {
  expect(all.length).toBeGreaterThanOrEqual(200);
  expect(new Set(all.map((c) => c.name)).size).toBe(all.length);
});

describe.each(Object.entries(groups))('%s', (_group, cases) => {
  test.each(cases.map((badCase) => [badCase.name, badCase] as const))('%s', async (_name, badCase) => {
    const result = await send(badCase);
    if (badCase.expect.code === '0') {
      expect(result.response.status).toBe(200);
      expect(JSON.parse(result.text).status.internalStatus).toBe('0');
    } else {
      expectRefused(result, badCase.expect);
    }
    badCase.verify?.();
  });
});

describe('sessions survive refused requests', () => {
  test('the plain session still works after every case above', async () => {
    const result = await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionid: ctx.plain } });
    expect(result.status).toBe(200);
    expect(result.body.data['~ObjectID']).toBe('CUS00001');
  });
});

describe('failed-login limit (303) on each login endpoint', () => {
  const endpoints = [
    ['/v1/login', 'alice', USERS.alice],
    ['/v2/login', 'alice', USERS.alice],
    ['/v1/auth/df', 'carol', CONTACTS.carol],
  ] as const;
  const expectLimited = (result: CallResult) => {
    expect(result.status).toBe(429);
    expect(result.body).toEqual({ status: { internalStatus: '303', statusMessage: expect.stringMatching(/too many failed logins/) }, data: {} });
    expect(Number(result.headers.get('retry-after'))).toBeGreaterThan(0);
  };
  test.each(endpoints)('%s: right password after the per-user limit', async (path, user, password) => {
    const limited = await demoService({ loginLimit: { perUser: 2, perAddress: 100 } });
    for (let i = 0; i < 2; i++) {
      const failed = await call(limited, 'POST', path, { json: loginBody(user, `wrong-${i}`) });
      expect(failed.body.status.internalStatus).toBe('302');
    }
    expectLimited(await call(limited, 'POST', path, { json: loginBody(user, password) }));
  });
  test.each(endpoints)('%s: another user after the per-address limit', async (path, user, password) => {
    const limited = await demoService({ loginLimit: { perUser: 100, perAddress: 3 } });
    for (let i = 0; i < 3; i++) {
      const failed = await call(limited, 'POST', path, { json: loginBody(`nobody-${i}`, 'x'), clientAddress: '198.51.100.7' });
      expect(failed.body.status.internalStatus).toBe('302');
    }
    expectLimited(await call(limited, 'POST', path, { json: loginBody(user, password), clientAddress: '198.51.100.7' }));
  });
});
