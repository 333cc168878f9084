/**
 * The library's client (odbrest/client) against the service over real HTTP (adapters/node.ts).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nodeCrypto, serve } from '../../adapters/node.js';
import { createClient, OdbRestError, OdbRestProtocolError, type FetchFunction, type LoginCredentials } from '../../src/client/index.js';
import { clientPassValue, type Service } from '../../src/index.js';
import { generateRsaKeyPair } from '../../src/secure/keys.js';
import { APP_KEY, call, countingCrypto, demoService, expectError, login, USERS } from '../helpers.js';

const macros = { echo: (_context: unknown, params: Record<string, unknown>) => params };
const alice: LoginCredentials = { user: 'alice', password: USERS.alice, appNames: ['crm'] };

let service: Service;
let server: Server;
let baseUrl: string;
let keyPair: CryptoKeyPair;

async function start(svc: Service): Promise<{ server: Server; url: string }> {
  const listening = await serve(svc, { port: 0, hostname: '127.0.0.1' });
  return { server: listening, url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}` };
}

beforeAll(async () => {
  service = await demoService({ macros });
  ({ server, url: baseUrl } = await start(service));
  keyPair = await generateRsaKeyPair(2048);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** What a plain session reads for `path`, to compare the client's results with. */
async function plainData(path: string): Promise<unknown> {
  const sessionId = await login(service);
  return (await call(service, 'GET', path, { headers: { sessionId } })).body.data;
}

async function expectRejection(promise: Promise<unknown>, internalStatus: string, httpStatus: number): Promise<OdbRestError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OdbRestError);
  expect(error).toMatchObject({ internalStatus, httpStatus, message: expect.any(String) });
  return error as OdbRestError;
}

const variants = [
  ['login', (client: ReturnType<typeof createClient>) => client.login(alice)],
  ['loginToken', (client: ReturnType<typeof createClient>) => client.loginToken(alice)],
  ['loginSecure', (client: ReturnType<typeof createClient>) => client.loginSecure(alice, { keyPair })],
] as const;

describe.each(variants)('after %s', (kind, doLogin) => {
  const sessionKind = { login: 'session', loginToken: 'token', loginSecure: 'secure' }[kind];
  let client: ReturnType<typeof createClient>;

  beforeAll(async () => {
    client = createClient({ baseUrl, appKey: APP_KEY });
    const answer = await doLogin(client);
    expect(answer.user).toMatchObject({ '~ClassName': 'User', '~ObjectID': 'USR00001', Name: 'alice' });
    expect(answer.databaseName).toBe('odbrest');
    expect(client.sessionKind).toBe(sessionKind);
  });

  test('getObject returns the serialized object', async () => {
    expect(await client.getObject('EMP00001')).toEqual(await plainData('/v1/object/EMP00001'));
  });

  test('listObjects passes paging, query and order', async () => {
    const set = await client.listObjects('User', { page: 0, perPage: 2, reverseOrder: true, query: { Description: 'Alice Schmidt' } });
    expect(set).toEqual(await plainData(`/v1/objects/User?perPage=2&reverseOrder=true&query=${encodeURIComponent('{"Description":"Alice Schmidt"}')}`));
    expect(set['~Elements'].map((user) => user.Name)).toEqual(['alice']);
  });

  test('execute sends parameters and returns data', async () => {
    const params = { text: 'Grüße & ünïcödé', n: 3, list: [true, null] };
    expect(await client.execute('echo', params)).toEqual(params);
    expect(await client.execute('echo')).toEqual({});
  });

  test('failures are thrown with their internalStatus and HTTP status', async () => {
    await expectRejection(client.getObject('NOPE0000'), '404', 404);
    await expectRejection(client.execute('missing'), '404', 404);
  });

  test('logout ends the session; the next call has no credential', async () => {
    await client.logout();
    expect(client.sessionKind).toBeUndefined();
    await expectRejection(client.getObject('EMP00001'), '204', 401);
  });
});

