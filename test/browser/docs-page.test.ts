/**
 * The demo's API reference page (`npm start`, examples/node/server.mjs): `GET /docs` renders the
 * service's own `/openapi.json` with Swagger UI served from node_modules, in Debian's chromium driven
 * by playwright-core, with every request outside the demo's own address blocked (no CDN).
 */
import { rmSync } from 'node:fs';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { spawnLines, type LineProcess } from '../support/processes.js';
import { browserAvailable, launchChromium } from '../support/browser.js';

const hasBrowser = browserAvailable('the API reference page test');
const root = new URL('../..', import.meta.url).pathname;

let demo: LineProcess | undefined;
let origin: string;
let context: BrowserContext | undefined;
let userDataDir: string;
const elsewhere: string[] = [];

beforeAll(async () => {
  if (!hasBrowser) return;
  demo = spawnLines(process.execPath, ['examples/node/server.mjs'], { PORT: '0', ODBREST_BASE_PATH: '/api' }, { cwd: root });
  const line = await demo.waitFor((text) => text.includes('listening on'));
  origin = /http:\/\/localhost:\d+/.exec(line)![0];
  ({ context, userDataDir } = await launchChromium());
  // nothing may come from anywhere but the demo
  await context.route('**/*', (route) => {
    if (route.request().url().startsWith(origin)) return route.continue();
    elsewhere.push(route.request().url());
    return route.abort();
  });
}, 120_000);

afterAll(async () => {
  await context?.close();
  demo?.stop();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

test.skipIf(!hasBrowser)('GET /docs shows the operations of the mounted service, /v1/login among them', async () => {
  const page = await context!.newPage();
  try {
    await page.goto(`${origin}/docs`);
    const login = page.locator('.opblock-summary', { hasText: '/v1/login' }).filter({ hasText: 'POST' }).first();
    await login.waitFor({ timeout: 30_000 });
    expect(await login.textContent()).toContain('Logs a database user in');
    // the document's servers entry is the mount base, so "Try it out" calls /api/v1/login
    expect(await page.locator('.servers select, .servers').first().textContent()).toContain('/api');
    expect(await page.locator('.opblock-summary-path').count()).toBeGreaterThan(30);
    expect(elsewhere).toEqual([]);
  } finally {
    await page.close();
  }
}, 60_000);
