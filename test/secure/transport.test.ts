/**
 * The secure transport (PROTOCOL.md 4) against an independent node:crypto client (test/secure/node-client.ts).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { MemoryKeyValueStore, StorageUnavailableError, type KeyValueStore, type Service } from '../../src/index.js';
import { nodeCrypto } from '../../adapters/node-crypto.js';
import { loadConfig } from '../../adapters/node-config.js';
import { NOBLE_AES_MAX_BYTES, portableCrypto } from '../../src/secure/symmetric.js';
import { call, countingCalls, countingCrypto, demoData, demoService, login, testClock } from '../helpers.js';
import {
  expectPlainError,
  nodeCtr,
  nodeKeyPair,
  nodeSecureLogin,
  nodeSign,
  openSecureResponse,
  secureCall,
  secureRequest,
  sendSecure,
  signedRequest,
  type NodeKeyPair,
  type NodeLogin,
} from './node-client.js';

const macros = { echo: (_context: unknown, params: Record<string, unknown>) => params };
let service: Service;
let keys: NodeKeyPair;

beforeAll(async () => {
  service = await demoService({ macros });
  keys = nodeKeyPair();
});

const OK = { internalStatus: '0', statusMessage: 'ok' };

/** An encrypted error envelope of exactly this shape. */
function expectSealedError(answer: { status: number; envelope: any }, code: string, status: number): void {
  expect(answer.status).toBe(status);
  expect(answer.envelope).toEqual({ status: { internalStatus: code, statusMessage: expect.any(String) }, data: {} });
}