describe('logins', () => {
  test('login with the raw pass value', async () => {
    const client = createClient({ baseUrl, appKey: APP_KEY });
    const answer = await client.login({ user: 'bob', pass: clientPassValue(USERS.bob), appNames: 'crm' });
    expect(answer.sessionId).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    expect((await client.getObject('USR00002'))['Name']).toBe('bob');
  });

  test('loginSecure generates its own key pair when none is given', async () => {
    const client = createClient({ baseUrl, appKey: APP_KEY });
    await client.loginSecure({ user: 'bob', password: USERS.bob, appNames: ['crm'] });
    expect((await client.getObject('USR00002'))['Name']).toBe('bob');
  });

  test.each(['login', 'loginToken', 'loginSecure'] as const)('%s with a wrong password: 302', async (kind) => {
    const client = createClient({ baseUrl, appKey: APP_KEY });
    const wrong = { user: 'bob', password: 'wrong', appNames: ['crm'] };
    await expectRejection(kind === 'loginSecure' ? client.loginSecure(wrong, { keyPair }) : client[kind](wrong), '302', 401);
    expect(client.sessionKind).toBeUndefined();
  });

  test('loginSecure for an application without licence: 306', async () => {
    const client = createClient({ baseUrl, appKey: APP_KEY });
    await expectRejection(client.loginSecure({ user: 'bob', password: USERS.bob, appNames: ['erp'] }, { keyPair }), '306', 403);
  });

  test('a macro-only secure session gets 307 for objects, encrypted', async () => {
    const client = createClient({ baseUrl, appKey: APP_KEY });
    await client.loginSecure({ user: 'dave', password: USERS.dave, appNames: [] }, { keyPair });
    await expectRejection(client.getObject('USR00001'), '307', 403);
    expect(await client.execute('echo', { ok: 1 })).toEqual({ ok: 1 });
  });

  test('login needs a password or a pass', async () => {
    const client = createClient({ baseUrl, appKey: APP_KEY });
    await expect(client.login({ user: 'bob', appNames: ['crm'] })).rejects.toThrow(TypeError);
  });

  test('loginSecure with an app key the service does not accept: 100', async () => {
    const strict = await demoService({ appKeys: [APP_KEY] });
    const { server: strictServer, url } = await start(strict);
    try {
      await expectRejection(createClient({ baseUrl: url, appKey: 'other' }).loginSecure(alice, { keyPair }), '100', 401);
    } finally {
      strictServer.close();
    }
  });
});

