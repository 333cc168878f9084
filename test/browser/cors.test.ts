/**
 * CORS (PROTOCOL.md 1.5) through a real browser: Debian's chromium driven by playwright-core. A page
 * served on one origin loads the typed client (src/client, bundled by esbuild for the browser), logs in
 * with the hybrid login (WebCrypto in the page) and lists objects from the service on another origin;
 * a page on an origin the service does not list is refused by the browser itself.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { serve } from '../../adapters/node.js';
import type { Service } from '../../src/index.js';
import { demoService } from '../helpers.js';
import { browserAvailable, closeChromium, closeServer, launchChromium } from '../support/browser.js';

const hasBrowser = browserAvailable('the browser CORS tests');

const PAGE = `<!doctype html><meta charset="utf-8"><title>odbrest CORS</title><script type="module" src="/app.js"></script>`;
/** The page's script: the typed client, and one function the test calls with the service's address. */
const APP = `
import { createClient } from './src/client/index.ts';
window.listCustomers = async (baseUrl) => {
  try {
    const client = createClient({ baseUrl, appKey: 'browser' });
    const login = await client.loginHybrid({ user: 'alice', password: 'alice-secret', appNames: ['crm'] });
    const customers = await client.listObjects('Customer', { perPage: 3 });
    const batch = await client.multi([{ method: 'GET', path: '/_CheckSession' }]);
    return { user: login.user.Name, count: customers['~Count'], first: customers['~Elements'][0]['~ObjectID'], batch: batch[0].httpStatus };
  } catch (error) {
    return { error: String(error), cause: String(error?.cause) };
  }
};
window.ready = true;
`;

let service: Service;
const servers: Server[] = [];
let api: string;
let allowedPage: string;
let otherPage: string;
let context: BrowserContext | undefined;
let userDataDir: string;
const preflights: string[] = [];

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A static server for the page and its script. */
function pageServer(script: string): Server {
  return createServer((req, res) => {
    const isScript = req.url === '/app.js';
    res.writeHead(200, { 'content-type': isScript ? 'text/javascript' : 'text/html' });
    res.end(isScript ? script : PAGE);
  });
}

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
  const pages = [pageServer(script), pageServer(script)];
  // the same host on other ports: other origins
  allowedPage = await listen(pages[0]!);
  otherPage = await listen(pages[1]!);
  service = await demoService({ cors: { origins: [allowedPage] } });
  const serving = await serve(
    {
      ...service,
      fetch: (request, info) => {
        if (request.method === 'OPTIONS') preflights.push(request.headers.get('origin') ?? '');
        return service.fetch(request, info);
      },
    },
    { port: 0, hostname: '127.0.0.1' },
  );
  servers.push(serving);
  api = `http://127.0.0.1:${(serving.address() as AddressInfo).port}`;
  ({ context, userDataDir } = await launchChromium());
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map(closeServer));
  await closeChromium(context, userDataDir);
});

async function runPage(origin: string): Promise<Record<string, unknown>> {
  const page = await context!.newPage();
  try {
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    return await page.evaluate((baseUrl) => (window as unknown as { listCustomers(url: string): Promise<Record<string, unknown>> }).listCustomers(baseUrl), api);
  } finally {
    await page.close();
  }
}

test.skipIf(!hasBrowser)('a page on a listed origin logs in (hybrid, WebCrypto in the page) and lists objects from the service on another origin', async () => {
  const result = await runPage(allowedPage);
  expect(result).toEqual({ user: 'alice', count: 3, first: expect.any(String), batch: 200 });
  // the browser asked before sending the appkey header across origins
  expect(preflights).toContain(allowedPage);
});

test.skipIf(!hasBrowser)('a page on an unlisted origin is refused by the browser', async () => {
  const result = await runPage(otherPage);
  // the browser refuses the answer: to the page it is a failed fetch, which the client reports as a network error
  expect(result).toEqual({ error: expect.stringMatching(/^OdbRestNetworkError: GET http:\/\/127\.0\.0\.1:\d+\/v2\/login\/key: the service could not be reached/), cause: expect.stringMatching(/Failed to fetch/) });
  expect(preflights).toContain(otherPage);
});
