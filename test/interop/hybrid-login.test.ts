/**
 * The hybrid `/v2/login` (PROTOCOL.md 3.4) through the real service: the demo database, the
 * checked-in server key, and the three independent node:crypto clients of clients.ts talking to
 * `service.fetch` as they would to a server.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, test, vi } from 'vitest';
import type { Service } from '../../src/index.js';
import { APP_KEY, demoService, expectError, parseOrUndefined } from '../helpers.js';
import { csharpClient, dartClient, typescriptClient, type Connection, type InteropClient, type LoginFields } from './clients.js';
import { KEY, PUBLIC_KEY_8192 } from './vectors.js';

const ALICE: LoginFields = { user: 'alice', password: 'alice-secret', appNames: ['crm'] };
const BASE = 'http://odbrest.test';

let dart: InteropClient;
let typescript: InteropClient;
let csharp: InteropClient;

beforeAll(async () => {
  [dart, typescript, csharp] = await Promise.all([dartClient(), typescriptClient(), csharpClient()]);
});

/** A fresh service (its own failed-login counts) and a connection to it from `clientAddress`. */
async function setup(clientAddress = '10.0.0.1'): Promise<{ service: Service; connection: Connection }> {
  const service = await demoService({ databaseName: 'demo', secure: { serverKey: KEY.privateKey } });
  const transport = (url: string, init: RequestInit) => service.fetch(new Request(url, init), { clientAddress });
  return { service, connection: { transport, baseUrl: BASE, appKey: APP_KEY } };
}

/** Posts a `/v2/login` body as text; returns status, headers and text. */
async function post(connection: Connection, body: string) {
  const response = await connection.transport(`${BASE}/v2/login`, { method: 'POST', headers: { appkey: APP_KEY, 'content-type': 'application/json' }, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: parseOrUndefined(text) };
}

describe.each([
  ['Dart', () => dart],
  ['TypeScript', () => typescript],
  ['C#', () => csharp],
] as const)('the %s client', (_name, client) => {
  test('gets the key, logs in with a hybrid body and reads the A|B answer; the session works with its header', async () => {
    const { connection } = await setup();
    const key = await (await client().request(connection, 'GET', '/v2/login/key')).json();
    expect(key).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { key: KEY.publicKey.replaceAll('\n', '\r\n') } });

    const login = await client().login(connection, ALICE);
    expect(login.sealed).toBe(true);
    expect(login.envelope).toMatchObject({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { user: { Name: 'alice' }, databaseName: 'demo' } });
    expect(login.sessionId).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    const user = await (await client().request(connection, 'GET', '/v1/object/USR00001', { sessionId: login.sessionId })).json();
    expect(user.data).toMatchObject({ '~ClassName': 'User', Name: 'alice' });
  });

  test('a wrong password is a plain 302 envelope, never sealed', async () => {
    const { connection } = await setup();
    const key = (await (await client().request(connection, 'GET', '/v2/login/key')).json()).data.key as string;
    const answer = await post(connection, client().loginBody(key, { ...ALICE, password: 'wrong' }));
    expectError(answer, '302', 401);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(client().readAnswer(answer.text).sealed).toBe(false);
  });
});

test('the sealed answer is text/plain with exactly one |', async () => {
  const { connection } = await setup();
  const answer = await post(connection, typescript.loginBody(KEY.publicKey, ALICE));
  expect([answer.status, answer.headers.get('content-type')]).toEqual([200, 'text/plain; charset=utf-8']);
  expect(answer.text).toMatch(/^[A-Za-z0-9+/]+=*\|[A-Za-z0-9+/]+=*$/);
});

test('the Dart client keeps one AES key across logins: each login works and makes its own session', async () => {
  const { connection } = await setup();
  const client = await dartClient({ keys: dart.keys, aesKey: randomBytes(32) });
  const first = await client.login(connection, ALICE);
  const second = await client.login(connection, ALICE);
  expect([first.envelope.status.internalStatus, second.envelope.status.internalStatus]).toEqual(['0', '0']);
  expect(first.sessionId).not.toBe(second.sessionId);
});

