/**
 * The typed client's external login: odbrest over real HTTP with a local OpenID provider (the
 * provider process of test/oauth). `fetch` following redirects plays the browser.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient, OdbRestError, type LoginCredentials, type OdbRestClient } from '../../src/client/index.js';
import { APP_KEY, USERS } from '../helpers.js';
import { CLIENT_IMPORT, codeBlocks, printedComments, readmeSection, runCodeBlock } from '../support/readme.js';
import { spawnProviders, startService, type LocalProvider, type ProviderProcess, type RunningService } from '../oauth/provider.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const alice: LoginCredentials = { user: 'alice', password: USERS.alice, appNames: ['crm'] };

let idp: ProviderProcess;
let google: LocalProvider;
let running: RunningService;

beforeAll(async () => {
  const spawned = await spawnProviders('google');
  idp = spawned.idp;
  google = spawned.providers.google;
  running = await startService([{ provider: google, name: 'Google' }]);
});

afterAll(async () => {
  await running?.close();
  idp?.close();
});

const newClient = (): OdbRestClient => createClient({ baseUrl: running.base, appKey: APP_KEY });

/** The browser's way through the provider to the callback, which answers the envelope. */
const signIn = (client: OdbRestClient, provider = 'Google') => fetch(client.externalLoginUrl(provider, { appNames: ['crm'] }));

/** The provider's redirect to the callback, not followed (to tamper with it). */
async function callbackAddress(client: OdbRestClient): Promise<URL> {
  const start = await fetch(client.externalLoginUrl('Google'), { redirect: 'manual' });
  const page = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  return new URL(page.headers.get('location')!);
}

test('externalLoginUrl: the start address with the app key and the applications, the name in lower case', () => {
  const client = createClient({ baseUrl: 'https://api.example.com/base/', appKey: 'my key', alias: 'db1' });
  expect(client.externalLoginUrl('Google', { appNames: ['crm', 'shop'] })).toBe('https://api.example.com/base/db1/v1/auth/google?appkey=my+key&appNames=crm&appNames=shop');
  expect(client.externalLoginUrl('MyIdP', { appNames: 'crm' })).toBe('https://api.example.com/base/db1/v1/auth/myidp?appkey=my+key&appNames=crm');
  expect(client.externalLoginUrl('Google')).toBe('https://api.example.com/base/db1/v1/auth/google?appkey=my+key');
});

describe('a new identity, then the same identity again', () => {
  test('dfUuid, linked with the database user\'s credentials; later a session straight away', async () => {
    await idp.user(google, { sub: 'client-subject-1', email: 'alice@example.com' });
    const client = newClient();
    const first = await client.completeExternalLogin(await signIn(client));
    expect(first).toEqual({ kind: 'unlinked', dfUuid: expect.stringMatching(UUID) });
    expect(client.sessionKind).toBeUndefined();

    const linked = await client.linkExternalLogin((first as { dfUuid: string }).dfUuid, alice);
    expect(linked).toMatchObject({ user: { Name: 'alice' }, sessionId: expect.any(String) });
    expect(client.credential).toEqual({ sessionId: linked.sessionId });
    expect(await client.getObject('USR00001')).toMatchObject({ Name: 'alice' });

    const again = newClient();
    const second = await again.completeExternalLogin(await signIn(again));
    expect(second).toEqual({ kind: 'session', login: expect.objectContaining({ user: expect.objectContaining({ Name: 'alice' }) }) });
    const login = (second as { login: { sessionId: string } }).login;
    expect([again.sessionKind, again.credential]).toEqual(['session', { sessionId: login.sessionId }]);
    expect(await again.getObject('USR00001')).toMatchObject({ Name: 'alice' });

    // the page's text, as an app reads it from a window on the service's origin
    const fromText = newClient();
    const third = await fromText.completeExternalLogin(await (await signIn(fromText)).text());
    expect(third.kind).toBe('session');
    expect(await fromText.checkSession()).toBe(true);
  });

  test('a wrong password leaves the dfUuid usable; once linked it is used up (320)', async () => {
    await idp.user(google, { sub: 'client-subject-2' });
    const client = newClient();
    const { dfUuid } = (await client.completeExternalLogin(await signIn(client))) as { dfUuid: string };
    await expect(client.linkExternalLogin(dfUuid, { ...alice, password: 'wrong' })).rejects.toMatchObject({ internalStatus: '302', httpStatus: 401 });
    expect(client.sessionKind).toBeUndefined();
    await client.linkExternalLogin(dfUuid, alice);
    const error = await newClient().linkExternalLogin(dfUuid, alice).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OdbRestError);
    expect(error).toMatchObject({ internalStatus: '320', httpStatus: 400 });
  });
});

describe('refused callbacks are OdbRestError with their code', () => {
  test('a callback whose state was changed: 322, from the answer or from its text', async () => {
    await idp.user(google, { sub: 'client-subject-3' });
    const client = newClient();
    const callback = await callbackAddress(client);
    callback.searchParams.set('state', 'x'.repeat(43));
    await expect(client.completeExternalLogin(await fetch(callback))).rejects.toMatchObject({ internalStatus: '322', httpStatus: 400 });
    await expect(client.completeExternalLogin(await (await fetch(callback)).text())).rejects.toMatchObject({ internalStatus: '322', httpStatus: 400 });
    expect(client.sessionKind).toBeUndefined();
  });

  test('an unknown provider: 321', async () => {
    const client = newClient();
    await expect(client.completeExternalLogin(await signIn(client, 'Nope'))).rejects.toMatchObject({ internalStatus: '321', httpStatus: 404 });
  });

  test('an answer that is no envelope, or holds neither a session nor a dfUuid: OdbRestProtocolError', async () => {
    const client = newClient();
    await expect(client.completeExternalLogin('<html>signed in</html>')).rejects.toMatchObject({ name: 'OdbRestProtocolError' });
    await expect(client.completeExternalLogin('{"status":{"internalStatus":"0","statusMessage":"ok"},"data":{}}')).rejects.toMatchObject({
      name: 'OdbRestProtocolError',
      message: 'the external login answer holds neither a sessionId nor a dfUuid',
    });
  });
});

test("the README's external login example prints what it says, for a new identity and again once linked", async () => {
  const [code] = codeBlocks(readmeSection('External login'), 'ts');
  expect(printedComments(code!)).toEqual(['alice']);
  await idp.user(google, { sub: 'readme-subject' });
  for (let run = 0; run < 2; run++) expect(await runCodeBlock(code!, { replace: { ...CLIENT_IMPORT, 'http://127.0.0.1:8080': running.base } })).toEqual(['alice']);
});
