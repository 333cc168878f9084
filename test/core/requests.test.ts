/** Requests as the real clients send them (PROTOCOL.md 1.1): a bare `?`, `qb64` queries, bodies that are ignored, header names in any case. */
import { describe, expect, test } from 'vitest';
import { call, demoService, expectError, login } from '../helpers.js';
import { nodeKeyPair, nodeSecureLogin, secureCall } from '../secure/node-client.js';

const qb64 = (query: string, padded = false) => {
  const text = Buffer.from(query, 'utf8').toString('base64url');
  return padded ? text.padEnd(Math.ceil(text.length / 4) * 4, '=') : text;
};
const LISTING = `perPage=2&query=${encodeURIComponent('{"City":"Berlin"}')}`;

describe('a bare trailing ?', () => {
  test('is no query', async () => {
    const service = await demoService();
    const sessionId = await login(service);
    const bare = await call(service, 'GET', '/v1/object/USR00001?', { headers: { sessionId } });
    expect(bare.status).toBe(200);
    expect(bare.body).toEqual((await call(service, 'GET', '/v1/object/USR00001', { headers: { sessionId } })).body);
  });

  test('the secure transport signs the target with its ?', async () => {
    const service = await demoService();
    const secure = await nodeSecureLogin(service, nodeKeyPair());
    const answer = await secureCall(service, secure, 1, 'GET', '/v1/object/USR00001?');
    expect([answer.status, answer.envelope.data.Name]).toEqual([200, 'alice']);
  });
});

describe('qb64', () => {
  test.each([
    ['unpadded', false],
    ['padded', true],
  ])('%s base64url of the query is used as the query', async (_form, padded) => {
    const service = await demoService();
    const sessionId = await login(service);
    const plain = await call(service, 'GET', `/v1/objects/Customer?${LISTING}`, { headers: { sessionId } });
    const encoded = await call(service, 'GET', `/v1/objects/Customer?qb64=${qb64(LISTING, padded)}`, { headers: { sessionId } });
    expect(encoded.body).toEqual(plain.body);
    expect(encoded.body.data['~Count']).toBe(2);
  });

  test.each([
    ['standard base64, padding percent-encoded', (text: string) => Buffer.from(text).toString('base64').replace(/=/g, '%3D')],
    ['standard base64, padded', (text: string) => Buffer.from(text).toString('base64')],
    ['standard base64, unpadded', (text: string) => Buffer.from(text).toString('base64').replace(/=+$/, '')],
    ['every character percent-encoded', (text: string) => [...Buffer.from(text).toString('base64')].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')],
  ])('%s is used as the query', async (_form, encode) => {
    const service = await demoService();
    const sessionId = await login(service);
    // "x=~~~?>?" encodes to "+" and "/" in standard base64 ("-" and "_" in base64url), padded with "="
    const query = `${LISTING}&x=~~~?>?`;
    const encoded = encode(query);
    expect(encoded).toMatch(/[+/]|%2b|%2f/i);
    const plain = await call(service, 'GET', `/v1/objects/Customer?${LISTING}`, { headers: { sessionId } });
    const answer = await call(service, 'GET', `/v1/objects/Customer?qb64=${encoded}`, { headers: { sessionId } });
    expect(answer.body).toEqual(plain.body);
  });

  test('a query with more than qb64 is an ordinary query', async () => {
    const service = await demoService();
    const sessionId = await login(service);
    const mixed = await call(service, 'GET', `/v1/objects/Customer?qb64=${qb64('perPage=2')}&perPage=3`, { headers: { sessionId } });
    expect(mixed.body.data['~Count']).toBe(3);
  });

  test.each([
    ['a character of neither alphabet', 'cGVy*GFnZT0y'],
    ['a percent-encoded character of neither alphabet', 'cGVy%2AGFnZT0y'],
    ['a bad percent escape', 'cGVy%zzGFnZT0y'],
    ['padding that does not complete a quantum', 'cGVyc2=='],
    ['a length no encoding has', 'cGVyc'],
    ['bytes that are not UTF-8', Buffer.from([0x70, 0xff, 0xfe]).toString('base64url')],
    ['padding in the middle', 'cG=VyUGFnZT0y'],
  ])('%s: 400', async (_case, value) => {
    const service = await demoService();
    const sessionId = await login(service);
    const result = await call(service, 'GET', `/v1/objects/Customer?qb64=${value}`, { headers: { sessionId } });
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toMatch(/qb64/);
  });

  test('the secure transport signs the target as sent, before the decoding; a bad encoding is answered encrypted', async () => {
    const service = await demoService();
    const secure = await nodeSecureLogin(service, nodeKeyPair());
    const answer = await secureCall(service, secure, 1, 'GET', `/v1/objects/Customer?qb64=${qb64(LISTING)}`);
    expect([answer.status, answer.envelope.data['~Count']]).toEqual([200, 2]);
    const bad = await secureCall(service, secure, 2, 'GET', '/v1/objects/Customer?qb64=!');
    expect([bad.status, bad.envelope.status.internalStatus]).toEqual([400, '400']);
  });
});

describe('bodies the clients send where none is read', () => {
  test('a DELETE with a JSON body is answered as the same DELETE without one', async () => {
    const service = await demoService();
    const sessionId = await login(service);
    const withBody = await call(service, 'DELETE', '/v1/object/CUS00001', { headers: { sessionId }, json: { moveToRecycler: true } });
    const without = await call(service, 'DELETE', '/v1/object/CUS00001', { headers: { sessionId } });
    expect([withBody.status, withBody.body]).toEqual([without.status, without.body]);
  });
});

describe('header names in any case', () => {
  test.each([
    ['appkey', 'sessionid'],
    ['AppKey', 'sessionId'],
    ['APPKEY', 'SESSIONID'],
  ])('%s and %s', async (appKeyName, sessionName) => {
    const service = await demoService();
    const sessionId = await login(service);
    const result = await call(service, 'GET', '/v1/object/USR00001', { headers: { [appKeyName]: 'test-app', [sessionName]: sessionId } });
    expect([result.status, result.body.data.Name]).toEqual([200, 'alice']);
  });
});