describe('secure transport in the client', () => {
  test('under a base path and a database alias', async () => {
    const mounted = await demoService({ mount: { basePath: '/api', alias: 'crm-db' } });
    const { server: mountedServer, url } = await start(mounted);
    try {
      const client = createClient({ baseUrl: `${url}/api/`, appKey: APP_KEY, alias: 'crm-db' });
      await client.loginSecure(alice, { keyPair });
      expect((await client.getObject('USR00001'))['Name']).toBe('alice');
      expect((await client.listObjects('User', { query: { Name: 'alice' } }))['~Count']).toBe(1);
    } finally {
      mountedServer.close();
    }
  });

  test('with the symmetricCrypto option (nodeCrypto), the client uses it', async () => {
    const { symmetric, prepared } = countingCrypto(nodeCrypto);
    const client = createClient({ baseUrl, appKey: APP_KEY, symmetricCrypto: symmetric });
    await client.loginSecure(alice, { keyPair });
    expect(await client.getObject('USR00001')).toEqual(await plainData('/v1/object/USR00001'));
    expect(prepared).toEqual({ aesCtr: 1, hmacSha256: 2 }); // the session's keys, prepared once
  });

  test('100 concurrent requests all succeed; replaying any of them fails with 205', async () => {
    const sent: Array<{ url: string; init: RequestInit }> = [];
    const recording: FetchFunction = (url, init) => {
      sent.push({ url, init: { ...init, headers: new Headers(init.headers) } });
      return fetch(url, init);
    };
    const client = createClient({ baseUrl, appKey: APP_KEY, fetch: recording });
    await client.loginSecure(alice, { keyPair });
    sent.length = 0;
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => client.execute('echo', { i })));
    expect(results).toEqual(Array.from({ length: 100 }, (_, i) => ({ i })));
    expect(new Set(sent.map((request) => new Headers(request.init.headers).get('secure-counter'))).size).toBe(100);

    const replays = await Promise.all(sent.map(({ url, init }) => fetch(url, init)));
    for (const replay of replays) {
      const text = await replay.text();
      expectError({ status: replay.status, headers: replay.headers, text, body: JSON.parse(text) }, '205', 401);
    }
  });

  test('more concurrent requests than the replay window all succeed', async () => {
    const client = createClient({ baseUrl, appKey: APP_KEY });
    await client.loginSecure(alice, { keyPair });
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => client.getObject(i % 2 ? 'USR00001' : 'CUS00001')));
    expect(results.map((object) => object['Name'])).toEqual(Array.from({ length: 300 }, (_, i) => (i % 2 ? 'alice' : 'Ben Bauer')));
  });

  test('a request held up on the way does not fall out of the window: later ones wait for it', async () => {
    // The network holds message 1 until 70 others were answered (or half a second passed). A client
    // that kept numbering would send 2..100 meanwhile and message 1 would arrive below the window.
    let answered = 0;
    let releaseHeld: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      releaseHeld = resolve;
      setTimeout(resolve, 500);
    });
    const client = createClient({
      baseUrl,
      appKey: APP_KEY,
      fetch: async (url, init) => {
        if (new Headers(init.headers).get('secure-counter') === '1') await held;
        const response = await fetch(url, init);
        if (++answered >= 70) releaseHeld();
        return response;
      },
    });
    await client.loginSecure(alice, { keyPair });
    answered = 0;
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => client.execute('echo', { i })));
    expect(results).toEqual(Array.from({ length: 100 }, (_, i) => ({ i })));
  });

  /** A client whose answers pass through `tamper` on the way back. */
  async function tamperedClient(tamper: (response: Response, text: string) => Response) {
    let active = false;
    const client = createClient({
      baseUrl,
      appKey: APP_KEY,
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        return active ? tamper(response, await response.text()) : response;
      },
    });
    await client.loginSecure(alice, { keyPair });
    active = true;
    return client;
  }

  const copy = (response: Response, body: string, change: (headers: Headers) => void = () => undefined) => {
    const headers = new Headers(response.headers);
    change(headers);
    return new Response(body, { status: response.status, headers });
  };

  test('a response whose signature has a flipped bit is rejected', async () => {
    const client = await tamperedClient((response, text) =>
      copy(response, text, (headers) => {
        const signature = Buffer.from(headers.get('secure-signature')!, 'base64');
        signature[5]! ^= 0x01;
        headers.set('secure-signature', signature.toString('base64'));
      }),
    );
    await expect(client.getObject('USR00001')).rejects.toThrow(OdbRestProtocolError);
    await expect(client.getObject('USR00001')).rejects.toThrow('secure response refused: Secure-Signature does not match');
  });

  test('a response whose body has a flipped bit is rejected', async () => {
    const client = await tamperedClient((response, text) => {
      const body = Buffer.from(text, 'base64');
      body[10]! ^= 0x20;
      return copy(response, body.toString('base64'));
    });
    await expect(client.getObject('USR00001')).rejects.toThrow('secure response refused: Secure-Signature does not match');
  });

  test('a response numbered for another request is rejected', async () => {
    const client = await tamperedClient((response, text) => copy(response, text, (headers) => headers.set('secure-counter', '999')));
    await expect(client.getObject('USR00001')).rejects.toThrow('secure response refused: Secure-Counter is not');
  });

  test('a successful answer sent unencrypted is rejected', async () => {
    const client = await tamperedClient(() => Response.json({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { Name: 'mallory' } }));
    await expect(client.getObject('USR00001')).rejects.toThrow('secure response refused: an answer (HTTP 200) was not encrypted and is not a transport refusal');
  });
});
