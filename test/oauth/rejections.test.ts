/** External login: every way a login must fail, each its own case, over HTTP against the local provider process. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_KEY, USERS, call, loginBody, testClock } from '../helpers.js';
import {
  NAMES,
  type ProviderType,
  appleKey,
  appleKeyFile,
  authorize,
  expectRejected,
  finish,
  getJson,
  identityLinks,
  overHttp,
  params,
  postJson,
  startAllProviders,
  startService,
  stopAllProviders,
  tampered,
  type LocalProvider,
  type ProviderProcess,
  type RunningService,
} from './provider.js';

let idp: ProviderProcess;
let running: RunningService;
let providers: Record<ProviderType, LocalProvider>;
const DF_GONE = 'unknown, expired or already used dfUuid; start the external login again';

beforeAll(async () => {
  ({ idp, providers, running } = await startAllProviders());
});

afterAll(() => stopAllProviders({ idp, running }));

const linksOf = (subject: string) => identityLinks(running.service, { subject });

/** A first login of a fresh identity; returns its dfUuid. */
async function dfUuidFor(kind: ProviderType, sub: string, email?: string): Promise<string> {
  await idp.user(providers[kind], { sub, email });
  const answer = await finish(await authorize(running.base, NAMES[kind].toLowerCase()));
  expect(answer.body.data).toEqual({ dfUuid: expect.any(String) });
  return answer.body.data.dfUuid;
}

describe('providers', () => {
  it('an unknown provider is 321', async () => {
    expectRejected(await getJson(running.base, '/v1/auth/yahoo'), '321', 404, 'unknown or unconfigured external provider "yahoo"');
  });

  it('a provider entry that is not configured is 321, at the start and at the callback', async () => {
    await running.service.store.put({ className: 'OAuthProvider', fields: { name: 'Spare', type: 'google', additionalData: '{}' } });
    expectRejected(await getJson(running.base, '/v1/auth/spare'), '321', 404, /"spare"/);
    expectRejected(await getJson(running.base, '/v1/spare/callback?state=x&code=y'), '321', 404, /"spare"/);
  });

  it('the name must be in lower case', async () => {
    expectRejected(await getJson(running.base, '/v1/auth/Google'), '321', 404, /"Google"/);
  });

  it('the start needs an app key: neither header nor query is 100', async () => {
    const answer = await call(overHttp(running.base), 'GET', '/v1/auth/google', { noAppKey: true });
    expectRejected(answer, '100', 401, 'appkey header missing');
  });

  it('more than 64 appNames are 400', async () => {
    const appNames = Array.from({ length: 65 }, (_, i) => `app${i}`).join(',');
    expectRejected(await getJson(running.base, `/v1/auth/google?appNames=${appNames}`), '400', 400, 'appNames must be at most 64 names of at most 128 characters');
  });

  it('an appName longer than 128 characters is 400', async () => {
    expectRejected(await getJson(running.base, `/v1/auth/google?appNames=${'a'.repeat(129)}`), '400', 400, 'appNames must be at most 64 names of at most 128 characters');
  });

  it('the start accepts the app key as a header too', async () => {
    const answer = await getJson(running.base, '/v1/auth/google');
    expect(answer.status).toBe(302);
    expect(new URL(answer.headers.get('location')!).origin).toBe(new URL(providers.google.endpoints.authorization).origin);
  });
});

describe('state', () => {
  it('a callback without state is 322', async () => {
    const step = await authorize(running.base, 'google');
    expectRejected(await finish(tampered(step, (p) => p.delete('state'))), '322', 400, 'the callback carries no state');
  });

  it('a reused state is 322', async () => {
    await idp.user(providers.google, { sub: 'state-reuse' });
    const step = await authorize(running.base, 'google');
    expect((await finish(step)).body.status.internalStatus).toBe('0');
    expectRejected(await finish(step), '322', 400, 'unknown, expired or already used state');
  });

  it('an invented state is 322', async () => {
    const step = await authorize(running.base, 'google');
    expectRejected(await finish(tampered(step, (p) => p.set('state', 'invented-state'))), '322', 400, 'unknown, expired or already used state');
  });

  it('a state issued for another provider is 322', async () => {
    const step = await authorize(running.base, 'google');
    expectRejected(await finish(tampered(step, () => undefined, '/v1/microsoft/callback')), '322', 400, 'this state was issued for another provider, not Microsoft');
  });

  it('an error reported by the provider to the callback is 322', async () => {
    const step = await authorize(running.base, 'google');
    const answer = await finish(tampered(step, (p) => (p.delete('code'), p.set('error', 'access_denied'))));
    expectRejected(answer, '322', 400, 'Google reported an error to the callback: access_denied');
  });

  it('a POSTed callback must be a form', async () => {
    const answer = await call(overHttp(running.base), 'POST', '/v1/apple/callback', { json: { state: 'x' }, noAppKey: true });
    expectRejected(answer, '415', 415, 'the callback POST must be application/x-www-form-urlencoded');
  });
});

