/** External login end to end: odbrest over HTTP, a real local provider process, a browser that follows the redirects. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USERS, loginBody } from '../helpers.js';
import {
  NAMES,
  PROVIDER_TYPES,
  type ProviderType,
  authorize,
  expectRejected,
  finish,
  getJson,
  identityLinks,
  loginData,
  params,
  postJson,
  startAllProviders,
  stopAllProviders,
  type LocalProvider,
  type ProviderProcess,
  type RunningService,
} from './provider.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let idp: ProviderProcess;
let running: RunningService;
let providers: Record<ProviderType, LocalProvider>;

beforeAll(async () => {
  ({ idp, providers, running } = await startAllProviders());
});

afterAll(() => stopAllProviders({ idp, running }));

const plainLoginData = (user: 'alice' | 'bob' | 'extern', appNames: string[]) => loginData(running.base, user, appNames);
const links = (provider: string, subject: string) => identityLinks(running.service, { provider, subject });

describe.each(PROVIDER_TYPES)('%s', (kind) => {
  const key = NAMES[kind].toLowerCase();
  const subject = `${kind}-subject-1`;

  it('first login gives a dfUuid, /v1/extLogin links it, the next login goes straight to a session', async () => {
    const provider = providers[kind];
    await idp.user(provider, { sub: subject, email: 'alice@example.com', given_name: 'Alice', family_name: 'Schmidt' });

    // 1. first login: not linked, no default user -> dfUuid envelope
    const first = await finish(await authorize(running.base, key));
    const message = first.body?.status?.statusMessage;
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ status: { internalStatus: '0', statusMessage: message, debugMessage: message }, data: { dfUuid: expect.stringMatching(UUID) } });
    expect(message).toContain('/v1/extLogin');
    expect(first.headers.get('cache-control')).toBe('no-store');

    // the authorization request carried state, PKCE S256, nonce for OpenID providers, the registered callback
    const { authorizations } = await idp.stats(provider);
    const sent = authorizations.at(-1)!;
    expect(sent.redirect_uri).toBe(`${running.base}/v1/${key}/callback`);
    expect(sent.state).toMatch(/^[\w-]{40,}$/);
    expect(sent.code_challenge_method).toBe('S256');
    expect(sent.code_challenge).toMatch(/^[\w-]{43}$/);
    expect(sent.nonce === undefined).toBe(kind === 'facebook');
    expect(sent.response_mode).toBe(kind === 'apple' ? 'form_post' : undefined);
    expect(await links(key, subject)).toEqual([]);

    // 2. /v1/extLogin with the database user's credentials: linked, answered as /v1/login
    const linked = await postJson(running.base, '/v1/extLogin', { ...loginBody('alice', USERS.alice, ['crm']), dfUuid: first.body.data.dfUuid });
    expect(linked.status).toBe(200);
    expect(linked.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: await plainLoginData('alice', ['crm']) });
    const object = await getJson(running.base, '/v1/object/CUS00001', { sessionId: linked.body.data.sessionId });
    expect(object.body.status.internalStatus).toBe('0');
    expect(await links(key, subject)).toEqual([
      { provider: key, type: kind, subject, user: { $ref: 'USR00001' }, name: 'Alice', surname: 'Schmidt', email: 'alice@example.com' },
    ]);

    // 3. a later login of the same identity: a session at once (appNames from the query)
    const step = await authorize(running.base, key, 'appkey=test-app&appNames=crm');
    if (kind === 'apple') expect(params(step).has('user')).toBe(false); // Apple sends the name only once
    const later = await finish(step);
    expect(later.status).toBe(200);
    expect(later.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: await plainLoginData('alice', ['crm']) });
    const again = await getJson(running.base, '/v1/object/CUS00001', { sessionId: later.body.data.sessionId });
    expect(again.body.status.internalStatus).toBe('0');
    expect(later.body.data.sessionId).not.toBe(linked.body.data.sessionId);
  });
});

describe('apple specifics', () => {
  it('signs a fresh ES256 client secret per token request, which the provider verifies', async () => {
    const provider = providers.apple;
    await idp.user(provider, { sub: 'apple-secret-check' });
    const before = await idp.stats(provider);
    await finish(await authorize(running.base, 'apple'));
    await finish(await authorize(running.base, 'apple'));
    const after = await idp.stats(provider);
    expect(after.tokenRequests - before.tokenRequests).toBe(2);
    expect(after.verifiedSecrets - before.verifiedSecrets).toBe(2);
    expect(after.distinctSecrets - before.distinctSecrets).toBe(2); // none reused
  });

  it('accepts an ID token for any of its client ids (services id and app id)', async () => {
    const provider = providers.apple;
    await idp.user(provider, { sub: 'apple-app-audience' });
    const step = await authorize(running.base, 'apple');
    await idp.next(provider, { idToken: { aud: 'com.example.app' } });
    const answer = await finish(step);
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({ dfUuid: expect.stringMatching(UUID) });
  });
});

describe('a linked identity', () => {
  it('gets a macro-only session without appNames, and 306 for applications the user holds no licence for (comma-separated or repeated)', async () => {
    const provider = providers.google;
    await idp.user(provider, { sub: 'google-bob' });
    const first = await finish(await authorize(running.base, 'google'));
    await postJson(running.base, '/v1/extLogin', { ...loginBody('bob', USERS.bob, ['crm']), dfUuid: first.body.data.dfUuid });

    const bare = await finish(await authorize(running.base, 'google'));
    expect(bare.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: await plainLoginData('bob', []) });
    const refused = await getJson(running.base, '/v1/object/CUS00001', { sessionId: bare.body.data.sessionId });
    expect(refused.status).toBe(403);
    expect(refused.body.status.internalStatus).toBe('307');

    const unlicensed = await finish(await authorize(running.base, 'google', 'appkey=test-app&appNames=crm,erp'));
    expectRejected(unlicensed, '306', 403, 'user holds no licence for application "erp"');
    const repeated = await finish(await authorize(running.base, 'google', 'appkey=test-app&appNames=crm&appNames=erp'));
    expectRejected(repeated, '306', 403, 'user holds no licence for application "erp"');
  });
});

describe('the shared service user (spec case 2)', () => {
  it('links several external identities to one database user', async () => {
    for (const [kind, sub] of [['facebook', 'fb-contact-1'], ['microsoft', 'ms-contact-2']] as const) {
      await idp.user(providers[kind], { sub });
      const first = await finish(await authorize(running.base, NAMES[kind].toLowerCase()));
      const linked = await postJson(running.base, '/v1/extLogin', { ...loginBody('extern', USERS.extern, ['crm']), dfUuid: first.body.data.dfUuid });
      expect(linked.body.data.user.Name).toBe('extern');
    }
    expect((await links('facebook', 'fb-contact-1'))[0]!.user).toEqual({ $ref: 'USR00004' });
    expect((await links('microsoft', 'ms-contact-2'))[0]!.user).toEqual({ $ref: 'USR00004' });
  });
});