describe('messages the server accepts', () => {
  let session: NodeLogin;
  beforeAll(async () => {
    session = await nodeSecureLogin(service, keys);
  });

  test('GET /v1/object/{id}: the same envelope as a plain session gets, encrypted and signed', async () => {
    const plain = await call(service, 'GET', '/v1/object/USR00001', { headers: { sessionId: await login(service) } });
    const result = await sendSecure(service, 'GET', '/v1/object/USR00001', secureRequest(session, 1, 'GET', '/v1/object/USR00001'));
    expect(result.status).toBe(200);
    expect(result.headers.get('encrypted')).toBe('true');
    expect(result.headers.get('secure-counter')).toBe('1');
    expect(result.headers.get('content-type')).toBe('application/text');
    expect(result.text).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(openSecureResponse(session, 1, result.status, result.headers, result.text)).toEqual(plain.body);
  });

  test('POST with an encrypted JSON body reaches the macro decrypted', async () => {
    const params = { text: 'Grüße', list: [1, 2, 3], nested: { ok: true } };
    expect(await secureCall(service, session, 2, 'POST', '/v1/execute/echo', params)).toEqual({ status: 200, envelope: { status: OK, data: params } });
  });

  test.each([
    ['portableCrypto (where the runtime has no node:crypto)', portableCrypto],
    ['nodeCrypto (odbrest/node)', nodeCrypto],
  ])('with %s: every body size, on both sides of where portableCrypto moves from noble to WebCrypto', async (_name, provider) => {
    const { symmetric, prepared } = countingCrypto(provider);
    const own = await demoService({ macros, secure: { symmetricCrypto: symmetric } });
    const session = await nodeSecureLogin(own, keys);
    const { envelope } = await secureCall(own, session, 1, 'GET', '/v1/object/USR00002');
    expect(envelope).toEqual((await call(own, 'GET', '/v1/object/USR00002', { headers: { sessionId: await login(own) } })).body);
    for (const [i, size] of [1, NOBLE_AES_MAX_BYTES - 100, NOBLE_AES_MAX_BYTES + 100, 5 * NOBLE_AES_MAX_BYTES].entries()) {
      const params = { text: 'ü'.repeat(size / 2) };
      expect(await secureCall(own, session, i + 2, 'POST', '/v1/execute/echo', params)).toEqual({ status: 200, envelope: { status: OK, data: params } });
    }
    expectPlainError(await sendSecure(own, 'GET', '/v1/object/USR00002', secureRequest(session, 1, 'GET', '/v1/object/USR00002')), '205', 401, /already used/);
    // the service used the given primitives, and prepared the session's keys once (K for AES; K, then M, for HMAC)
    expect(prepared).toEqual({ aesCtr: 1, hmacSha256: 2 });
  });

  test('an answer a route makes as its own Response (the external-login redirect) is sealed with its headers kept', async () => {
    const google = { '~ClassName': 'OAuthProvider', name: 'Google', type: 'google', additionalData: JSON.stringify({ clientId: 'g-id', clientSecret: 'g-secret' }) };
    const own = await demoService({ data: { objects: [...demoData().objects, google] }, externalLogin: { providers: [{ name: 'Google' }], publicUrl: 'https://odbrest.example' } });
    const session = await nodeSecureLogin(own, keys);
    const result = await sendSecure(own, 'GET', '/v1/auth/google', secureRequest(session, 1, 'GET', '/v1/auth/google'));
    expect(result.status).toBe(302);
    expect(new URL(result.headers.get('location')!).searchParams.get('client_id')).toBe('g-id');
    expect(result.headers.get('cache-control')).toBe('no-store');
    expect(result.headers.get('encrypted')).toBe('true');
    expect(result.headers.get('content-type')).toBe('application/text');
    expect(result.headers.get('secure-counter')).toBe('1');
    expect(result.headers.get('secure-signature')).toBe(nodeSign(session.mac, 'RES 1 302\n', ''));
    expect(result.text).toBe('');
  });

  test('loadConfig gives Node hosts nodeCrypto', () => {
    expect(loadConfig({}, mkdtempSync(join(tmpdir(), 'odbrest-config-'))).options.secure?.symmetricCrypto).toBe(nodeCrypto);
  });

  test('the signed target includes the query string', async () => {
    const target = `/v1/objects/User?perPage=1&query=${encodeURIComponent('{"Name":"alice"}')}`;
    const { status, envelope } = await secureCall(service, session, 3, 'GET', target);
    expect(status).toBe(200);
    expect(envelope.data['~Count']).toBe(1);
    expect(envelope.data['~Elements'][0].Name).toBe('alice');
  });

  test('numbers may arrive out of order within the window', async () => {
    const own = await nodeSecureLogin(service, keys);
    for (const n of [5, 3, 4, 1, 2, 60, 6]) {
      expect((await secureCall(service, own, n, 'GET', '/v1/object/GRP00001')).envelope.status).toEqual(OK);
    }
  });

  test('the body may be sent as text/plain', async () => {
    const message = secureRequest(session, 4, 'POST', '/v1/execute/echo', { a: 1 });
    message.headers['content-type'] = 'text/plain; charset=utf-8';
    const result = await sendSecure(service, 'POST', '/v1/execute/echo', message);
    expect(openSecureResponse(session, 4, result.status, result.headers, result.text)).toEqual({ status: OK, data: { a: 1 } });
  });
});

