/**
 * Change events in a real browser (Debian's chromium, playwright-core): a page on a listed origin
 * runs the README's EventSource snippet as printed (a ticket from POST /v1/events/ticket, then
 * EventSource without headers) and receives the create event of a write made meanwhile.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { serve } from '../../adapters/node.js';
import type { Service } from '../../src/index.js';
import { demoAccess } from '../../examples/demo-access.mjs';
import { call, demoService, login } from '../helpers.js';
import { codeBlocks, readmeSection } from '../support/readme.js';
import { browserAvailable, closeChromium, closeServer, launchChromium } from '../support/browser.js';

const hasBrowser = browserAvailable('the browser event tests');

let service: Service;
const servers: Server[] = [];
let api: string;
let pageOrigin: string;
let context: BrowserContext | undefined;
let userDataDir: string;

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  if (!hasBrowser) return;
  pageOrigin = await listen(createServer((_, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>events</title>')));
  service = await demoService({ cors: { origins: [pageOrigin] }, access: demoAccess });
  const serving = await serve(service, { port: 0, hostname: '127.0.0.1' });
  servers.push(serving);
  api = `http://127.0.0.1:${(serving.address() as AddressInfo).port}`;
  ({ context, userDataDir } = await launchChromium());
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map(closeServer));
  await closeChromium(context, userDataDir);
});

test.skipIf(!hasBrowser)("EventSource with a ticket (the README's snippet) receives a create from another origin", async () => {
  const snippet = codeBlocks(readmeSection('Realtime'), 'js')[0]!;
  expect(snippet).toContain('new EventSource(');
  const sessionId = await login(service, 'alice');
  const page = await context!.newPage();
  try {
    await page.goto(`${pageOrigin}/`);
    await page.evaluate(
      async ({ code, api, sessionId }) => {
        const w = window as unknown as { logs: unknown[]; events: EventSource };
        w.logs = [];
        const log = { log: (value: unknown) => w.logs.push(value) };
        const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<EventSource>;
        w.events = await new AsyncFunction('api', 'sessionId', 'console', `${code}\nreturn events;`)(api, sessionId, log);
      },
      { code: snippet, api, sessionId },
    );
    await page.waitForFunction(() => (window as unknown as { events: EventSource }).events.readyState === 1);
    const created = await call(service, 'POST', '/v1/object/Customer', { headers: { sessionId }, json: { Name: 'Live GmbH' } });
    expect(created.status).toBe(200);
    await page.waitForFunction(() => (window as unknown as { logs: unknown[] }).logs.length > 0);
    expect(await page.evaluate(() => (window as unknown as { logs: unknown[] }).logs)).toEqual(['Live GmbH']);
    await page.evaluate(() => (window as unknown as { events: EventSource }).events.close());
  } finally {
    await page.close();
  }
}, 60_000);
