/** In-process apps on 127.0.0.1 port 0 for the Express and Koa adapter tests, and what they share. */
import type { Server } from 'node:http';
import { afterEach, expect } from 'vitest';
import type { Service, ServiceOptions } from '../../src/index.js';
import { call, demoData, demoService, login, loginBody, USERS, type CallResult } from '../helpers.js';
import { nodeKeyPair, nodeSecureLogin, openSecureResponse, secureRequest, sendSecure, type NodeKeyPair } from '../secure/node-client.js';
import { remoteService } from '../support/processes.js';

/** Macro parameters with non-ASCII text, numbers, null and nesting: they must arrive unchanged. */
export const PARAMS = { text: 'grüße', list: [1, 2.5, null], nested: { ok: true } };
export const okEnvelope = (data: unknown) => ({ status: { internalStatus: '0', statusMessage: 'ok' }, data });
export const aliceLogin = loginBody('alice', USERS.alice);

/** The demo service with an `echo` macro that answers its parameters. */
export async function echoService(basePath: string, options: ServiceOptions = {}): Promise<Service> {
  const service = await demoService({ mount: { basePath }, ...options });
  service.macros.register('echo', (_context, params) => params);
  return service;
}

interface App {
  listen(port: number, host: string, ready: () => void): Server;
}

/** Returns `run(app)`, which starts the app and resolves with its origin; the app stops after each test. */
export function appRunner(): (app: App) => Promise<string> {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((done) => (server ? server.close(done) : done(undefined)));
    server = undefined;
  });
  return (app) =>
    new Promise((resolve) => {
      server = app.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server!.address() as { port: number }).port}`));
    });
}

/** The server at `base` as a `Service` for the fetch-based helpers (`call`, `login`, ...), over real HTTP. */
const overHttp = (base: string) => remoteService(base) as unknown as Service;

/**
 * One request to `url`: GET without a body, else POST. `json` is sent as `application/json`, `body` as is,
 * also labelled `application/json` unless `contentType` says otherwise.
 */
export function send(url: string, init: { json?: unknown; body?: string; contentType?: string; appKey?: boolean } = {}): Promise<CallResult> {
  const { origin, pathname, search } = new URL(url);
  const hasBody = init.json !== undefined || init.body !== undefined;
  return call(overHttp(origin), hasBody ? 'POST' : 'GET', pathname + search, {
    json: init.json,
    body: init.body,
    headers: hasBody ? { 'content-type': init.contentType ?? 'application/json' } : {},
    noAppKey: init.appKey === false,
  });
}

/** Asserts that the service at `api` logs in and echoes `PARAMS` unchanged. */
export async function expectEcho(api: string): Promise<void> {
  const service = overHttp(api);
  const answer = await call(service, 'POST', '/v1/execute/echo', { json: PARAMS, headers: { sessionId: await login(service) } });
  expect([answer.status, answer.body]).toEqual([200, okEnvelope(PARAMS)]);
}

let clientKeys: NodeKeyPair | undefined;
let serverKeys: NodeKeyPair | undefined;

/** `echoService` options for secure-login tests: one server key for all, instead of one generated per service. */
export const secureOptions = (): ServiceOptions => ({ secure: { serverKey: (serverKeys ??= nodeKeyPair()).privateKey } });

/**
 * Secure login at `api` (the node:crypto client), then the `echo` macro with `params` as an encrypted
 * body sent as `contentType`; returns the status and the decrypted, signature-checked envelope.
 */
export async function secureEcho(api: string, params: unknown, contentType: string): Promise<{ status: number; envelope: unknown }> {
  const service = overHttp(api);
  const session = await nodeSecureLogin(service, (clientKeys ??= nodeKeyPair()));
  const message = secureRequest(session, 1, 'POST', '/v1/execute/echo', params);
  message.headers['content-type'] = contentType;
  const result = await sendSecure(service, 'POST', '/v1/execute/echo', message);
  return { status: result.status, envelope: openSecureResponse(session, 1, result.status, result.headers, result.text) };
}

/** The demo service with a Google provider configured: a redirect (null body) and a form callback to test. */
export async function oauthService(basePath: string): Promise<Service> {
  const provider = {
    '~ClassName': 'OAuthProvider',
    name: 'Google',
    type: 'google',
    additionalData: JSON.stringify({ clientId: 'g-id', clientSecret: 'g-secret' }),
  };
  const service = await demoService({
    mount: { basePath },
    data: { objects: [...demoData().objects, provider] },
    externalLogin: { providers: [{ name: 'Google' }], publicUrl: 'https://odbrest.example/api' },
  });
  return service;
}

/** Starts external login: the service's redirect, as the adapter delivers it (not followed). */
export async function startExternalLogin(api: string): Promise<{ status: number; redirectUri: string | null; body: string }> {
  const response = await fetch(`${api}/v1/auth/google`, { headers: { appkey: 'adapter-test' }, redirect: 'manual' });
  const location = response.headers.get('location');
  return { status: response.status, redirectUri: location && new URL(location).searchParams.get('redirect_uri'), body: await response.text() };
}

/** An Apple-style form POST to the callback with a state nobody issued. */
export const bogusCallback = (api: string) =>
  send(`${api}/v1/google/callback`, { body: 'state=never-issued&code=abc', contentType: 'application/x-www-form-urlencoded', appKey: false });
export const unknownStateEnvelope = { status: { internalStatus: '322', statusMessage: 'unknown, expired or already used state' }, data: {} };