describe('errors after a message is accepted are encrypted too', () => {
  let session: NodeLogin;
  let n = 0;
  beforeAll(async () => {
    session = await nodeSecureLogin(service, keys);
  });

  test('404 for an unknown object', async () => {
    expectSealedError(await secureCall(service, session, ++n, 'GET', '/v1/object/NOPE0000'), '404', 404);
  });

  test('405 for a wrong method, with its Allow header', async () => {
    const message = secureRequest(session, ++n, 'POST', '/v1/objects/User');
    const result = await sendSecure(service, 'POST', '/v1/objects/User', message);
    expect(result.headers.get('allow')).toBe('GET, PATCH');
    expectSealedError({ status: result.status, envelope: openSecureResponse(session, n, result.status, result.headers, result.text) }, '405', 405);
  });

  test('100 for a missing appkey', async () => {
    const message = secureRequest(session, ++n, 'GET', '/v1/object/USR00001');
    delete message.headers.appkey;
    const result = await call(service, 'GET', '/v1/object/USR00001', { headers: message.headers, noAppKey: true });
    expectSealedError({ status: result.status, envelope: openSecureResponse(session, n, result.status, result.headers, result.text) }, '100', 401);
  });

  test('400 for an encrypted body that is not JSON', async () => {
    const body = nodeCtr(session.key, ++n, 0, Buffer.from('{not json')).toString('base64');
    const result = await sendSecure(service, 'POST', '/v1/execute/echo', signedRequest(session, n, 'POST', '/v1/execute/echo', body));
    expectSealedError({ status: result.status, envelope: openSecureResponse(session, n, result.status, result.headers, result.text) }, '400', 400);
  });

  test('415 for an encrypted body declared as application/json', async () => {
    const message = secureRequest(session, ++n, 'POST', '/v1/execute/echo', { a: 1 });
    message.headers['content-type'] = 'application/json';
    const result = await sendSecure(service, 'POST', '/v1/execute/echo', message);
    expectSealedError({ status: result.status, envelope: openSecureResponse(session, n, result.status, result.headers, result.text) }, '415', 415);
  });

  test('307 for a macro-only session reading objects', async () => {
    const dave = await nodeSecureLogin(service, keys, { user: 'dave', appNames: [] });
    expectSealedError(await secureCall(service, dave, 1, 'GET', '/v1/object/USR00001'), '307', 403);
    expect((await secureCall(service, dave, 2, 'POST', '/v1/execute/echo', { x: 1 })).envelope).toEqual({ status: OK, data: { x: 1 } });
  });
});

