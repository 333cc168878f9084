/**
 * The typed client's saved credentials (`credential`, `resume`), custom login and typed codes, against
 * the real service through its own fetch.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, test } from 'vitest';
import {
  OdbRestError,
  type BatchResult,
  type InternalStatus,
  type KnownInternalStatus,
  type LoginCredentials,
  type OdbRestClient,
  type OdbRestUnauthenticatedRefusal,
} from '../../src/client/index.js';
import { clientPassValue } from '../../src/index.js';
import { CONTACTS, demoService, testClock, USERS } from '../helpers.js';
import { recordingClient, requests } from './recording.js';

const alice: LoginCredentials = { user: 'alice', password: USERS.alice, appNames: ['crm'] };
const carol: LoginCredentials = { user: 'carol', password: CONTACTS.carol, appNames: ['crm'] };

describe('credential and resume', () => {
  test('a saved session goes on in a new client (a page reload) without a login', async () => {
    const service = await demoService();
    const first = recordingClient(service).client;
    const login = await first.login(alice);
    const saved = JSON.parse(JSON.stringify(first.credential));
    expect(saved).toEqual({ sessionId: login.sessionId });

    const { client, sent } = recordingClient(service);
    await client.resume(saved);
    expect([client.sessionKind, client.credential]).toEqual(['session', { sessionId: login.sessionId }]);
    expect(await client.getObject('USR00001')).toMatchObject({ Name: 'alice' });
    expect(requests(sent)).toEqual(['GET /_CheckSession', 'GET /v1/object/USR00001']);
    expect(sent.map((exchange) => exchange.headers.get('sessionid'))).toEqual([login.sessionId, login.sessionId]);
  });

  test('a saved token goes on in a new client, sent as a bearer token', async () => {
    const service = await demoService();
    const first = recordingClient(service).client;
    const { token } = await first.loginToken(alice);
    expect(first.credential).toEqual({ token });

    const { client, sent } = recordingClient(service);
    await client.resume({ token });
    expect(client.sessionKind).toBe('token');
    expect(await client.getObject('USR00001')).toMatchObject({ Name: 'alice' });
    expect(requests(sent)).toEqual(['GET /_CheckSession', 'GET /v1/object/USR00001']);
    expect(sent.map((exchange) => exchange.headers.get('authorization'))).toEqual([`Bearer ${token}`, `Bearer ${token}`]);
  });

  test('an expired session is OdbRestError 201, and the client holds nothing', async () => {
    const clock = testClock();
    const service = await demoService({ now: clock.now, session: { idleTimeoutMs: 60_000 } });
    const first = recordingClient(service).client;
    await first.login(alice);
    const saved = first.credential!;
    clock.advance(60_001);

    const { client } = recordingClient(service);
    const error = await client.resume(saved).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OdbRestError);
    expect(error).toMatchObject({ internalStatus: '201', httpStatus: 401 });
    expect([client.credential, client.sessionKind]).toEqual([undefined, undefined]);
    await expect(client.getObject('USR00001')).rejects.toMatchObject({ internalStatus: '204' });
  });

  test.each([
    ['a logged-out token', async (client: OdbRestClient) => (await client.loginToken(alice), client.credential!)],
    ['a logged-out session', async (client: OdbRestClient) => (await client.login(alice), client.credential!)],
  ])('%s is OdbRestError 201', async (_name, loginFor) => {
    const service = await demoService();
    const first = recordingClient(service).client;
    const saved = await loginFor(first);
    await first.logout();
    expect(first.credential).toBeUndefined();
    await expect(recordingClient(service).client.resume(saved)).rejects.toMatchObject({ internalStatus: '201', httpStatus: 401 });
  });

  test('an unknown session id is OdbRestError 201', async () => {
    const { client } = recordingClient(await demoService());
    await expect(client.resume({ sessionId: 'AAAAAAAAAAAAAAAAAAAAAA' })).rejects.toMatchObject({ internalStatus: '201', httpStatus: 401 });
  });

  test('a secure login gives no credential, and its token is no session id (205)', async () => {
    const service = await demoService();
    const { client, sent } = recordingClient(service);
    await client.loginSecure(alice);
    expect(client.credential).toBeUndefined();
    await client.checkSession();
    const secureToken = sent.at(-1)!.headers.get('secure-token')!;
    expect(secureToken).toEqual(expect.any(String));
    await expect(recordingClient(service).client.resume({ sessionId: secureToken })).rejects.toMatchObject({ internalStatus: '205', httpStatus: 401 });
  });

  test.each([
    ['a secure session state', { secureToken: 'x', symmetricKey: 'eA==' }],
    ['both members', { sessionId: 'a', token: 'b' }],
    ['an empty session id', { sessionId: '' }],
    ['a number', { token: 5 }],
    ['nothing', undefined],
  ])('resume refuses %s with a TypeError before sending anything', async (_name, saved) => {
    const { client, sent } = recordingClient(await demoService());
    const error = await client.resume(saved as never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/^resume takes \{ sessionId \} or \{ token \}.*a secure login cannot be resumed/);
    expect(sent).toEqual([]);
  });

  test('the credential is left out of JSON.stringify, spreads and keys of the client', async () => {
    const { client } = recordingClient(await demoService());
    const { sessionId } = await client.login(alice);
    expect(JSON.stringify(client)).not.toContain(sessionId);
    expect(JSON.stringify({ ...client })).not.toContain(sessionId);
    expect(Object.keys(client)).not.toContain('credential');
    expect(client.credential).toEqual({ sessionId });
  });

  test('the credential is a copy: changing it changes nothing in the client', async () => {
    const { client } = recordingClient(await demoService());
    const { sessionId } = await client.login(alice);
    (client.credential as { sessionId: string }).sessionId = 'changed';
    expect(client.credential).toEqual({ sessionId });
  });

  test('relogin does not log in again for a resumed session (it holds no password)', async () => {
    const clock = testClock();
    const service = await demoService({ now: clock.now, session: { idleTimeoutMs: 60_000 } });
    const first = recordingClient(service).client;
    await first.login(alice);
    const { client, sent } = recordingClient(service, true);
    await client.login({ user: 'bob', password: USERS.bob, appNames: ['crm'] });
    await client.resume(first.credential!);
    clock.advance(60_001);
    await expect(client.getObject('USR00001')).rejects.toMatchObject({ internalStatus: '201' });
    expect(requests(sent).filter((request) => request === 'POST /v1/login')).toHaveLength(1);
  });
});

describe('loginCustom', () => {
  test('/v1/auth/df with the hex MD5 as pass; a plain session of the contact person', async () => {
    const { client, sent } = recordingClient(await demoService());
    const login = await client.loginCustom(carol);
    expect(login).toMatchObject({ user: { '~ClassName': 'ContactPerson', Name: 'carol' }, databaseName: expect.any(String), sessionId: expect.any(String) });
    expect(requests(sent)).toEqual(['POST /v1/auth/df']);
    expect(JSON.parse(sent[0]!.body!)).toEqual({ user: 'carol', pass: clientPassValue(CONTACTS.carol), appNames: ['crm'] });
    expect([client.sessionKind, client.credential]).toEqual(['session', { sessionId: login.sessionId }]);
    expect(await client.checkSession()).toBe(true);
  });

  test('a wrong password is OdbRestError 302 and no session', async () => {
    const { client } = recordingClient(await demoService());
    await expect(client.loginCustom({ ...carol, password: 'wrong' })).rejects.toMatchObject({ internalStatus: '302', httpStatus: 401 });
    expect(client.sessionKind).toBeUndefined();
  });

  test('relogin repeats the custom login when the session expired', async () => {
    const clock = testClock();
    const service = await demoService({ now: clock.now, session: { idleTimeoutMs: 60_000 } });
    const { client, sent } = recordingClient(service, true);
    await client.loginCustom(carol);
    clock.advance(60_001);
    expect(await client.getObject('CON00001')).toMatchObject({ Name: 'carol' });
    expect(requests(sent).filter((request) => request === 'POST /v1/auth/df')).toHaveLength(2);
  });
});

/** Every known code, once: TypeScript checks this holds exactly the members of `KnownInternalStatus`. */
const KNOWN: Record<KnownInternalStatus, true> = {
  '0': true, '100': true, '101': true, '201': true, '204': true, '205': true, '302': true, '303': true, '306': true,
  '307': true, '310': true, '340': true, '341': true, '342': true, '320': true, '321': true, '322': true, '323': true,
  '400': true, '403': true, '404': true, '405': true, '409': true, '413': true, '415': true, '429': true, '500': true,
  '503': true,
};

