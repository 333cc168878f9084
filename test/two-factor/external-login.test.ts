/**
 * External login and the second factor (PROTOCOL.md 2.6): `/v1/extLogin` checks the database user's
 * credentials as `/v1/login` does, second factor included; a linked external login
 * (`/v1/auth/{provider}`) is already a second factor and skips it. Against the local OAuth provider.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loginBody, testClock, USERS } from '../helpers.js';
import { authorize, expectRejected, finish, postJson, spawnProviders, startService, type LocalProvider, type ProviderProcess, type RunningService } from '../oauth/provider.js';
import { ConditionalObjectStore } from './conditional-store.js';
import { totpAt } from './rfc6238.js';
import { enrol, NEED_CODE, OK, STEP, TWO_FACTOR_KEY, WRONG_CODE, wrongCode } from './support.js';

let idp: ProviderProcess;
let provider: LocalProvider;
let running: RunningService;
const clock = testClock(Math.floor(Date.now() / STEP) * STEP + 10_000);

beforeAll(async () => {
  ({ idp, providers: { google: provider } } = await spawnProviders('google'));
  running = await startService([{ provider, name: 'Google' }], {
    store: new ConditionalObjectStore(),
    now: clock.now,
    twoFactor: { policies: { hr: 'optional' }, key: TWO_FACTOR_KEY },
  });
});

afterAll(async () => {
  await running?.close();
  idp?.close();
});

describe('external login with two-factor login on', () => {
  test('/v1/extLogin: 341 without a code, 342 with a wrong one, a session with the right one; the linked login then needs no code', async () => {
    const { key } = await enrol(running.service, clock, 'alice', 'hr');
    await idp.user(provider, { sub: 'two-factor-subject' });
    const first = await finish(await authorize(running.base, 'google', 'appkey=test-app&appNames=hr'));
    const dfUuid = first.body.data.dfUuid as string;
    expect(dfUuid).toEqual(expect.any(String));
    const extLogin = (token?: string) => postJson(running.base, '/v1/extLogin', { ...loginBody('alice', USERS.alice, ['hr']), dfUuid, ...(token === undefined ? {} : { '2faToken': token }) });

    expectRejected(await extLogin(), '341', 401, NEED_CODE);
    expectRejected(await extLogin(wrongCode(totpAt(key, clock.now()))), '342', 401, WRONG_CODE);
    const linked = await extLogin(totpAt(key, clock.now()));
    expect(linked.body.status).toEqual(OK);
    expect(linked.body.data.user.Name).toBe('alice');

    const again = await finish(await authorize(running.base, 'google', 'appkey=test-app&appNames=hr'));
    expect(again.body.status).toEqual(OK);
    expect(again.body.data).toMatchObject({ sessionId: expect.any(String), user: { Name: 'alice' } });
  });
});