describe('messages the server refuses, unencrypted', () => {
  let session: NodeLogin;
  let n = 0;
  beforeAll(async () => {
    session = await nodeSecureLogin(service, keys);
  });
  const get = (message = secureRequest(session, ++n, 'GET', '/v1/object/USR00001')) => sendSecure(service, 'GET', '/v1/object/USR00001', message);

  test('a replayed counter: 205', async () => {
    const message = secureRequest(session, ++n, 'GET', '/v1/object/USR00001');
    expect((await get(message)).status).toBe(200);
    expectPlainError(await get(message), '205', 401, /already used/);
  });

  test('a counter below the window: 205', async () => {
    n += 100;
    expect((await get()).status).toBe(200);
    expectPlainError(await get(secureRequest(session, n - 64, 'GET', '/v1/object/USR00001')), '205', 401, /below the replay window/);
    expect((await get(secureRequest(session, n - 63, 'GET', '/v1/object/USR00001'))).status).toBe(200);
  });

  test('a flipped bit in the body: 205', async () => {
    const message = secureRequest(session, ++n, 'POST', '/v1/execute/echo', { amount: 100 });
    const bytes = Buffer.from(message.body!, 'base64');
    bytes[3]! ^= 0x04;
    expectPlainError(await sendSecure(service, 'POST', '/v1/execute/echo', { ...message, body: bytes.toString('base64') }), '205', 401, /Secure-Signature/);
  });

  test('a flipped bit in the signature: 205', async () => {
    const message = secureRequest(session, ++n, 'GET', '/v1/object/USR00001');
    const signature = Buffer.from(message.headers['secure-signature']!, 'base64');
    signature[0]! ^= 0x80;
    message.headers['secure-signature'] = signature.toString('base64');
    expectPlainError(await get(message), '205', 401, /Secure-Signature/);
  });

  test('the signature only in standard base64 with padding (spaces around it aside): other spellings of its bytes are 205', async () => {
    // the same 32 bytes written otherwise: no padding, base64url, an unused bit of the last letter set
    const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const rewrites = [
      (signature: string) => signature.replace(/=$/, ''),
      (signature: string) => Buffer.from(signature, 'base64').toString('base64url'),
      (signature: string) => `${signature.slice(0, -2)}${BASE64[BASE64.indexOf(signature.at(-2)!) | 1]}=`,
    ];
    for (const rewrite of rewrites) {
      const message = secureRequest(session, ++n, 'GET', '/v1/object/USR00001');
      const signature = message.headers['secure-signature']!;
      message.headers['secure-signature'] = rewrite(signature);
      expect(message.headers['secure-signature']).not.toBe(signature);
      expectPlainError(await get(message), '205', 401, /Secure-Signature/);
    }
    const message = secureRequest(session, ++n, 'GET', '/v1/object/USR00001');
    message.headers['secure-signature'] = ` ${message.headers['secure-signature']} `;
    expect((await get(message)).status).toBe(200);
  });

  test('a request signed for another path: 205', async () => {
    const message = secureRequest(session, ++n, 'GET', '/v1/object/USR00002');
    expectPlainError(await get(message), '205', 401, /Secure-Signature/);
  });

  test('a request signed for another query: 205', async () => {
    const message = secureRequest(session, ++n, 'GET', '/v1/objects/User?perPage=1');
    expectPlainError(await sendSecure(service, 'GET', '/v1/objects/User?perPage=1000', message), '205', 401, /Secure-Signature/);
  });

  test('a request signed for another method: 205', async () => {
    const message = secureRequest(session, ++n, 'POST', '/v1/object/USR00001');
    expectPlainError(await get(message), '205', 401, /Secure-Signature/);
  });

  test('a request signed for another counter: 205', async () => {
    const message = secureRequest(session, ++n, 'GET', '/v1/object/USR00001');
    message.headers['secure-counter'] = String(++n);
    expectPlainError(await get(message), '205', 401, /Secure-Signature/);
  });

  test('a request without signature: 205', async () => {
    const message = secureRequest(session, ++n, 'GET', '/v1/object/USR00001');
    delete message.headers['secure-signature'];
    expectPlainError(await get(message), '205', 401, /Secure-Signature/);
  });

  test('a request without counter: 205', async () => {
    const message = secureRequest(session, ++n, 'GET', '/v1/object/USR00001');
    delete message.headers['secure-counter'];
    expectPlainError(await get(message), '205', 401, /Secure-Counter/);
  });

  test.each(['0', '-3', '1e3', 'abc', '99999999999999999999'])('a counter of %j: 205', async (counter) => {
    const message = secureRequest(session, ++n, 'GET', '/v1/object/USR00001');
    message.headers['secure-counter'] = counter;
    expectPlainError(await get(message), '205', 401, /Secure-Counter/);
  });

  test('a signed body that is not base64: 205', async () => {
    const message = signedRequest(session, ++n, 'POST', '/v1/execute/echo', '%%% not base64 %%%');
    expectPlainError(await sendSecure(service, 'POST', '/v1/execute/echo', message), '205', 401, /decrypt/);
  });

  test('a signed body that decrypts to bytes that are not UTF-8: 205', async () => {
    const body = nodeCtr(session.key, ++n, 0, Buffer.from([0xff, 0xfe, 0xfd])).toString('base64');
    expectPlainError(await sendSecure(service, 'POST', '/v1/execute/echo', signedRequest(session, n, 'POST', '/v1/execute/echo', body)), '205', 401, /decrypt/);
  });

  test('a body over the size limit: 413', async () => {
    const small = await demoService({ maxBodyBytes: 1000 });
    const own = await nodeSecureLogin(small, keys);
    const message = secureRequest(own, 1, 'POST', '/v1/execute/echo', { big: 'x'.repeat(2000) });
    expectPlainError(await call(small, 'POST', '/v1/execute/echo', { headers: message.headers, body: message.body }), '413', 413);
  });

  test('an unknown token: 201', async () => {
    const message = secureRequest({ ...session, token: session.token.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }, ++n, 'GET', '/v1/object/USR00001');
    expectPlainError(await get(message), '201', 401);
  });

  test('a plain session id as Secure-Token: 201', async () => {
    const message = secureRequest({ ...session, token: await login(service) }, ++n, 'GET', '/v1/object/USR00001');
    expectPlainError(await get(message), '201', 401);
  });

  test('an empty Secure-Token: 204', async () => {
    const message = secureRequest({ ...session, token: '' }, ++n, 'GET', '/v1/object/USR00001');
    expectPlainError(await get(message), '204', 401);
  });

  test('the Secure-Token sent as sessionId: 205', async () => {
    expectPlainError(await call(service, 'GET', '/v1/object/USR00001', { headers: { sessionId: session.token } }), '205', 401);
  });

  test('the Secure-Token sent as a bearer token: 201', async () => {
    expectPlainError(await call(service, 'GET', '/v1/object/USR00001', { headers: { authorization: `Bearer ${session.token}` } }), '201', 401);
  });
});

