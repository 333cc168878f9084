/**
 * The typed client's hybrid login, checks, batches and opt-in re-login (odbrest/client), against the
 * real service through a recording fetch.
 */
import { describe, expect, test } from 'vitest';
import { OdbRestError, type LoginCredentials, type OdbRestClient } from '../../src/client/index.js';
import { MemoryKeyValueStore, StorageUnavailableError, type ServiceOptions } from '../../src/index.js';
import { demoService, testClock, USERS } from '../helpers.js';
import { readAnswer } from '../interop/clients.js';
import { KEY } from '../interop/vectors.js';
import { recordingClient, type Sent } from './recording.js';

const alice: LoginCredentials = { user: 'alice', password: USERS.alice, appNames: ['crm'] };

const service = (options: ServiceOptions = {}) => demoService({ databaseName: 'demo', secure: { serverKey: KEY.privateKey }, ...options });

describe('loginHybrid', () => {
  test('key endpoint, hybrid body, A|B answer read with its own key; then a plain session', async () => {
    const { client, sent } = recordingClient(await service());
    const login = await client.loginHybrid(alice);
    expect([login.user.Name, login.databaseName, client.sessionKind]).toEqual(['alice', 'demo', 'session']);
    expect(sent.map((exchange) => `${exchange.method} ${exchange.path}`)).toEqual(['GET /v2/login/key', 'POST /v2/login']);
    const body = JSON.parse(sent[1]!.body!);
    expect(Object.keys(body).sort()).toEqual(['aesKey', 'data', 'publicKey']);
    expect(body.publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----\r\n/);
    expect(sent[1]!.body).not.toContain('alice');
    expect([sent[1]!.contentType, sent[1]!.text.split('|').length]).toEqual(['text/plain; charset=utf-8', 2]);
    expect(await client.getObject('USR00001')).toMatchObject({ Name: 'alice' });
    expect(sent[2]!.headers.get('sessionid')).toBe(login.sessionId);
  });

  test('a key pair of its own; the answer opens with the matching private key', async () => {
    const { client, sent } = recordingClient(await service());
    const keyPair = await crypto.subtle.generateKey({ name: 'RSA-OAEP', hash: 'SHA-256', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }, true, ['encrypt', 'decrypt']);
    await client.loginHybrid(alice, { keyPair });
    const pkcs8 = Buffer.from(await crypto.subtle.exportKey('pkcs8', keyPair.privateKey)).toString('base64');
    const pem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`;
    expect(readAnswer(pem, sent[1]!.text).envelope.data.user.Name).toBe('alice');
  });

  test('plainAnswer: no publicKey is sent and the answer is JSON', async () => {
    const { client, sent } = recordingClient(await service());
    await client.loginHybrid(alice, { plainAnswer: true });
    expect(Object.keys(JSON.parse(sent[1]!.body!)).sort()).toEqual(['aesKey', 'data']);
    expect(sent[1]!.contentType).toBe('application/json; charset=utf-8');
    expect(await client.checkSession()).toBe(true);
  });

  test('a wrong password is OdbRestError 302', async () => {
    const { client } = recordingClient(await service());
    await expect(client.loginHybrid({ ...alice, password: 'wrong' })).rejects.toMatchObject({ internalStatus: '302', httpStatus: 401 });
    expect(client.sessionKind).toBeUndefined();
  });
});

describe('checkSession and checkService', () => {
  test('checkSession: true while the session lives, false before login and after logout', async () => {
    const { client } = recordingClient(await service());
    expect(await client.checkSession()).toBe(false);
    await client.login(alice);
    expect(await client.checkSession()).toBe(true);
    await client.logout();
    expect(await client.checkSession()).toBe(false);
  });

  test('checkSession through the secure transport', async () => {
    const { client, sent } = recordingClient(await service());
    await client.loginSecure(alice);
    expect(await client.checkSession()).toBe(true);
    expect(sent.at(-1)!.contentType).toBe('application/text');
  });

  test('checkService sends no header at all', async () => {
    const { client, sent } = recordingClient(await service());
    await client.login(alice);
    const info = await client.checkService();
    expect(info).toMatchObject({ applicationName: 'odbrest', webservice: { moduleVersion: { demo: [{ moduleName: 'odbrest' }] } } });
    expect([...sent.at(-1)!.headers]).toEqual([]);
  });

  test('checkService fails with 503 while the key-value store is down', async () => {
    const kv = new MemoryKeyValueStore();
    kv.get = () => Promise.reject(new StorageUnavailableError());
    const { client } = recordingClient(await service({ kv }));
    await expect(client.checkService()).rejects.toMatchObject({ internalStatus: '503', httpStatus: 503 });
  });
});

test('multi: items in order, each with its status and whole envelope', async () => {
  const { client } = recordingClient(await service());
  await client.login(alice);
  const results = await client.multi([
    { method: 'GET', path: '/v1/object/USR00001' },
    { method: 'GET', path: '/v1/object/NOPE0000' },
    { method: 'GET', path: '/_CheckSession' },
  ]);
  expect(results.map((item) => [item.httpStatus, item.result.status.internalStatus])).toEqual([
    [200, '0'],
    [404, '404'],
    [200, '0'],
  ]);
  expect(results[0]!.result.data).toMatchObject({ Name: 'alice' });
});

describe('relogin', () => {
  const expire = async () => {
    const clock = testClock();
    const svc = await service({ now: clock.now, session: { idleTimeoutMs: 60_000 } });
    return { svc, expire: () => clock.advance(60_001) };
  };
  const logins = (sent: Sent[], path: string) => sent.filter((exchange) => exchange.method === 'POST' && exchange.path === path).length;

  test.each([
    ['login', '/v1/login', (client: OdbRestClient) => client.login(alice)],
    ['loginToken', '/v2/login', (client: OdbRestClient) => client.loginToken(alice)],
    ['loginHybrid', '/v2/login', (client: OdbRestClient) => client.loginHybrid(alice)],
    ['loginSecure', '/v2/login/secure', (client: OdbRestClient) => client.loginSecure(alice)],
  ])('after %s: an expired session (201) logs in again once for concurrent requests, which then succeed', async (_kind, path, login) => {
    const { svc, expire: advance } = await expire();
    const { client, sent } = recordingClient(svc, true);
    await login(client);
    advance();
    const objects = await Promise.all(Array.from({ length: 5 }, () => client.getObject('USR00001')));
    expect(objects.map((object) => object.Name)).toEqual(Array(5).fill('alice'));
    expect(logins(sent, path)).toBe(2);
    expect(sent.filter((exchange) => exchange.status === 401).length).toBe(5);
  });

  test('off by default: the 201 reaches the caller', async () => {
    const { svc, expire: advance } = await expire();
    const { client, sent } = recordingClient(svc);
    await client.login(alice);
    advance();
    await expect(client.getObject('USR00001')).rejects.toMatchObject({ internalStatus: '201' });
    expect(logins(sent, '/v1/login')).toBe(1);
  });

  test('after logout there is nothing to log in again with: 204', async () => {
    const { client, sent } = recordingClient(await service(), true);
    await client.login(alice);
    await client.logout();
    const error = await client.getObject('USR00001').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OdbRestError);
    expect((error as OdbRestError).internalStatus).toBe('204');
    expect(logins(sent, '/v1/login')).toBe(1);
  });

  test('a login that fails on the way is reported to every waiting request', async () => {
    const { svc, expire: advance } = await expire();
    const { client } = recordingClient(svc, true);
    await client.login(alice);
    await svc.store.put({ id: 'USR00001', className: 'User', fields: { Name: 'alice' } }); // the password hash is gone
    advance();
    const results = await Promise.allSettled([client.getObject('USR00001'), client.getObject('USR00001')]);
    expect(results.map((result) => result.status === 'rejected' && (result.reason as OdbRestError).internalStatus)).toEqual(['302', '302']);
  });
});
