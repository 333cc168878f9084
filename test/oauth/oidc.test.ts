/**
 * The `oidc` type (PROTOCOL.md 5.1) against a certified OpenID provider run by the test
 * (oidc-provider under Node 24, test/oauth/oidc-provider-process.mjs): the whole code flow over
 * HTTP with its login and consent pages filled in by fetch, key rotation, and the ID-token refusals;
 * then `odbrest serve` on the two blocks of docs/external-login.md (the entries as its data file, the
 * yaml as its configuration) through a whole code flow that ends in a session.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serve } from '../../adapters/node.js';
import type { Service } from '../../src/index.js';
import { nodeBinary } from '../../scripts/node24.mjs';
import { USERS, demoData, demoService, loginBody } from '../helpers.js';
import { freePort, spawnLines, type LineProcess } from '../support/processes.js';
import { readme, readmeBlocks, root } from '../support/readme.js';
import { documentedEntries, expectRejected, finish, getJson, identityLinks, loginData, postJson, ProviderProcess, type CallbackStep } from './provider.js';

let idp: ProviderProcess;
let issuer: string;
let base: string;
let service: Service;
let server: Awaited<ReturnType<typeof serve>>;
/** Where `odbrest serve` listens (its port chosen first: the provider's clients name its callbacks). */
let served: string;

/** The two entries docs/external-login.md prints, their issuer replaced by the local provider's. */
const documented = documentedEntries('Any OpenID Connect provider');

beforeAll(async () => {
  idp = await ProviderProcess.spawn(new URL('./oidc-provider-process.mjs', import.meta.url), nodeBinary(24));
  server = await serve({ fetch: (request, context) => service.fetch(request, context) } as Service, { port: 0, hostname: '127.0.0.1' });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  served = `http://127.0.0.1:${await freePort()}`;
  ({ issuer } = await idp.call<{ issuer: string }>('start', {
    clients: [
      { client_id: 'odbrest', client_secret: 's3cr3t', redirect_uris: [`${base}/v1/keycloak/callback`, `${served}/v1/keycloak/callback`] },
      { client_id: 'odbrest-public', token_endpoint_auth_method: 'none', redirect_uris: [`${base}/v1/authentik/callback`, `${served}/v1/authentik/callback`] },
    ],
  }));
  service = await demoService({
    data: {
      objects: [
        ...demoData().objects,
        ...documented.map((entry) => ({ ...entry, additionalData: { ...entry.additionalData, issuer } })), // Keycloak, and Authentik: a public client
      ],
    },
    externalLogin: { publicUrl: base, providers: [{ name: 'Keycloak' }, { name: 'Authentik' }] },
  });
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  idp?.close();
});

