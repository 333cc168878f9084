/**
 * Passkeys (PROTOCOL.md 2.8), the whole ceremony in Chromium with a virtual authenticator (the
 * DevTools protocol's WebAuthn domain, through playwright-core): a page on http://localhost (a secure
 * context) uses @simplewebauthn/browser to register a passkey for a logged-in user, logs out, logs in
 * with the passkey and reads an object. Responses replayed, for another challenge, from another origin
 * or for another RP ID are refused and change nothing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createNodeHandler } from '../../adapters/node.js';
import { MemoryKeyValueStore, MemoryObjectStore, type Service } from '../../src/index.js';
import { call, demoData, demoService, expectError, login } from '../helpers.js';
import { browserAvailable, closeChromium, closeServer, launchChromium } from '../support/browser.js';

const hasBrowser = browserAvailable('the browser passkey tests');

const PAGE = `<!doctype html><meta charset="utf-8"><title>odbrest passkeys</title><script type="module" src="/app.js"></script>`;
/** The page's script: @simplewebauthn/browser and the calls of the ceremony, each answering the envelope. */
const APP = `
import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
const post = async (path, body, sessionId) => {
  const headers = { appkey: 'browser', 'content-type': 'application/json' };
  if (sessionId) headers.sessionId = sessionId;
  const response = await fetch(path, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return response.json();
};
window.registrationResponse = async (sessionId) => {
  const options = await post('/v1/passkey/register/options', undefined, sessionId);
  return startRegistration({ optionsJSON: options.data });
};
window.register = async (sessionId, response) => post('/v1/passkey/register', { response, name: 'virtual key' }, sessionId);
window.assertion = async () => {
  const options = await post('/v1/passkey/login/options', {});
  return startAuthentication({ optionsJSON: options.data });
};
window.passkeyLogin = (response) => post('/v1/passkey/login', { response, appNames: ['crm'] });
window.ready = true;
`;

const store = new MemoryObjectStore();
const kv = new MemoryKeyValueStore();
let service: Service;
let server: Server;
let origin: string;
let context: BrowserContext | undefined;
let page: Page;
let userDataDir: string;

type PageApi = {
  registrationResponse(sessionId: string): Promise<any>;
  register(sessionId: string, response: unknown): Promise<any>;
  assertion(): Promise<any>;
  passkeyLogin(response: unknown): Promise<any>;
};
const inPage = <K extends keyof PageApi>(name: K, ...args: Parameters<PageApi[K]>): ReturnType<PageApi[K]> =>
  page.evaluate(([fn, params]) => (window as unknown as Record<string, (...a: unknown[]) => unknown>)[fn as string]!(...(params as unknown[])), [name, args] as const) as ReturnType<PageApi[K]>;

/** Another instance on the same stores, configured with other origins or another RP ID. */
const instance = (passkeys: { rpID: string; origins: string[] }) => demoService({ store, kv, data: undefined, passkeys: { rpName: 'odbrest test', ...passkeys } });