describe('sessions', () => {
  test('two sessions of one user do not accept each other’s messages', async () => {
    const first = await nodeSecureLogin(service, keys);
    const second = await nodeSecureLogin(service, keys);
    const crossed = { ...first, token: second.token };
    expectPlainError(await sendSecure(service, 'GET', '/v1/object/USR00001', secureRequest(crossed, 1, 'GET', '/v1/object/USR00001')), '205', 401);
    // each still works with its own messages, and counters are per session
    expect((await secureCall(service, first, 1, 'GET', '/v1/object/USR00001')).status).toBe(200);
    expect((await secureCall(service, second, 1, 'GET', '/v1/object/USR00001')).status).toBe(200);
  });

  test('/v1/logout through the transport; afterwards the token gets 201', async () => {
    const session = await nodeSecureLogin(service, keys);
    expect(await secureCall(service, session, 1, 'POST', '/v1/logout')).toEqual({ status: 200, envelope: { status: { internalStatus: '0', statusMessage: 'logged out' }, data: {} } });
    const after = await sendSecure(service, 'GET', '/v1/object/USR00001', secureRequest(session, 2, 'GET', '/v1/object/USR00001'));
    expectPlainError(after, '201', 401);
  });

  test('each accepted request renews the idle timeout', async () => {
    const clock = testClock();
    const timed = await demoService({ now: clock.now, session: { idleTimeoutMs: 30 * 60_000 } });
    const session = await nodeSecureLogin(timed, keys);
    for (let n = 1; n <= 3; n++) {
      clock.advance(20 * 60_000);
      expect((await secureCall(timed, session, n, 'GET', '/v1/object/USR00001')).status).toBe(200);
    }
    clock.advance(31 * 60_000);
    expectPlainError(await sendSecure(timed, 'GET', '/v1/object/USR00001', secureRequest(session, 4, 'GET', '/v1/object/USR00001')), '201', 401);
  });

  test('100 concurrent requests on one session all succeed; replaying any of them fails', async () => {
    const session = await nodeSecureLogin(service, keys);
    const messages = Array.from({ length: 100 }, (_, i) => secureRequest(session, i + 1, 'POST', '/v1/execute/echo', { i }));
    const results = await Promise.all(messages.map((message) => sendSecure(service, 'POST', '/v1/execute/echo', message)));
    results.forEach((result, i) => {
      expect(openSecureResponse(session, i + 1, result.status, result.headers, result.text)).toEqual({ status: OK, data: { i } });
    });
    const replays = await Promise.all(messages.map((message) => sendSecure(service, 'POST', '/v1/execute/echo', message)));
    for (const replay of replays) expectPlainError(replay, '205', 401);
  });
});

