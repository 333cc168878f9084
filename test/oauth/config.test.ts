/** External-login configuration: start-up errors that say what is wrong, and api-config.yml wiring. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTextFile } from '../../adapters/node.js';
import { loadConfig } from '../../adapters/node-config.js';
import { createService, type ProviderEndpoints, type SeedObject, type Service, type ServiceOptions } from '../../src/index.js';
import { call, demoData } from '../helpers.js';
import { appleKey, appleKeyFile } from './provider.js';

const ENDPOINTS = { authorization: 'https://id.example.com/auth', token: 'https://id.example.com/token', jwks: 'https://id.example.com/jwks', issuer: 'https://id.example.com' };
const google = (name = 'Google', data: unknown = { clientId: 'g-id', clientSecret: 'g-secret' }): SeedObject => ({
  '~ClassName': 'OAuthProvider',
  name,
  type: 'google',
  additionalData: typeof data === 'string' ? data : JSON.stringify(data),
});
const apple = (data: Record<string, unknown>): SeedObject => ({
  '~ClassName': 'OAuthProvider',
  name: 'Apple',
  type: 'apple',
  additionalData: { clientId: 'com.example.web', serverAddress: 'https://odbrest.example', teamId: 'TEAM', keyIdentifier: 'KEY', ...data },
});

function service(entries: SeedObject[], names: string[], options: ServiceOptions = {}) {
  return createService({
    users: { passwordIterations: 1000 },
    data: { objects: [...demoData().objects, ...entries] },
    onError: () => undefined,
    ...options,
    externalLogin: { providers: names.map((name) => ({ name })), publicUrl: 'https://odbrest.example', ...options.externalLogin },
  });
}

/** An AuthKey_KEY.p8 file holding `content`, by default a fresh ES256 key. */
const keyFile = async (content?: string) => appleKeyFile('KEY', content ?? (await appleKey()).pem);

