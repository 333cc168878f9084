/** GitHub login (PROTOCOL.md 5.1) over HTTP against a local server of the GitHub API's shape (test/oauth/provider-process.mjs). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USERS, loginBody } from '../helpers.js';
import { documentedEntries, authorize, expectRejected, finish, identityLinks, loginData, postJson, spawnProviders, startService, type LocalProvider, type ProviderProcess, type RunningService } from './provider.js';

let idp: ProviderProcess;
let github: LocalProvider;
let running: RunningService;

beforeAll(async () => {
  ({ idp, providers: { github } } = await spawnProviders('github'));
  // the entry docs/external-login.md prints, with the local server's client and endpoints
  const [entry] = documentedEntries('GitHub');
  expect(entry).toMatchObject({ name: 'GitHub', type: 'github', additionalData: { clientId: expect.any(String), clientSecret: expect.any(String) } });
  running = await startService([{ provider: github, name: entry!.name as string }]);
});

afterAll(async () => {
  await running?.close();
  idp?.close();
});

const links = (subject: string) => identityLinks(running.service, { provider: 'github', subject });

describe('github', () => {
  it('links the numeric account id with the verified primary e-mail and the name split at its last space, then logs in at once', async () => {
    await idp.user(github, {
      sub: '583231',
      name: 'Ada King Lovelace',
      emails: [
        { email: 'ada@old.example', primary: false, verified: true },
        { email: 'ada@example.com', primary: true, verified: true },
      ],
    });
    const first = await finish(await authorize(running.base, 'github'));
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ dfUuid: expect.any(String) });
    const sent = (await idp.stats(github)).authorizations.at(-1)!;
    expect(sent).toMatchObject({ scope: 'read:user user:email', code_challenge_method: 'S256', redirect_uri: `${running.base}/v1/github/callback` });
    expect(sent.nonce).toBeUndefined(); // OAuth 2.0, no ID token

    const linked = await postJson(running.base, '/v1/extLogin', { ...loginBody('alice', USERS.alice, ['crm']), dfUuid: first.body.data.dfUuid });
    expect(linked.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: await loginData(running.base, 'alice', ['crm']) });
    expect(await links('583231')).toEqual([
      { provider: 'github', type: 'github', subject: '583231', user: { $ref: 'USR00001' }, name: 'Ada King', surname: 'Lovelace', email: 'ada@example.com' },
    ]);

    const later = await finish(await authorize(running.base, 'github', 'appkey=test-app&appNames=crm'));
    expect(later.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: await loginData(running.base, 'alice', ['crm']) });
  });

  it('keeps no e-mail when the primary address is unverified, and a one-word name as the name', async () => {
    await idp.user(github, {
      sub: '77',
      name: 'Grace',
      emails: [
        { email: 'grace@example.com', primary: true, verified: false },
        { email: 'grace@verified.example', primary: false, verified: true },
      ],
    });
    const first = await finish(await authorize(running.base, 'github'));
    await postJson(running.base, '/v1/extLogin', { ...loginBody('bob', USERS.bob, ['crm']), dfUuid: first.body.data.dfUuid });
    expect(await links('77')).toEqual([{ provider: 'github', type: 'github', subject: '77', user: { $ref: 'USR00002' }, name: 'Grace', surname: null, email: null }]);
  });

  it('answers 323 when GET /user names no numeric id or the API fails', async () => {
    await idp.user(github, { sub: 'octocat' });
    expectRejected(await finish(await authorize(running.base, 'github')), '323', 502, 'github answered GET /user without a numeric id');
    await idp.user(github, { sub: '78' });
    const step = await authorize(running.base, 'github');
    await idp.next(github, { userinfoStatus: 500 });
    expectRejected(await finish(step), '323', 502, 'github answered HTTP 500 to GET /user');
  });

  it('answers 323 when the token endpoint answers 200 with an error member, as GitHub does for a bad code', async () => {
    await idp.user(github, { sub: '79' });
    const step = await authorize(running.base, 'github');
    await idp.next(github, { tokenError: 'bad_verification_code' });
    expectRejected(await finish(step), '323', 502, 'GitHub refused the code exchange: bad_verification_code');
  });
});
