/**
 * The demo's API reference page (`npm start`, examples/node/server.mjs): `GET /docs` renders the
 * service's own `/openapi.json` with Swagger UI served from node_modules, in Debian's chromium driven
 * by playwright-core, with every request outside the demo's own address blocked (no CDN): every
 * operation of the document under its tag, each with the document's example answer; and the demo's
 * studio linking the operation it shows to this page (its `docs` option), which opens at it.
 */
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { spawnLines, type LineProcess } from '../support/processes.js';
import { browserAvailable, closeChromium, launchChromium } from '../support/browser.js';
import { logIn, openStudio } from '../support/studio.js';

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
  demo?.stop();
  await closeChromium(context, userDataDir);
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

type Example = { example?: unknown; schema?: { format?: string } };
type Operation = { tags: string[]; responses: Record<string, { content?: Record<string, Example> }> };

test.skipIf(!hasBrowser)('GET /docs lists every operation of /openapi.json under its tag, with its example answer', async () => {
  const document = (await (await fetch(`${origin}/api/openapi.json`)).json()) as { tags: Array<{ name: string; description: string }>; paths: Record<string, Record<string, Operation>> };
  const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));
  expect(operations.length).toBeGreaterThan(60);
  const page = await context!.newPage();
  try {
    await page.goto(`${origin}/docs`);
    await page.locator('.opblock-tag-section').first().waitFor({ timeout: 30_000 });
    // the tags, in the document's order, each with its description
    const tags = await page.locator('.opblock-tag').evaluateAll((headings) => headings.map((heading) => ({ name: heading.getAttribute('data-tag'), text: heading.textContent ?? '' })));
    expect(tags.map((tag) => tag.name)).toEqual(document.tags.map((tag) => tag.name));
    for (const [i, tag] of document.tags.entries()) expect(tags[i]!.text).toContain(tag.description.slice(0, 40));
    // every operation under its tag, and no other
    for (const tag of document.tags) {
      const section = page.locator('.opblock-tag-section').filter({ has: page.locator(`.opblock-tag[data-tag="${tag.name}"]`) });
      const shown = await section.locator('.opblock').evaluateAll((blocks) =>
        blocks.map((block) => `${block.querySelector('.opblock-summary-method')?.textContent?.toLowerCase()} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
      );
      const expected = operations.filter(({ operation }) => operation.tags[0] === tag.name).map(({ method, path }) => `${method} ${path}`);
      expect(shown.sort(), tag.name).toEqual(expected.sort());
    }
    // an operation of each tag, opened, shows the document's example: the success answer's where it is
    // JSON, else a failure's (opening one takes Swagger UI seconds on a busy machine, so one per tag
    // here; test/openapi.test.ts checks every operation's examples against its schemas)
    for (const tag of document.tags) {
      const ofTag = operations.filter(({ operation }) => operation.tags[0] === tag.name);
      const { path, method, operation } = ofTag.find(({ operation }) => operation.responses['200']?.content?.['application/json']?.example !== undefined) ?? ofTag[0]!;
      const block = page.locator(`.opblock-tag-section .opblock.opblock-${method}`).filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) }).first();
      await block.locator('.opblock-summary').first().click();
      const [status, answer] = Object.entries(operation.responses).find(([, response]) => response.content?.['application/json']?.example !== undefined)!;
      const example = block.locator(`.responses-table .response[data-code="${status}"] .highlight-code`).first();
      await example.waitFor({ timeout: 60_000 });
      const shown = JSON.parse((await example.textContent())!);
      expect(shown, `${method} ${path} ${status}`).toEqual(answer.content!['application/json']!.example);
      expect(JSON.stringify(shown), `${method} ${path}`).not.toContain('"data":"string"');
      await block.locator('.opblock-summary').first().click(); // closed again: the page stays small
    }
    expect(elsewhere).toEqual([]);
  } finally {
    await page.close();
  }
}, 300_000);

test.skipIf(!hasBrowser)("the studio's \"For developers\" links the operation shown, and /docs opens at it", async () => {
  const { page, problems } = await openStudio(context!, `${origin}/api/_studio/#/class/Customer`);
  try {
    await logIn(page);
    await page.waitForSelector('table.objects tbody tr', { timeout: 30_000 });
    await page.click('.screen details.copy-as summary');
    expect(await page.getAttribute('.screen details.copy-as a.docs-link', 'href')).toBe(`${origin}/docs#/Objects/getV1ObjectsClassName`);
    expect(await page.textContent('.screen details.copy-as a.docs-link')).toBe('GET /v1/objects/{className} in the API reference (a new tab)');
    await page.click('table.objects tbody th a >> nth=0');
    await page.waitForSelector('.panel.top details.copy-as');
    await page.click('.panel.top details.copy-as summary');
    const link = '.panel.top details.copy-as a.docs-link';
    expect(await page.getAttribute(link, 'href')).toBe(`${origin}/docs#/Objects/getV1ObjectId`);
    // followed, it opens a new tab (this one holds the session) on the reference, that operation open
    const [docs] = await Promise.all([context!.waitForEvent('page'), page.click(link)]);
    const opened = docs.locator('#operations-Objects-getV1ObjectId.is-open');
    await opened.waitFor({ timeout: 60_000 });
    expect(await opened.locator('.opblock-summary-path').getAttribute('data-path')).toBe('/v1/object/{id}');
    expect(await docs.locator('.opblock.is-open').count()).toBe(1);
    expect(page.url()).toContain('/api/_studio/');
    await docs.close();
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);
