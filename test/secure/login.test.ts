/**
 * Secure login (PROTOCOL.md 3) against an independent node:crypto client (test/secure/node-client.ts).
 */
import { constants, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, test } from 'vitest';
import { MemoryKeyValueStore, type Service } from '../../src/index.js';
import { call, demoService, loginBody, USERS, type CallResult } from '../helpers.js';
import {
  derKeyForm,
  expectPlainError,
  keySize,
  nodeKeyPair,
  nodeSecureLogin,
  realClientKeyForm,
  rsaBlocksDecrypt,
  rsaBlocksEncrypt,
  secureLoginBody,
  serverKeyPem,
  type NodeKeyPair,
} from './node-client.js';

let service: Service;
let serverKey: string;
let client: NodeKeyPair;

beforeAll(async () => {
  service = await demoService();
  serverKey = await serverKeyPem(service);
  client = nodeKeyPair(2048);
});

const alicePlaintext = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ ...loginBody('alice', USERS.alice), ...extra });

const postSecure = (body: unknown, clientAddress?: string) => call(service, 'POST', '/v2/login/secure', { json: body, clientAddress });

/** Decrypts a successful answer with the client key and checks the whole envelope. */
function openLogin(result: CallResult, keys: NodeKeyPair = client) {
  expect(result.status).toBe(200);
  expect(result.headers.get('content-type')).toMatch(/^text\/plain/);
  expect(result.headers.get('encrypted')).toBeNull();
  const sealed = Buffer.from(result.text, 'base64');
  expect(sealed.toString('base64')).toBe(result.text); // strict standard base64 with padding
  expect(sealed.length % keySize(keys.publicKey)).toBe(0);
  return JSON.parse(rsaBlocksDecrypt(keys.privateKey, keys.publicKey, sealed).toString('utf8'));
}

describe('GET /v2/login/secure/key', () => {
  test('answers the public key as an SPKI PEM with 64-character lines and CR LF', async () => {
    const result = await call(service, 'GET', '/v2/login/secure/key');
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { key: expect.any(String) } });
    const pem: string = result.body.data.key;
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----\r\n([A-Za-z0-9+/]{64}\r\n)*[A-Za-z0-9+/=]{1,64}\r\n-----END PUBLIC KEY-----\r\n$/);
    const key = createPublicKey(pem);
    expect(key.asymmetricKeyType).toBe('rsa');
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  test('is the same key on every call', async () => {
    expect(await serverKeyPem(service)).toBe(serverKey);
  });

  test('issue 25 item 6: answers without an appkey, as do /v2/login/key (a public key is public; PROTOCOL.md 1.2)', async () => {
    for (const path of ['/v2/login/secure/key', '/v2/login/key']) {
      const answer = await call(service, 'GET', path, { noAppKey: true });
      expect([answer.status, answer.body.status.internalStatus, answer.body.data.key]).toEqual([200, '0', serverKey]);
    }
  });
});