describe('two instances sharing one key-value store and server key', () => {
  let a: Service;
  let b: Service;
  beforeAll(async () => {
    const kv = new MemoryKeyValueStore();
    const serverKey = nodeKeyPair().privateKey;
    [a, b] = await Promise.all([demoService({ kv, secure: { serverKey } }), demoService({ kv, secure: { serverKey } })]);
  });

  test('requests alternating between them are each accepted once; a logout on one is seen by the other', async () => {
    const session = await nodeSecureLogin(a, keys);
    const get = (service: Service, n: number) => sendSecure(service, 'GET', '/v1/object/USR00001', secureRequest(session, n, 'GET', '/v1/object/USR00001'));
    for (let n = 1; n <= 6; n++) {
      const result = await get(n % 2 === 1 ? a : b, n);
      expect(openSecureResponse(session, n, result.status, result.headers, result.text).status).toEqual(OK);
    }
    // each number was recorded where the other instance sees it, whichever instance last wrote the session
    expectPlainError(await get(a, 2), '205', 401, /already used/);
    expectPlainError(await get(b, 5), '205', 401, /already used/);
    expectPlainError(await get(b, 3), '205', 401, /already used/);
    expect(await secureCall(b, session, 7, 'POST', '/v1/logout')).toEqual({ status: 200, envelope: { status: { internalStatus: '0', statusMessage: 'logged out' }, data: {} } });
    expectPlainError(await get(a, 8), '201', 401);
  });

});

describe('one number sent to two instances at once', () => {
  test('is accepted by exactly one of them, also when both read the window before either writes it', async () => {
    // Writes land 10 ms after they are made, so both instances start from the same window and only
    // the store's compare-and-set can tell the second write that the first one took the number.
    const shared = new MemoryKeyValueStore();
    const slowWrites = new Proxy(shared, {
      get(target, name: string) {
        const member = Reflect.get(target, name);
        if (typeof member !== 'function') return member;
        if (name !== 'compareAndSet') return member.bind(target);
        return async (...args: Parameters<KeyValueStore['compareAndSet']>) => {
          await new Promise((resolve) => setTimeout(resolve, 10));
          return target.compareAndSet(...args);
        };
      },
    });
    const serverKey = nodeKeyPair().privateKey;
    const [a, b] = await Promise.all([demoService({ kv: slowWrites, secure: { serverKey } }), demoService({ kv: slowWrites, secure: { serverKey } })]);
    const session = await nodeSecureLogin(a, keys);
    const get = (service: Service, n: number) => sendSecure(service, 'GET', '/v1/object/USR00001', secureRequest(session, n, 'GET', '/v1/object/USR00001'));
    for (const n of [1, 2, 3]) {
      const pair = await Promise.all([get(a, n), get(b, n)]);
      const accepted = pair.filter((result) => result.status === 200);
      expect(accepted).toHaveLength(1);
      expect(openSecureResponse(session, n, accepted[0]!.status, accepted[0]!.headers, accepted[0]!.text).status).toEqual(OK);
      expectPlainError(pair.find((result) => result.status !== 200)!, '205', 401, /already used/);
    }
  });
});

describe('replay-window updates', () => {
  test('a store failure refuses only the requests of its update; the next ones on the session are accepted', async () => {
    const kv = new MemoryKeyValueStore();
    let failures = 0;
    const failing = new Proxy(kv, {
      get(target, name: string) {
        const member = Reflect.get(target, name);
        if (name !== 'compareAndSet' || failures === 0) return typeof member === 'function' ? member.bind(target) : member;
        return async () => {
          failures--;
          throw new StorageUnavailableError('compare-and-set failed');
        };
      },
    });
    const service = await demoService({ kv: failing });
    const session = await nodeSecureLogin(service, keys);
    const get = (n: number) => sendSecure(service, 'GET', '/v1/object/USR00001', secureRequest(session, n, 'GET', '/v1/object/USR00001'));
    failures = 1;
    // the first update carries number 1; numbers 2 to 5 arrive meanwhile and go into the next one
    const results = await Promise.all([1, 2, 3, 4, 5].map(get));
    expectPlainError(results[0]!, '503', 503, /storage unavailable/);
    results.slice(1).forEach((result, i) => expect(openSecureResponse(session, i + 2, result.status, result.headers, result.text).status).toEqual(OK));
    // the failed number was never recorded, the others were
    const retried = await get(1);
    expect(openSecureResponse(session, 1, retried.status, retried.headers, retried.text).status).toEqual(OK);
    expectPlainError(await get(3), '205', 401, /already used/);
  });
});