beforeAll(async () => {
  if (!hasBrowser) return;
  const bundled = await build({
    stdin: { contents: APP, resolveDir: join(import.meta.dirname, '../..'), loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
  });
  const script = bundled.outputFiles[0]!.text;
  let api: ((req: any, res: any) => void) | undefined;
  server = createServer((req, res) => {
    if (req.url === '/' || req.url === '/app.js') {
      res.writeHead(200, { 'content-type': req.url === '/' ? 'text/html' : 'text/javascript' });
      return void res.end(req.url === '/' ? PAGE : script);
    }
    api!(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  service = await demoService({ store, kv, data: demoData(), passkeys: { rpID: 'localhost', rpName: 'odbrest test', origins: [origin] } });
  api = createNodeHandler(service);
  ({ context, userDataDir } = await launchChromium());
  page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
}, 120_000);

afterAll(async () => {
  await closeServer(server);
  await closeChromium(context, userDataDir);
});

const passkeysOf = async (sessionId: string) => (await call(service, 'GET', '/v1/passkeys', { headers: { sessionId } })).body.data;

test.skipIf(!hasBrowser)('register a passkey, log out, log in with it and read an object; a replayed login is refused', async () => {
  const password = await login(service, 'alice');
  const registered = await inPage('register', password, await inPage('registrationResponse', password));
  expect(registered).toMatchObject({ status: { internalStatus: '0', statusMessage: 'passkey registered' }, data: { Name: 'virtual key', Transports: expect.any(Array) } });
  expect((await passkeysOf(password))['~Count']).toBe(1);
  expect((await call(service, 'POST', '/v1/logout', { headers: { sessionId: password } })).status).toBe(200);

  const assertion = await inPage('assertion');
  const loggedIn = await inPage('passkeyLogin', assertion);
  expect(loggedIn).toMatchObject({ status: { internalStatus: '0' }, data: { sessionId: expect.any(String), user: { Name: 'alice' }, databaseName: 'odbrest' } });
  const read = await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: loggedIn.data.sessionId } });
  expect(read.body).toMatchObject({ status: { internalStatus: '0' }, data: { '~ObjectID': 'CUS00001' } });
  expect((await passkeysOf(loggedIn.data.sessionId))['~Elements'][0].LastUsed).toMatch(/^\d{8}T\d{6}\+00:00$/);

  // the same response again: its challenge is used up
  const replayed = await inPage('passkeyLogin', assertion);
  expect(replayed).toEqual({ status: { internalStatus: '302', statusMessage: expect.stringMatching(/^passkey login refused: .*challenge/i) }, data: {} });
  // the response to one challenge sent after asking for another: refused too (the new one stays unused)
  await call(service, 'POST', '/v1/passkey/login/options', { json: {} });
  expect((await inPage('passkeyLogin', assertion)).status.internalStatus).toBe('302');
}, 120_000);

test.skipIf(!hasBrowser)('a login response checked by an instance with other origins or another RP ID is refused, and nothing changes', async () => {
  const otherOrigin = await instance({ rpID: 'localhost', origins: ['https://app.example.com'] });
  const otherRp = await instance({ rpID: 'example.com', origins: [origin] });
  for (const [other, reason] of [
    [otherOrigin, /origin/i],
    [otherRp, /RP ID/i],
  ] as const) {
    const assertion = await inPage('assertion');
    const refused = await call(other, 'POST', '/v1/passkey/login', { json: { response: assertion, appNames: ['crm'] } });
    expectError(refused, '302', 401);
    expect(refused.body.status.statusMessage).toMatch(reason);
  }
  // a registration whose client data names another origin (attestation "none" signs nothing of it)
  const sessionId = await login(service, 'bob');
  const response = await inPage('registrationResponse', sessionId);
  const clientData = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8'));
  const forged = { ...response, response: { ...response.response, clientDataJSON: Buffer.from(JSON.stringify({ ...clientData, origin: 'https://evil.example' })).toString('base64url') } };
  const refused = await call(service, 'POST', '/v1/passkey/register', { headers: { sessionId }, json: { response: forged } });
  expectError(refused, '400', 400);
  expect(refused.body.status.statusMessage).toMatch(/^passkey registration refused: .*origin/i);
  expect((await passkeysOf(sessionId))['~Count']).toBe(0);
  // the registration options of another session do not fit this one's response
  const alice = await login(service, 'alice');
  const stolen = await call(service, 'POST', '/v1/passkey/register', { headers: { sessionId: alice }, json: { response } });
  expectError(stolen, '400', 400);
}, 120_000);

test('without the passkeys option the routes answer 403; bad bodies are 400', async () => {
  const plain = await demoService();
  expectError(await call(plain, 'POST', '/v1/passkey/login/options', { json: {} }), '403', 403);
  const configured = await demoService({ passkeys: { rpID: 'localhost', rpName: 'x', origins: ['http://localhost'] } });
  expectError(await call(configured, 'POST', '/v1/passkey/login', { json: { response: 'nope', appNames: ['crm'] } }), '400', 400);
  const sessionId = await login(configured, 'bob');
  expectError(await call(configured, 'DELETE', '/v1/passkeys/unknown', { headers: { sessionId } }), '404', 404);
  expect((await call(configured, 'POST', '/v1/passkey/login/options', {})).body.data.challenge).toMatch(/^[A-Za-z0-9_-]+$/);
});