describe('POST /v2/login/secure succeeds', () => {
  test('with an SPKI PEM client key: the envelope is RSA-encrypted under the client key', async () => {
    const answer = openLogin(await postSecure(secureLoginBody(serverKey, alicePlaintext(), client.publicKey)));
    expect(answer).toEqual({
      status: { internalStatus: '0', statusMessage: 'ok' },
      data: {
        sessionId: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/),
        user: expect.objectContaining({ '~ClassName': 'User', '~ObjectID': 'USR00001', Name: 'alice', Description: 'Alice Schmidt' }),
        symmetricKey: expect.any(String),
        databaseName: 'odbrest',
        expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        acls: expect.objectContaining({ '~Count': 1 }),
      },
    });
    const key = Buffer.from(answer.data.symmetricKey, 'base64');
    expect(key.length).toBe(32);
    expect(key.toString('base64')).toBe(answer.data.symmetricKey);
  });

  test("with the real client's key form: base64 of a PEM with indented lines and mixed line breaks", async () => {
    const answer = openLogin(await postSecure(secureLoginBody(serverKey, alicePlaintext(), realClientKeyForm(client.publicKey))));
    expect(answer.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
    expect(answer.data.user.Name).toBe('alice');
  });

  test('with bare base64 of the SPKI DER', async () => {
    const answer = openLogin(await postSecure(secureLoginBody(serverKey, alicePlaintext(), derKeyForm(client.publicKey))));
    expect(answer.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
  });

  test('with the member spelled publickey', async () => {
    const { credentials, publicKey } = secureLoginBody(serverKey, alicePlaintext(), client.publicKey);
    const answer = openLogin(await postSecure({ credentials, publickey: publicKey }));
    expect(answer.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
  });

  test('with a 4096-bit client key: the answer is in 512-byte blocks', async () => {
    const big = nodeKeyPair(4096);
    const result = await postSecure(secureLoginBody(serverKey, alicePlaintext(), big.publicKey));
    expect(Buffer.from(result.text, 'base64').length % 512).toBe(0);
    expect(openLogin(result, big).data.user.Name).toBe('alice');
  });

  test('with credentials longer than one block (k - 42 = 214 bytes per chunk)', async () => {
    const plaintext = alicePlaintext({ device: 'x'.repeat(500) });
    const body = secureLoginBody(serverKey, plaintext, client.publicKey);
    expect(Buffer.from(body.credentials, 'base64').length).toBe(3 * 256);
    expect(openLogin(await postSecure(body)).status.internalStatus).toBe('0');
  });

  test('each login gives a new token and a new key', async () => {
    const first = await nodeSecureLogin(service, client);
    const second = await nodeSecureLogin(service, client);
    expect(first.token).not.toBe(second.token);
    expect(first.key.equals(second.key)).toBe(false);
  });
});

describe('POST /v2/login/secure refuses, unencrypted', () => {
  const credentials = () => Buffer.from(secureLoginBody(serverKey, alicePlaintext(), client.publicKey).credentials, 'base64');
  const withCredentials = (bytes: Buffer) => postSecure({ credentials: bytes.toString('base64'), publicKey: client.publicKey });

  test('credentials whose length is not a multiple of k: 310', async () => {
    expectPlainError(await withCredentials(credentials().subarray(0, 255)), '310', 401, 'credentials length must be a positive multiple of 256 bytes (the key size)');
  });

  test('one flipped byte in the credentials: 310', async () => {
    const bytes = credentials();
    bytes[100]! ^= 0x01;
    expectPlainError(await withCredentials(bytes), '310', 401, /could not be decrypted/);
  });

  test('a ciphertext of the wrong size (made for a 3072-bit key): 310', async () => {
    const other = nodeKeyPair(3072);
    expectPlainError(await withCredentials(rsaBlocksEncrypt(other.publicKey, Buffer.from(alicePlaintext()))), '310', 401, /multiple of 256 bytes/);
  });

  test('a PKCS#1 v1.5 ciphertext: 310', async () => {
    const v15 = rsaBlocksEncrypt(serverKey, Buffer.from(alicePlaintext()), { padding: constants.RSA_PKCS1_PADDING });
    expect(v15.length).toBe(256);
    expectPlainError(await withCredentials(v15), '310', 401, /could not be decrypted/);
  });

  test('an OAEP ciphertext with SHA-256 instead of SHA-1: 310', async () => {
    const sha256 = rsaBlocksEncrypt(serverKey, Buffer.from(alicePlaintext()), { padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' });
    expectPlainError(await withCredentials(sha256), '310', 401, /could not be decrypted/);
  });

  test('a ciphertext for another server key: 310', async () => {
    expectPlainError(await withCredentials(rsaBlocksEncrypt(client.publicKey, Buffer.from(alicePlaintext()))), '310', 401, /could not be decrypted/);
  });

  test('empty credentials: 310', async () => {
    expectPlainError(await postSecure({ credentials: '', publicKey: client.publicKey }), '310', 401, /multiple of 256 bytes/);
  });

  test('credentials that are not base64: 310', async () => {
    expectPlainError(await postSecure({ credentials: 'not*base64', publicKey: client.publicKey }), '310', 401, 'credentials must be standard base64 with padding');
  });

  test('more than 32 blocks of credentials: 310 without decrypting them', async () => {
    expectPlainError(await withCredentials(randomBytes(33 * 256)), '310', 401, 'credentials must be at most 32 blocks');
  });

  test('a 1024-bit client key: 310', async () => {
    const small = nodeKeyPair(1024);
    expectPlainError(await postSecure(secureLoginBody(serverKey, alicePlaintext(), small.publicKey)), '310', 401, 'publicKey must have 2048 to 4096 bits, not 1024');
  });

  test('a client key that is not a key at all: 310', async () => {
    expectPlainError(await postSecure(secureLoginBody(serverKey, alicePlaintext(), 'hello, this is not a key')), '310', 401, /^publicKey /);
  });

  test('a bad client key and bad credentials together: 310 about the key', async () => {
    const bytes = credentials();
    bytes[100]! ^= 0x01;
    expectPlainError(await postSecure({ credentials: bytes.toString('base64'), publicKey: 'hello, this is not a key' }), '310', 401, /^publicKey /);
  });

  test('a client PEM whose body is not base64: 310', async () => {
    const broken = client.publicKey.replace(/\n[A-Za-z0-9+/]{10}/, '\n**********');
    expectPlainError(await postSecure(secureLoginBody(serverKey, alicePlaintext(), broken)), '310', 401, /not a well-formed SPKI PEM/);
  });

  test('a truncated client PEM: 310', async () => {
    const lines = client.publicKey.trim().split('\n');
    const truncated = [...lines.slice(0, 3), lines.at(-1)].join('\n');
    expectPlainError(await postSecure(secureLoginBody(serverKey, alicePlaintext(), truncated)), '310', 401, /not an RSA public key/);
  });

  test('a private key instead of the public key: 310', async () => {
    expectPlainError(await postSecure(secureLoginBody(serverKey, alicePlaintext(), client.privateKey)), '310', 401, /not a well-formed SPKI PEM/);
  });

  test('an EC public key: 310', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
    expectPlainError(await postSecure(secureLoginBody(serverKey, alicePlaintext(), ec.publicKey)), '310', 401, /not an RSA public key/);
  });

  test('base64 of random bytes as the client key: 310', async () => {
    expectPlainError(await postSecure(secureLoginBody(serverKey, alicePlaintext(), randomBytes(294).toString('base64'))), '310', 401, /^publicKey /);
  });

  test('a decrypted plaintext that is not JSON: 400', async () => {
    const result = await postSecure(secureLoginBody(serverKey, 'user=alice&pass=secret', client.publicKey));
    expectPlainError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe('decrypted credentials are not a UTF-8 JSON login body');
  });

  test('a decrypted login body without pass: 400 naming it', async () => {
    const result = await postSecure(secureLoginBody(serverKey, JSON.stringify({ user: 'alice', appNames: ['crm'] }), client.publicKey));
    expectPlainError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe('pass is required');
  });

  test('a decrypted login body that is an array: 400', async () => {
    const result = await postSecure(secureLoginBody(serverKey, '["alice"]', client.publicKey));
    expectPlainError(result, '400', 400, 'decrypted credentials must be a JSON object');
  });

  test('no publicKey member: 400 naming it', async () => {
    const result = await postSecure({ credentials: secureLoginBody(serverKey, alicePlaintext(), client.publicKey).credentials });
    expectPlainError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe('publicKey is required');
  });

  test('no credentials member: 400 naming it', async () => {
    const result = await postSecure({ publicKey: client.publicKey });
    expectPlainError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe('credentials is required');
  });

  test('credentials that are not a string: 400', async () => {
    const result = await postSecure({ credentials: 12, publicKey: client.publicKey });
    expectPlainError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe('credentials must be a string');
  });

  test('a body that is not JSON: 400', async () => {
    expectPlainError(await call(service, 'POST', '/v2/login/secure', { body: '{', headers: { 'content-type': 'application/json' } }), '400', 400);
  });

  test('a wrong password: 302', async () => {
    const plaintext = JSON.stringify(loginBody('bob', 'wrong'));
    expectPlainError(await postSecure(secureLoginBody(serverKey, plaintext, client.publicKey)), '302', 401);
  });

  test('an application the user holds no licence for: 306', async () => {
    const plaintext = JSON.stringify(loginBody('bob', USERS.bob, ['erp']));
    expectPlainError(await postSecure(secureLoginBody(serverKey, plaintext, client.publicKey)), '306', 403);
  });

  test('the answer is prepared while the password is checked, but only a login that passes stores a session (and its replay window)', async () => {
    const kv = new MemoryKeyValueStore();
    const stored: string[] = [];
    const set = kv.set.bind(kv);
    kv.set = (key, value, ttlMs) => {
      if (key.startsWith('sess:')) stored.push(key);
      return set(key, value, ttlMs);
    };
    const watched = await demoService({ kv });
    const key = await serverKeyPem(watched);
    const attempt = (password: string, appNames = ['crm']) =>
      call(watched, 'POST', '/v2/login/secure', { json: secureLoginBody(key, JSON.stringify(loginBody('bob', password, appNames)), client.publicKey) });
    expectPlainError(await attempt('wrong'), '302', 401);
    expectPlainError(await attempt(USERS.bob, ['erp']), '306', 403);
    expect(stored).toEqual([]);
    const opened = openLogin(await attempt(USERS.bob));
    expect(opened.status.internalStatus).toBe('0');
    // the session and its replay window, a record of its own
    const session = stored.find((key) => !key.endsWith(':window'))!;
    expect(stored.sort()).toEqual([session, `${session}:window`]);
  });

  test('too many failed logins: 303 with Retry-After, even with the right password', async () => {
    const limited = await demoService();
    const key = await serverKeyPem(limited);
    const attempt = (password: string) =>
      call(limited, 'POST', '/v2/login/secure', {
        json: secureLoginBody(key, JSON.stringify(loginBody('extern', password)), client.publicKey),
      });
    for (let i = 0; i < 5; i++) expectPlainError(await attempt('wrong'), '302', 401);
    const result = await attempt(USERS.extern);
    expectPlainError(result, '303', 429);
    expect(Number(result.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