test('without publicKey the answer is the plain JSON envelope of /v1/login', async () => {
  const { connection } = await setup();
  const client = await typescriptClient({ keys: typescript.keys, withoutPublicKey: true });
  const answer = await post(connection, client.loginBody(KEY.publicKey, ALICE));
  expect([answer.status, answer.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
  expect(answer.body).toMatchObject({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { user: { Name: 'alice' }, databaseName: 'demo' } });
  expect(Object.keys(answer.body.data).sort()).toEqual(['acls', 'databaseName', 'expiresAt', 'sessionId', 'user']);
});

/** Bodies that cannot be opened, each for the real route. */
const UNOPENABLE: Array<[string, () => string]> = [
  ['a K of 16 bytes', () => typescript.bodyFor(KEY.publicKey, Buffer.from(JSON.stringify({ user: 'alice' })), randomBytes(16), randomBytes(16))],
  ["a flipped bit in data's last-but-one block", () => flipDataBit(typescript.loginBody(KEY.publicKey, ALICE))],
  ['aesKey not base64', () => withMember(typescript.loginBody(KEY.publicKey, ALICE), 'aesKey', '!!!!')],
  ['data not base64', () => withMember(typescript.loginBody(KEY.publicKey, ALICE), 'data', 'not*base64')],
  ['publicKey not base64', () => withMember(typescript.loginBody(KEY.publicKey, ALICE), 'publicKey', 'not*base64')],
  ['a publicKey of 1024 bits', () => withMember(typescript.loginBody(KEY.publicKey, ALICE), 'publicKey', SMALL_KEY)],
  ['a publicKey of 8192 bits', () => withMember(typescript.loginBody(KEY.publicKey, ALICE), 'publicKey', PUBLIC_KEY_8192)],
  ['a malformed publicKey', () => withMember(typescript.loginBody(KEY.publicKey, ALICE), 'publicKey', KEY.publicKey.slice(0, 200))],
  ['a plaintext that is not JSON', () => typescript.bodyFor(KEY.publicKey, Buffer.from('user=alice&pass=x'))],
];

/** A 1024-bit SPKI PEM (checked in: generated once with node:crypto). */
const SMALL_KEY = `-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDkfAl3Jy+J2DKrD4rRuwT6LAcn
gAly+bg8MwV/RHY2A1Uy6IjUamn5P51VmPfdQrLnlFD5FgtgnxFmsDZ0eSk3XMm1
88N9Dhdd3Ucf+3F5b7g2eWdJ0QJmFKh5GAwBZQNpPM9Uw6qo88JjYvPnOPDd9EoH
W9U8qOFe8LBZCMcjmQIDAQAB
-----END PUBLIC KEY-----
`;

function withMember(body: string, name: string, value: string): string {
  return JSON.stringify({ ...JSON.parse(body), [name]: value });
}

function flipDataBit(body: string): string {
  const parsed = JSON.parse(body);
  const bytes = Buffer.from(parsed.data, 'base64');
  bytes[bytes.length - 17]! ^= 1;
  return JSON.stringify({ ...parsed, data: bytes.toString('base64') });
}

describe('every decryption failure', () => {
  test.each(UNOPENABLE)('%s: the one 310, plain JSON', async (_case, make) => {
    const { connection } = await setup();
    const answer = await post(connection, make());
    expectError(answer, '310', 401);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  test('all give byte-identical answers (status, headers, body)', async () => {
    const { connection } = await setup();
    const answers = [];
    for (const [, make] of UNOPENABLE) {
      const answer = await post(connection, make());
      // X-Request-Id names each request (a fresh CSPRNG id): it tells nothing about the failure.
      expect(answer.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
      const headers = [...answer.headers].filter(([name]) => name !== 'x-request-id');
      answers.push({ status: answer.status, headers, text: answer.text });
    }
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
  });

  test('each counts against the address; past the limit the answer is 303 before any decryption', async () => {
    const { connection, service } = await setup('10.0.0.9');
    for (let i = 0; i < 20; i++) expectError(await post(connection, flipDataBit(typescript.loginBody(KEY.publicKey, ALICE))), '310', 401);
    const decrypt = vi.spyOn(crypto.subtle, 'decrypt');
    try {
      const limited = await post(connection, typescript.loginBody(KEY.publicKey, ALICE));
      expectError(limited, '303', 429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(decrypt).not.toHaveBeenCalled();
    } finally {
      decrypt.mockRestore();
    }
    // another address still logs in
    const other = { ...connection, transport: (url: string, init: RequestInit) => service.fetch(new Request(url, init), { clientAddress: '10.0.0.10' }) };
    expect((await typescript.login(other, ALICE)).envelope.status.internalStatus).toBe('0');
  });
});