describe('store operations per accepted request', () => {
  // the session is read through getAndExpireNow where the store has one (the memory store's): one operation, as getAndExpire
  test('the session renewed and one compare-and-set of the window while nothing else changed it; a read again after another instance did', async () => {
    const shared = new MemoryKeyValueStore();
    const serverKey = nodeKeyPair().privateKey;
    const [a, b] = [countingCalls(shared), countingCalls(shared)];
    const [first, second] = await Promise.all([demoService({ kv: a.view, secure: { serverKey } }), demoService({ kv: b.view, secure: { serverKey } })]);
    const session = await nodeSecureLogin(first, keys);
    const get = async (service: Service, n: number) => {
      const result = await sendSecure(service, 'GET', '/v1/object/USR00001', secureRequest(session, n, 'GET', '/v1/object/USR00001'));
      expect(openSecureResponse(session, n, result.status, result.headers, result.text).status).toEqual(OK);
    };
    await get(first, 1);
    const counted = async (view: { calls: Record<string, number> }, run: () => Promise<void>) => {
      for (const name of Object.keys(view.calls)) delete view.calls[name];
      await run();
      return { ...view.calls };
    };
    expect(await counted(a, async () => {
      for (let n = 2; n <= 4; n++) await get(first, n);
    })).toEqual({ getAndExpireNow: 3, compareAndSet: 3 });
    await get(second, 5); // the window as `first` last wrote it is no longer what the store holds
    expect(await counted(a, () => get(first, 6))).toEqual({ getAndExpireNow: 1, compareAndSet: 2, get: 1 });
    expect(await counted(a, () => get(first, 7))).toEqual({ getAndExpireNow: 1, compareAndSet: 1 });
  });
});

describe('the replay window, a record of its own beside the session', () => {
  test('messages never rewrite the session; a window the store lost accepts nothing (201), and a logout removes it', async () => {
    const kv = new MemoryKeyValueStore();
    const written: string[] = [];
    const watched = new Proxy(kv, {
      get(target, name: string) {
        const member = Reflect.get(target, name);
        if (typeof member !== 'function') return member;
        if (name !== 'set' && name !== 'compareAndSet') return member.bind(target);
        return (key: string, ...rest: unknown[]) => {
          written.push(key);
          return (member as (...args: unknown[]) => unknown).call(target, key, ...rest);
        };
      },
    });
    const service = await demoService({ kv: watched });
    const session = await nodeSecureLogin(service, keys);
    const get = (n: number) => sendSecure(service, 'GET', '/v1/object/USR00001', secureRequest(session, n, 'GET', '/v1/object/USR00001'));
    // the login stored the session and its window (the token seals the session id, so the key is found here)
    const windowKey = written.find((key) => key.endsWith(':window'))!;
    expect(windowKey).toMatch(/^sess:\{.+\}:window$/);
    expect(await kv.get(windowKey)).toBeDefined();
    written.length = 0;
    for (const n of [1, 3, 2]) expect((await get(n)).status).toBe(200);
    expect(written).toEqual([windowKey, windowKey, windowKey]);
    expectPlainError(await get(2), '205', 401, /already used/);

    const stored = await kv.get(windowKey);
    await kv.delete(windowKey);
    expectPlainError(await get(4), '201', 401);
    await kv.set(windowKey, stored!, 60_000);
    expect((await get(4)).status).toBe(200);

    expect((await secureCall(service, session, 5, 'POST', '/v1/logout')).status).toBe(200);
    expect(await kv.get(windowKey)).toBeUndefined();
  });
});