/** What the provider answers next (ID-token claims, a rogue signing key, an HTTP status). */
type NextAnswer = Parameters<ProviderProcess['next']>[1];

/**
 * A test title, and a callback whose provider answer is shaped by `next` with what it must be rejected
 * with. The title is a row of its own: `%s` prints it as is (`$title` would quote and shorten it).
 */
type Rejection = [title: string, { kind: ProviderType; next: NextAnswer; message: string | RegExp }];

/** A fresh flow of `kind` whose provider answers the code exchange as `next` says. */
async function callbackWith(kind: ProviderType, next: NextAnswer) {
  const step = await authorize(running.base, kind);
  await idp.next(providers[kind], next);
  return finish(step);
}

describe('ID token', () => {
  const seconds = Math.floor(Date.now() / 1000);

  it.each<Rejection>([
    ['a wrong nonce is 322', { kind: 'google', next: { idToken: { nonce: 'another-nonce' } }, message: /nonce/ }],
    ['a missing nonce is 322', { kind: 'apple', next: { idToken: { nonce: null } }, message: /nonce/ }],
    ['a token for another audience is 322', { kind: 'google', next: { idToken: { aud: 'someone-else' } }, message: /audience/ }],
    ['an Apple token for a client id not in the list is 322', { kind: 'apple', next: { idToken: { aud: 'com.other.app' } }, message: /audience/ }],
    ['an Apple token signed by another key is 322', { kind: 'apple', next: { rogueKey: true }, message: /signature/ }],
    ['an expired token is 322', { kind: 'google', next: { idToken: { iat: seconds - 7200, nbf: seconds - 7200, exp: seconds - 3600 } }, message: /expiration/ }],
    ['a token from another issuer is 322', { kind: 'google', next: { idToken: { iss: 'https://accounts.example.com' } }, message: /issuer/ }],
    // the token's iss still names tenant-a
    ['Microsoft: an issuer that does not match the token tenant is 322', { kind: 'microsoft', next: { idToken: { tid: 'tenant-b' } }, message: /issuer/ }],
    ['Microsoft: a token without tid is 322', { kind: 'microsoft', next: { idToken: { tid: null } }, message: /issuer/ }],
    ['an ID token without a subject is 322', { kind: 'google', next: { idToken: { sub: null } }, message: /subject/ }],
    ['an ID token with an empty subject is 322', { kind: 'google', next: { idToken: { sub: '' } }, message: 'the ID token names no subject' }],
  ])('%s', async (_title, { kind, next, message }) => {
    expectRejected(await callbackWith(kind, next), '322', 400, message);
  });

  it('a token signed by another key is 322', async () => {
    await idp.user(providers.google, { sub: 'rogue-signed' });
    expectRejected(await callbackWith('google', { rogueKey: true }), '322', 400, /signature/);
    expect(await linksOf('rogue-signed')).toEqual([]);
  });

  it('Microsoft: any tenant is accepted with its own issuer (multi-tenant)', async () => {
    await idp.user(providers.microsoft, { sub: 'tenant-b-user' });
    const issuer = providers.microsoft.endpoints.issuer!.replace('{tenantid}', 'tenant-b');
    const answer = await callbackWith('microsoft', { idToken: { tid: 'tenant-b', iss: issuer } });
    expect(answer.body.data).toEqual({ dfUuid: expect.any(String) });
  });
});

describe('provider errors', () => {
  it.each<Rejection>([
    ['a token endpoint answering 500 is 323', { kind: 'google', next: { tokenStatus: 500 }, message: 'Google answered with an error (HTTP 500)' }],
    ['Apple answering 500 is 323', { kind: 'apple', next: { tokenStatus: 500 }, message: 'Apple answered with an error (HTTP 500)' }],
  ])('%s', async (_title, { kind, next, message }) => {
    expectRejected(await callbackWith(kind, next), '323', 502, message);
  });

  it('a Facebook graph answer without a user id is 323', async () => {
    await idp.user(providers.facebook, { sub: '' });
    expectRejected(await callbackWith('facebook', {}), '323', 502, 'facebook graph endpoint answered without a user id');
  });

  it("a code sent with another flow's state fails the PKCE check at the provider: 323", async () => {
    const mine = await authorize(running.base, 'apple');
    const other = await authorize(running.base, 'apple');
    const answer = await finish(tampered(mine, (p) => p.set('code', params(other).get('code')!)));
    expectRejected(answer, '323', 502, 'Apple refused the code exchange: invalid_grant');
  });

  it('Facebook graph answering 500 is 323', async () => {
    await idp.user(providers.facebook, { sub: 'graph-broken' });
    expectRejected(await callbackWith('facebook', { userinfoStatus: 500 }), '323', 502, 'facebook graph endpoint answered HTTP 500');
    expect(await linksOf('graph-broken')).toEqual([]);
  });
});

