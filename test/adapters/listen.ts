/** In-process apps on 127.0.0.1 port 0 for the Express and Koa adapter tests, and what they share. */
import type { Server } from 'node:http';
import { afterEach } from 'vitest';
import { clientPassValue, type Service } from '../../src/index.js';
import { demoService, parseOrUndefined } from '../helpers.js';

/** Macro parameters with non-ASCII text, numbers, null and nesting: they must arrive unchanged. */
export const PARAMS = { text: 'grüße', list: [1, 2.5, null], nested: { ok: true } };
export const okEnvelope = (data: unknown) => ({ status: { internalStatus: '0', statusMessage: 'ok' }, data });
export const aliceLogin = { user: 'alice', pass: clientPassValue('alice-secret'), appNames: ['crm'] };

/** The demo service with an `echo` macro that answers its parameters. */
export async function echoService(basePath: string): Promise<Service> {
  const service = await demoService({ basePath });
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

export interface Reply {
  status: number;
  contentType: string | null;
  text: string;
  body: any;
}

/** One request; `json` is sent as `application/json`, `body` as is (with its own content type). */
export async function send(
  url: string,
  init: { method?: string; json?: unknown; body?: string; contentType?: string; appKey?: boolean; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers = new Headers(init.headers);
  if (init.appKey !== false) headers.set('appkey', 'adapter-test');
  let body = init.body;
  if (init.json !== undefined) body = JSON.stringify(init.json);
  if (body !== undefined) headers.set('content-type', init.contentType ?? 'application/json');
  const response = await fetch(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  const text = await response.text();
  return { status: response.status, contentType: response.headers.get('content-type'), text, body: parseOrUndefined(text) };
}

/** Logs in at `${api}/v1/login` and calls the `echo` macro with `params`; returns the macro's answer. */
export async function loginAndEcho(api: string, params: unknown): Promise<Reply> {
  const login = await send(`${api}/v1/login`, { json: aliceLogin });
  if (login.body?.status?.internalStatus !== '0') throw new Error(`login failed: ${login.status} ${login.text}`);
  return send(`${api}/v1/execute/echo`, { json: params, headers: { sessionId: login.body.data.sessionId } });
}