describe('start-up errors', () => {
  it('two configured names of one type', async () => {
    const started = service([google('Google'), google('Google2')], ['Google', 'Google2']);
    await expect(started.ready).rejects.toThrow('externalLogin.providers: "Google" and "Google2" are both of type google; one configuration per type is allowed');
  });

  it('two configured names of type github (any number of oidc providers is fine: test/oauth/oidc.test.ts)', async () => {
    const github = (name: string): SeedObject => ({ ...google(name), type: 'github' });
    const started = service([github('GitHub'), github('GitHub2')], ['GitHub', 'GitHub2']);
    await expect(started.ready).rejects.toThrow('externalLogin.providers: "GitHub" and "GitHub2" are both of type github; one configuration per type is allowed');
  });

  it('an oidc issuer that is not https, or whose discovery document cannot be read', async () => {
    const oidc = (issuer: string): SeedObject => ({ ...google('Keycloak'), type: 'oidc', additionalData: { issuer, clientId: 'c' } });
    await expect(service([oidc('http://idp.example')], ['Keycloak']).ready).rejects.toThrow(
      'OAuth provider "Keycloak": additionalData: issuer must be an https URL (plain http only on localhost)',
    );
    await expect(service([oidc('http://127.0.0.1:1')], ['Keycloak']).ready).rejects.toThrow(
      'OAuth provider "Keycloak": the discovery document of issuer http://127.0.0.1:1/ (http://127.0.0.1:1/.well-known/openid-configuration) was not accepted: it could not be reached',
    );
  });

  it('an unknown type', async () => {
    const started = service([{ ...google('Yahoo'), type: 'yahoo' }], ['Yahoo']);
    await expect(started.ready).rejects.toThrow('OAuth provider "Yahoo": type "yahoo" is not one of google, facebook, microsoft, apple, github, oidc');
  });

  it('missing credentials', async () => {
    const started = service([google('Google', { clientId: 'g-id' })], ['Google']);
    await expect(started.ready).rejects.toThrow('OAuth provider "Google": additionalData: clientSecret is required');
  });

  it('additionalData that is not JSON', async () => {
    const started = service([google('Google', '{clientId:')], ['Google']);
    await expect(started.ready).rejects.toThrow('OAuth provider "Google": additionalData is not valid JSON');
  });

  it('a configured name without a provider entry', async () => {
    const started = service([], ['Google']);
    await expect(started.ready).rejects.toThrow('OAuth provider "Google": no OAuthProvider object with this name in the database');
  });

  it('an Apple key file that cannot be read', async () => {
    const started = service([apple({ keyPath: '/nonexistent/AuthKey_KEY.p8' })], ['Apple'], { externalLogin: { readFile: readTextFile } });
    await expect(started.ready).rejects.toThrow('OAuth provider "Apple": additionalData.keyPath "/nonexistent/AuthKey_KEY.p8" cannot be read (ENOENT)');
  });

  it('an Apple key file that holds no ES256 key', async () => {
    const started = service([apple({ keyPath: await keyFile('not a key') })], ['Apple'], { externalLogin: { readFile: readTextFile } });
    await expect(started.ready).rejects.toThrow('OAuth provider "Apple": the Apple key is not an ES256 private key in PKCS#8 PEM form (an AuthKey_*.p8 file)');
  });

  it('an Apple keyPath without a readFile option', async () => {
    const started = service([apple({ keyPath: await keyFile() })], ['Apple']);
    await expect(started.ready).rejects.toThrow('OAuth provider "Apple": additionalData.keyPath cannot be read: the service was created without a readFile option');
  });

  it('an Apple serverAddress that is not https', async () => {
    const started = service([apple({ keyPath: await keyFile(), serverAddress: 'http://odbrest.example' })], ['Apple'], { externalLogin: { readFile: readTextFile } });
    await expect(started.ready).rejects.toThrow('OAuth provider "Apple": additionalData: serverAddress must be an https URL (plain http only on localhost)');
  });

  it('missing publicUrl', async () => {
    const started = service([google()], ['Google'], { externalLogin: { publicUrl: undefined } });
    await expect(started.ready).rejects.toThrow('externalLogin.publicUrl (the external https address of the service) is required when externalLogin.providers are configured');
  });

  it('a publicUrl that is not https', async () => {
    const started = service([google()], ['Google'], { externalLogin: { publicUrl: 'http://odbrest.example' } });
    await expect(started.ready).rejects.toThrow('externalLogin.publicUrl must be an https URL (plain http only on localhost)');
  });

  it('an endpoint override that is not https', async () => {
    const started = service([google('Google', { clientId: 'g', clientSecret: 's', endpoints: { token: 'http://id.example.com/token' } })], ['Google']);
    await expect(started.ready).rejects.toThrow('OAuth provider "Google": additionalData: endpoints.token must be an https URL (plain http only on localhost)');
  });

  it('an endpoint override option that is not https names the option', async () => {
    const started = service([google()], [], { externalLogin: { providers: [{ name: 'Google', endpoints: { token: 'http://id.example.com/token' } }] } });
    await expect(started.ready).rejects.toThrow('OAuth provider "Google": externalLogin.providers[].endpoints.token must be an https URL (plain http only on localhost)');
  });

  it('an endpoint override option naming an unknown endpoint', async () => {
    const endpoints = { ...ENDPOINTS, logout: 'https://id.example.com/logout' } as ProviderEndpoints;
    const started = service([google()], [], { externalLogin: { providers: [{ name: 'Google', endpoints }] } });
    await expect(started.ready).rejects.toThrow('OAuth provider "Google": externalLogin.providers[].endpoints may only name authorization, token, jwks, issuer, userinfo');
  });

  it('an endpoint override option given as JSON text', async () => {
    const endpoints = JSON.stringify(ENDPOINTS) as unknown as ProviderEndpoints;
    const started = service([google()], [], { externalLogin: { providers: [{ name: 'Google', endpoints }] } });
    await expect(started.ready).rejects.toThrow('OAuth provider "Google": externalLogin.providers[].endpoints must be an object');
  });

  it('an endpoint name that does not exist, in additionalData', async () => {
    const started = service([google('Google', { clientId: 'g', clientSecret: 's', endpoints: { logout: 'https://id.example.com/logout' } })], ['Google']);
    await expect(started.ready).rejects.toThrow('OAuth provider "Google": additionalData: endpoints may only name authorization, token, jwks, issuer, userinfo');
  });

  it('one provider configured twice', async () => {
    const started = service([google()], ['Google', 'Google']);
    await expect(started.ready).rejects.toThrow('externalLogin.providers names "Google" twice (names are compared in lower case)');
  });

  it('a defaultUser that is not a database user', async () => {
    const started = service([{ ...google(), defaultUser: 'nobody' }], ['Google']);
    await expect(started.ready).rejects.toThrow('OAuth provider "Google": defaultUser "nobody" is not a database user');
  });

  it('a name with characters a path segment cannot carry', async () => {
    const started = service([google('Goo gle')], ['Goo gle']);
    await expect(started.ready).rejects.toThrow('OAuth provider "Goo gle": a name of 1 to 64 letters, digits, "_", "." or "-" is required');
  });

  it('several provider entries with one name', async () => {
    const started = service([google(), google()], ['Google']);
    await expect(started.ready).rejects.toThrow('OAuth provider "Google": several OAuthProvider objects have this name');
  });

  it('a defaultUser that is not a string', async () => {
    const started = service([{ ...google(), defaultUser: 7 }], ['Google']);
    await expect(started.ready).rejects.toThrow('OAuth provider "Google": defaultUser must be a user name');
  });

  it('an Apple entry with neither keyPath nor privateKey', async () => {
    const started = service([apple({})], ['Apple']);
    await expect(started.ready).rejects.toThrow('OAuth provider "Apple": additionalData: keyPath (or privateKey) is required');
  });

  it('a name that would shadow a route', async () => {
    const started = service([google('df')], ['df']);
    await expect(started.ready).rejects.toThrow('OAuth provider "df": the name is reserved');
  });

  it('a misconfigured service answers requests with a 500 envelope and logs the reason once', async () => {
    const logged: unknown[] = [];
    const started = service([google('Google', { clientId: 'g-id' })], ['Google'], { onError: (error) => logged.push(error) });
    await started.ready.catch(() => undefined);
    const answer = await call(started, 'GET', '/v1/auth/google');
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({
      status: { internalStatus: '500', statusMessage: 'the service failed to start (configuration or seed data); see the server log' },
      data: {},
    });
    expect(logged.map((error) => (error as Error).message)).toEqual(['OAuth provider "Google": additionalData: clientSecret is required']);
  });
});

