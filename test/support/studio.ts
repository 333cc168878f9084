/**
 * What the studio's browser tests share: a real server for a service (the origin known before the
 * service is made, for the passkey origins), a tab on the studio that records CSP violations and page
 * errors, the login form, the axe-core check and the screenshots of docs/studio.md.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { expect } from 'vitest';
import { createNodeHandler } from '../../adapters/node.js';
import type { Service, ServiceOptions } from '../../src/index.js';
import { demoService, USERS } from '../helpers.js';
import { closeServer } from './browser.js';
import { demoSchema } from '../../examples/demo-schema.mjs';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const DOCS = new URL('../../docs/', import.meta.url).pathname;

export interface Running {
  service: Service;
  origin: string;
  server: Server;
}

/** A real server on a free port for `options` on the demo database and schema; `extra` may answer a path itself (a script). */
export async function serveStudio(options: (origin: string) => ServiceOptions, extra?: (path: string) => string | undefined): Promise<Running> {
  let handler: ((req: any, res: any) => void) | undefined;
  const server = createServer((req, res) => {
    const page = extra?.(req.url ?? '');
    if (page !== undefined) return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(page);
    handler!(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  const service = await demoService({ schema: demoSchema, ...options(origin) });
  handler = createNodeHandler(service);
  return { service, origin, server };
}

/** Stops the servers `serveStudio` started (those that started). */
export async function stopServers(...running: Array<Running | undefined>): Promise<void> {
  for (const one of running) await closeServer(one?.server);
}

/** The passkey registration of a test (the studio has none of its own): @simplewebauthn/browser on a page of the same origin. */
const REGISTER = `
import { startRegistration } from '@simplewebauthn/browser';
window.registerPasskey = async (sessionId, name) => {
  const post = async (path, body) => (await fetch(path, { method: 'POST', headers: { appkey: 'odbrest-studio', sessionId, 'content-type': 'application/json' }, body: body && JSON.stringify(body) })).json();
  const options = await post('/v1/passkey/register/options');
  return post('/v1/passkey/register', { response: await startRegistration({ optionsJSON: options.data }), name });
};
`;
const REGISTER_PATH = '/register-passkey.js';

/** For `serveStudio`'s `extra`: the server answers the registration script at its own path (a file of the origin, which the CSP lets run). */
export async function passkeyScript(): Promise<(path: string) => string | undefined> {
  const bundled = await build({ stdin: { contents: REGISTER, resolveDir: join(import.meta.dirname, '../..'), loader: 'js' }, bundle: true, format: 'iife', platform: 'browser', target: 'es2022', write: false });
  const script = bundled.outputFiles[0]!.text;
  return (path) => (path === REGISTER_PATH ? script : undefined);
}

/** A new tab with a virtual authenticator (user verified, present) that holds the passkeys it registers. */
export async function tabWithAuthenticator(context: BrowserContext): Promise<{ page: Page; cdp: CDPSession }> {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return { page, cdp };
}

/** Registers a passkey for the plain session `sessionId` from `page` (on the studio of a service served with `passkeyScript`); answers the envelope. */
export async function registerPasskey(page: Page, origin: string, sessionId: string, name = 'studio test key'): Promise<any> {
  await page.goto(`${origin}/_studio/`);
  await page.addScriptTag({ url: REGISTER_PATH });
  return page.evaluate(async ([sid, key]) => (window as any).registerPasskey(sid, key), [sessionId, name]);
}

/** A new tab on the studio that records CSP violations and page errors. */
export async function openStudio(context: BrowserContext, url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => message.type() === 'error' && /Content Security Policy|Refused to/.test(message.text()) && problems.push(message.text()));
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(url);
  await page.waitForSelector('form.login');
  return { page, problems };
}

/** Fills the login form and sends it (Enter); `secure: false` unticks the secure login. */
export async function logIn(page: Page, { user = 'alice', password = USERS.alice as string, app = 'crm', secure = true } = {}): Promise<void> {
  await page.fill('input[name=user]', user);
  await page.fill('input[name=password]', password);
  await page.fill('input[name=application]', app);
  if (!secure) {
    await page.waitForSelector('input[name=secure]:not([disabled])');
    await page.uncheck('input[name=secure]');
  }
  await page.press('input[name=password]', 'Enter');
}

/** axe-core on the page as it is: no serious or critical violation. */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((node: any) => node.target.join(' ')) }));
  });
  expect(violations.filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical'), screen).toEqual([]);
}

/**
 * A screenshot for docs/studio.md: `docs/studio-<name>.png`, written where it is missing or when
 * `ODBREST_SCREENSHOTS=1` asks for all of them again. Screens showing store times and new ids differ
 * on every run, so remaking them always would leave the work tree changed after each `npm test` (and
 * change it under the readme test's check that everything ran in a copy).
 */
export async function shoot(page: Page, name: string): Promise<void> {
  const file = join(DOCS, `studio-${name}.png`);
  const image = await page.screenshot(); // taken either way: a screen that cannot be drawn fails the test
  if (process.env.ODBREST_SCREENSHOTS === '1' || !existsSync(file)) writeFileSync(file, image);
}