/** The TypeScript files under a folder. */
const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });

describe('internalStatus', () => {
  test('is typed as the known codes, open to a macro\'s own', () => {
    expectTypeOf<OdbRestError['internalStatus']>().toEqualTypeOf<InternalStatus>();
    expectTypeOf<OdbRestUnauthenticatedRefusal['internalStatus']>().toEqualTypeOf<InternalStatus>();
    expectTypeOf<BatchResult['result']['status']['internalStatus']>().toEqualTypeOf<InternalStatus>();
    expectTypeOf<Extract<InternalStatus, '302'>>().toEqualTypeOf<'302'>();
    expectTypeOf<'X42'>().toMatchTypeOf<InternalStatus>();
  });

  test('the known codes are every code docs/protocol.md lists and every code the service throws', () => {
    const root = new URL('../../', import.meta.url).pathname;
    const documented = [...readFileSync(`${root}docs/protocol.md`, 'utf8').matchAll(/^\| `(\d+)` \| \d{3} \|/gm)].map((match) => match[1]!);
    const thrown = sources(`${root}src`).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/new ApiError\('(\d+)'/g)].map((match) => match[1]!));
    expect(documented.length).toBeGreaterThan(25);
    expect(thrown.length).toBeGreaterThan(25);
    expect([...new Set([...documented, ...thrown])].sort()).toEqual(Object.keys(KNOWN).sort());
  });
});