describe('dfUuid', () => {
  it('a used dfUuid is 320', async () => {
    const dfUuid = await dfUuidFor('google', 'df-reuse');
    expect((await postJson(running.base, '/v1/extLogin', { ...loginBody('alice', USERS.alice), dfUuid })).body.status.internalStatus).toBe('0');
    expectRejected(await postJson(running.base, '/v1/extLogin', { ...loginBody('bob', USERS.bob), dfUuid }), '320', 400, DF_GONE);
    expect((await linksOf('df-reuse')).map((link) => link.user)).toEqual([{ $ref: 'USR00001' }]);
  });

  it('an unknown dfUuid is 320', async () => {
    const answer = await postJson(running.base, '/v1/extLogin', { ...loginBody('alice', USERS.alice), dfUuid: crypto.randomUUID() });
    expectRejected(answer, '320', 400, DF_GONE);
  });

  it('a dfUuid that is not a UUID is 320', async () => {
    expectRejected(await postJson(running.base, '/v1/extLogin', { ...loginBody('alice', USERS.alice), dfUuid: 'abc' }), '320', 400, /dfUuid/);
  });

  it('a missing dfUuid is 400', async () => {
    expectRejected(await postJson(running.base, '/v1/extLogin', loginBody('alice', USERS.alice)), '400', 400, 'dfUuid is required');
  });

  it('a dfUuid of the wrong type is 400', async () => {
    expectRejected(await postJson(running.base, '/v1/extLogin', { ...loginBody('alice', USERS.alice), dfUuid: 7 }), '400', 400, 'dfUuid must be a string');
  });

  it('wrong database credentials link nothing and leave the dfUuid usable', async () => {
    const dfUuid = await dfUuidFor('facebook', 'df-wrong-pass');
    const wrong = await postJson(running.base, '/v1/extLogin', { ...loginBody('alice', 'not-her-password'), dfUuid });
    expectRejected(wrong, '302', 401, 'wrong user name or password');
    expect(await linksOf('df-wrong-pass')).toEqual([]);
    const right = await postJson(running.base, '/v1/extLogin', { ...loginBody('alice', USERS.alice), dfUuid });
    expect(right.body.status.internalStatus).toBe('0');
    expect((await linksOf('df-wrong-pass')).length).toBe(1);
  });

  it('the failed-login limit applies: after 5 wrong passwords even the right one is 303 and links nothing', async () => {
    const dfUuid = await dfUuidFor('google', 'df-limit');
    for (let i = 0; i < 5; i++) {
      expectRejected(await postJson(running.base, '/v1/extLogin', { ...loginBody('extern', 'wrong'), dfUuid }), '302', 401, 'wrong user name or password');
    }
    const blocked = await postJson(running.base, '/v1/extLogin', { ...loginBody('extern', USERS.extern), dfUuid });
    expectRejected(blocked, '303', 429, /^too many failed logins, try again in \d+ seconds$/);
    expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await linksOf('df-limit')).toEqual([]);
  });

  it('a missing licence links nothing', async () => {
    const dfUuid = await dfUuidFor('facebook', 'df-no-licence');
    expectRejected(await postJson(running.base, '/v1/extLogin', { ...loginBody('bob', USERS.bob, ['erp']), dfUuid }), '306', 403, /erp/);
    expect(await linksOf('df-no-licence')).toEqual([]);
  });
});

describe('linking', () => {
  it('never links by e-mail: another identity with the same address gets its own dfUuid', async () => {
    const dfUuid = await dfUuidFor('google', 'mail-owner', 'shared@example.com');
    expect((await postJson(running.base, '/v1/extLogin', { ...loginBody('alice', USERS.alice), dfUuid })).body.status.internalStatus).toBe('0');
    await idp.user(providers.google, { sub: 'mail-other', email: 'shared@example.com' });
    const other = await finish(await authorize(running.base, 'google', `appkey=${APP_KEY}&appNames=crm`));
    expect(other.body.data).toEqual({ dfUuid: expect.any(String) });
    expect(await linksOf('mail-other')).toEqual([]);
  });

  it('the same subject at another provider is another identity', async () => {
    const dfUuid = await dfUuidFor('google', 'same-subject');
    expect((await postJson(running.base, '/v1/extLogin', { ...loginBody('alice', USERS.alice), dfUuid })).body.status.internalStatus).toBe('0');
    await idp.user(providers.microsoft, { sub: 'same-subject' });
    const other = await finish(await authorize(running.base, 'microsoft'));
    expect(other.body.data).toEqual({ dfUuid: expect.any(String) });
  });
});