/** Waits for the service, starts a login at `path` and returns where its 302 sends the browser. */
async function redirectOf(started: Service, path = '/v1/auth/google'): Promise<URL> {
  await started.ready;
  const answer = await call(started, 'GET', path);
  expect(answer.status).toBe(302);
  return new URL(answer.headers.get('location')!);
}

describe('valid configurations', () => {
  it('an Apple key given inline as privateKey, endpoint overrides in the options', async () => {
    const { pem: privateKey } = await appleKey();
    const started = service([apple({ privateKey, clientId: ['com.example.web', 'com.example.app'] })], ['Apple'], {
      externalLogin: { providers: [{ name: 'Apple', endpoints: ENDPOINTS }], publicUrl: 'https://odbrest.example' },
    });
    const location = await redirectOf(started, '/v1/auth/apple');
    expect(location.origin + location.pathname).toBe(ENDPOINTS.authorization);
    expect(location.searchParams.get('client_id')).toBe('com.example.web');
    expect(location.searchParams.get('redirect_uri')).toBe('https://odbrest.example/v1/apple/callback');
  });

  it("Apple's callback address is its serverAddress; the other providers' is publicUrl", async () => {
    const { pem: privateKey } = await appleKey();
    const started = service([apple({ privateKey, serverAddress: 'https://apple-return.example' }), google()], ['Apple', 'Google']);
    const location = await redirectOf(started, '/v1/auth/apple');
    expect(location.searchParams.get('redirect_uri')).toBe('https://apple-return.example/v1/apple/callback');
    expect((await redirectOf(started)).searchParams.get('redirect_uri')).toBe('https://odbrest.example/v1/google/callback');
  });

  it('the callback address includes base path (in publicUrl) and alias', async () => {
    const started = service([google()], ['Google'], { externalLogin: { publicUrl: 'https://odbrest.example/api/' }, mount: { alias: 'db1', basePath: '/api' } });
    const location = await redirectOf(started, 'http://odbrest.test/api/db1/v1/auth/google');
    expect(location.searchParams.get('redirect_uri')).toBe('https://odbrest.example/api/db1/v1/google/callback');
  });

  it('credentials only in the internal _additionalData field', async () => {
    const entry: SeedObject = { '~ClassName': 'OAuthProvider', name: 'Google', type: 'google', _additionalData: { clientId: 'inner-id', clientSecret: 'inner-secret' } };
    expect((await redirectOf(service([entry], ['Google']))).searchParams.get('client_id')).toBe('inner-id');
  });

  it('_additionalData is read before additionalData', async () => {
    const entry: SeedObject = { ...google('Google', { clientId: 'outer-id' }), _additionalData: JSON.stringify({ clientId: 'inner-id', clientSecret: 'inner-secret' }) };
    expect((await redirectOf(service([entry], ['Google']))).searchParams.get('client_id')).toBe('inner-id');
  });

  it('plain http is accepted on localhost and [::1]', async () => {
    const endpoints = { authorization: 'http://[::1]:9/auth', token: 'http://localhost:9/token', jwks: 'http://[::1]:9/jwks' };
    const started = service([google('Google', { clientId: 'g-id', clientSecret: 'g-secret', endpoints })], ['Google'], { externalLogin: { publicUrl: 'http://localhost:3000' } });
    const location = await redirectOf(started);
    expect(location.origin + location.pathname).toBe(endpoints.authorization);
    expect(location.searchParams.get('redirect_uri')).toBe('http://localhost:3000/v1/google/callback');
  });

  it('no providers configured: every provider is 321', async () => {
    const started = service([google()], [], { externalLogin: { publicUrl: undefined } });
    await started.ready;
    const answer = await call(started, 'GET', '/v1/auth/google');
    expect(answer.body).toEqual({ status: { internalStatus: '321', statusMessage: 'unknown or unconfigured external provider "google"' }, data: {} });
  });

  it('api-config.yml: oAuthProviders and publicUrl reach the options, key paths resolve from the config folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'odbrest-config-'));
    writeFileSync(join(dir, 'AuthKey_KEY.p8'), 'key text');
    writeFileSync(
      join(dir, 'api-config.yml'),
      'externalLogin:\n  publicUrl: https://api.example.com\n  providers:\n    - name: Google\n    - name: Apple\n      endpoints:\n        token: https://id.example.com/token\n',
    );
    const { options } = loadConfig({ ODBREST_CONFIG: join(dir, 'api-config.yml') }, dir);
    expect(options.externalLogin?.publicUrl).toBe('https://api.example.com');
    expect(options.externalLogin?.providers).toEqual([{ name: 'Google' }, { name: 'Apple', endpoints: { token: 'https://id.example.com/token' } }]);
    expect(await options.externalLogin?.readFile!('AuthKey_KEY.p8')).toBe('key text');
  });
});