/** A browser: follows redirects with cookies, signs in as `login` on the provider's page and consents, until the provider sends it back to odbrest. */
async function browse(name: string, login: string, query = 'appkey=test-app', from = base): Promise<CallbackStep> {
  const cookies = new Map<string, string>();
  let request: { url: string; init?: RequestInit } = { url: `${from}/v1/auth/${name}?${query}` };
  for (let hop = 0; hop < 12; hop++) {
    const headers = new Headers(request.init?.headers);
    if (request.url.startsWith(issuer) && cookies.size) headers.set('cookie', [...cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await fetch(request.url, { ...request.init, headers, redirect: 'manual' });
    if (request.url.startsWith(issuer)) for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const at = pair!.indexOf('=');
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    const location = response.headers.get('location');
    if (location) {
      const next = new URL(location, request.url).href;
      if (next.startsWith(from)) return { method: 'GET', url: next };
      request = { url: next };
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`provider page ${response.status} without a form: ${html.slice(0, 300)}`);
    const form = new URLSearchParams({ prompt: /name="prompt" value="login"/.test(html) ? 'login' : 'consent', login, password: 'any' });
    request = { url: new URL(action, request.url).href, init: { method: 'POST', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } } };
  }
  throw new Error('too many hops');
}

const links = (provider: string, subject: string) => identityLinks(service, { provider, subject });
const account = (login: string, claims: Record<string, unknown>) => idp.call('account', { login, claims });
const stats = () => idp.call<{ jwksRequests: number; tokenRequests: number; authorizations: Array<Record<string, string>> }>('stats');

describe('oidc', () => {
  it('runs the whole code flow: discovery, login and consent at the provider, dfUuid, /v1/extLogin, then a session at once', async () => {
    await account('ada', { given_name: 'Ada', family_name: 'Lovelace', email: 'ada@example.com', email_verified: true });
    const first = await finish(await browse('keycloak', 'ada'));
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ dfUuid: expect.any(String) });
    const sent = (await stats()).authorizations.at(-1)!;
    expect(sent).toMatchObject({ client_id: 'odbrest', scope: 'openid email profile', code_challenge_method: 'S256', redirect_uri: `${base}/v1/keycloak/callback` });
    expect(sent.nonce).toMatch(/^[\w-]{40,}$/);

    const linked = await postJson(base, '/v1/extLogin', { ...loginBody('alice', USERS.alice, ['crm']), dfUuid: first.body.data.dfUuid });
    expect(linked.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: await loginData(base, 'alice', ['crm']) });
    expect(await links('keycloak', 'ada')).toEqual([
      { provider: 'keycloak', type: 'oidc', subject: 'ada', user: { $ref: 'USR00001' }, name: 'Ada', surname: 'Lovelace', email: 'ada@example.com' },
    ]);
    const later = await finish(await browse('keycloak', 'ada', 'appkey=test-app&appNames=crm'));
    expect(later.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: await loginData(base, 'alice', ['crm']) });
  });

  it('serves a second oidc provider under its own name, a public client, and keeps an unverified e-mail out', async () => {
    await account('grace', { given_name: 'Grace', family_name: 'Hopper', email: 'grace@example.com', email_verified: false });
    const first = await finish(await browse('authentik', 'grace'));
    await postJson(base, '/v1/extLogin', { ...loginBody('bob', USERS.bob, ['crm']), dfUuid: first.body.data.dfUuid });
    expect(await links('authentik', 'grace')).toEqual([
      { provider: 'authentik', type: 'oidc', subject: 'grace', user: { $ref: 'USR00002' }, name: 'Grace', surname: 'Hopper', email: null },
    ]);
  });

  it('fetches the JWKS again for a token signed by a new key, at most once a minute', async () => {
    await account('rot', { email_verified: false });
    await finish(await browse('keycloak', 'rot')); // the keys are cached now
    const before = (await stats()).jwksRequests;
    await idp.call('rotate');
    // within the minute after the last fetch an unknown kid is refused without asking again
    expectRejected(await finish(await browse('keycloak', 'rot')), '322', 400, /no applicable keys found/);
    expect((await stats()).jwksRequests).toBe(before);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 });
    try {
      const rotated = await finish(await browse('keycloak', 'rot'));
      expect(rotated.body.data).toEqual({ dfUuid: expect.any(String) });
      expect((await stats()).jwksRequests).toBe(before + 1);
    } finally {
      vi.useRealTimers();
    }
  });

  it.each([
    ['a wrong issuer', { claims: { iss: 'https://evil.example' } }, /unexpected JWT "iss"/],
    ['a wrong audience', { claims: { aud: 'someone-else' } }, /unexpected JWT "aud"/],
    ['a wrong nonce', { claims: { nonce: 'not-the-one-sent' } }, /unexpected ID Token "nonce"/],
    ['an expired token', { claims: { exp: Math.floor(Date.now() / 1000) - 600, iat: Math.floor(Date.now() / 1000) - 1200 } }, /"exp"/],
    ['alg none', { algNone: true }, /alg/],
  ])('refuses %s (322)', async (_title, next, message) => {
    await account('mallory', { email_verified: false });
    const step = await browse('keycloak', 'mallory');
    await idp.call('next', next);
    expectRejected(await finish(step), '322', 400, message);
  });
});

describe('odbrest serve on the oidc blocks of docs/external-login.md', () => {
  let odbrest: LineProcess;

  beforeAll(async () => {
    const file = 'docs/external-login.md';
    const yaml = readmeBlocks(readme(file), file).find((block) => block.section === 'Any OpenID Connect provider' && block.language === 'yaml')!;
    expect(yaml.code).toContain('publicUrl: https://api.example.com');
    const dir = mkdtempSync(join(tmpdir(), 'odbrest-oidc-serve-'));
    writeFileSync(join(dir, 'api-config.yml'), `${yaml.code.replace('https://api.example.com', served)}dataFile: ./data.json\n`);
    const entries = documented.map((entry) => ({ ...entry, additionalData: { ...entry.additionalData, issuer } }));
    writeFileSync(join(dir, 'data.json'), JSON.stringify({ objects: [...demoData().objects, ...entries] }));
    odbrest = spawnLines(process.execPath, [join(root, 'dist/cli.js'), 'serve', '--port', new URL(served).port, '--host', '127.0.0.1'], {}, { cwd: dir });
    await odbrest.waitFor((line) => line.startsWith('odbrest listening on '), 60_000);
  }, 90_000);
  afterAll(() => odbrest?.stop());

  it('runs a whole code flow: the identity linked by a password login, then a session from the provider alone', async () => {
    await account('lin', { given_name: 'Lin', email_verified: false });
    const first = await finish(await browse('keycloak', 'lin', 'appkey=test-app', served));
    expect(first.body.data).toEqual({ dfUuid: expect.any(String) });
    const linked = await postJson(served, '/v1/extLogin', { ...loginBody('alice', USERS.alice, ['crm']), dfUuid: first.body.data.dfUuid });
    expect(linked.body.status.internalStatus).toBe('0');
    const later = await finish(await browse('keycloak', 'lin', 'appkey=test-app&appNames=crm', served));
    expect(later.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: await loginData(served, 'alice', ['crm']) });
    const session = await getJson(served, '/v1/object/CUS00001', { sessionId: later.body.data.sessionId });
    expect([session.status, session.body.data.Name]).toEqual([200, 'Ben Bauer']);
  });
});