describe('a linked user that was deleted', () => {
  let own: RunningService;

  beforeAll(async () => {
    own = await startService([{ provider: providers.google, name: 'Google' }]); // its own store: dave is deleted only here
  });
  afterAll(() => own?.close());

  it('is 500 at the next login of the identity', async () => {
    await idp.user(providers.google, { sub: 'deleted-user' });
    const first = await finish(await authorize(own.base, 'google'));
    const linked = await postJson(own.base, '/v1/extLogin', { ...loginBody('dave', USERS.dave, []), dfUuid: first.body.data.dfUuid });
    expect(linked.body.status.internalStatus).toBe('0');
    expect(await own.service.store.delete('USR00003')).toBe(true); // dave
    expectRejected(await finish(await authorize(own.base, 'google')), '500', 500, 'the database user linked to this identity no longer exists');
  });
});

describe('a linked user that was disabled', () => {
  let own: RunningService;

  beforeAll(async () => {
    own = await startService([{ provider: providers.google, name: 'Google' }], { users: { admins: 'admins' } }); // alice administers users
  });
  afterAll(() => own?.close());

  it('is 302, as its password login is, until enabled again (PROTOCOL 2.8: "A disabled user\'s logins answer 302")', async () => {
    await idp.user(providers.google, { sub: 'disabled-user' });
    const first = await finish(await authorize(own.base, 'google'));
    expect((await postJson(own.base, '/v1/extLogin', { ...loginBody('bob', USERS.bob, []), dfUuid: first.body.data.dfUuid })).body.status.internalStatus).toBe('0');
    const admin = (await postJson(own.base, '/v1/login', loginBody('alice', USERS.alice))).body.data.sessionId;
    const disable = (Disabled: boolean) => call(own.service, 'PATCH', '/v1/user/bob', { headers: { sessionId: admin }, json: { Disabled } });
    expect((await disable(true)).status).toBe(200);
    expectRejected(await finish(await authorize(own.base, 'google')), '302', 401, 'wrong user name or password');
    expect((await disable(false)).status).toBe(200);
    expect((await finish(await authorize(own.base, 'google'))).body.data.user.Name).toBe('bob');
  });
});

describe('with a clock', () => {
  let clocked: RunningService;
  let clock: ReturnType<typeof testClock>;

  beforeAll(async () => {
    clock = testClock(Date.now());
    clocked = await startService([{ provider: providers.google, name: 'Google' }], { now: () => clock.now() });
  });
  afterAll(() => clocked?.close());

  it('a dfUuid older than 15 minutes is 320 and links nothing', async () => {
    await idp.user(providers.google, { sub: 'df-expired' });
    const first = await finish(await authorize(clocked.base, 'google'));
    clock.advance(15 * 60_000 + 1000);
    const answer = await postJson(clocked.base, '/v1/extLogin', { ...loginBody('alice', USERS.alice), dfUuid: first.body.data.dfUuid });
    expectRejected(answer, '320', 400, DF_GONE);
    expect(await identityLinks(clocked.service, { subject: 'df-expired' })).toEqual([]);
  });

  it('a state older than 10 minutes is 322', async () => {
    const step = await authorize(clocked.base, 'google');
    clock.advance(10 * 60_000 + 1000);
    expectRejected(await finish(step), '322', 400, 'unknown, expired or already used state');
  });

  it('the ID token expiry is judged by the service clock', async () => {
    const step = await authorize(clocked.base, 'google');
    await idp.next(providers.google, { idToken: { exp: Math.floor(Date.now() / 1000) + 300 } });
    clock.advance(7 * 60_000); // past the token's five minutes and the 30 s tolerance, within the state's ten
    expectRejected(await finish(step), '322', 400, /expiration/);
  });
});

describe('a provider that is down', () => {
  let down: RunningService;
  let provider: LocalProvider;

  beforeAll(async () => {
    provider = await idp.start('google'); // a provider of its own: the others keep running
    down = await startService([{ provider, name: 'Google' }]);
  });
  afterAll(() => down?.close());

  it('is 323 when the code cannot be exchanged', async () => {
    const step = await authorize(down.base, 'google');
    await idp.stop(provider);
    expectRejected(await finish(step), '323', 502, 'Google could not be reached');
  });
});

describe('an Apple key the provider does not know', () => {
  let other: RunningService;

  beforeAll(async () => {
    const keyPath = appleKeyFile('OTHER', (await appleKey()).pem);
    other = await startService([{ provider: { ...providers.apple, apple: { ...providers.apple.apple!, keyPath } }, name: 'Apple' }]);
  });
  afterAll(() => other?.close());

  it('makes Apple refuse the client secret: 323', async () => {
    const step = await authorize(other.base, 'apple');
    expectRejected(await finish(step), '323', 502, 'Apple refused the code exchange: invalid_client');
  });
});
