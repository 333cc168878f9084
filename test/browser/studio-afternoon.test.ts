/**
 * The console under an afternoon's use (issue 54 items 2, 3 and 4) in Chromium against a real server
 * on the demo's rules (alice is in `sales` and `admins`; bob in `support` reads customers only), with
 * a `Gadget` class the page cannot fully see (strict, an enum, a reference): the import's dry run is
 * the service's check, 1,000 rows a call, each refusal with its row, code and message.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryObjectStore } from '../../src/index.js';
import { call, login } from '../helpers.js';
import { browserAvailable, closeChromium, launchChromium } from '../support/browser.js';
import { logIn, openStudio, serveStudio, stopServers, type Running } from '../support/studio.js';
import { demoAccess } from '../../examples/demo-access.mjs';
import { demoSchema } from '../../examples/demo-schema.mjs';

const hasBrowser = browserAvailable('the studio afternoon browser tests');

let main: Running;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;
const store = new MemoryObjectStore();
const GADGET = {
  fields: { Name: { type: 'string', required: true }, Kind: { type: 'string', enum: ['lamp', 'fan'] }, Weight: { type: 'number', min: 0, max: 50 }, Owner: { type: 'ref', class: 'Employee' } },
  strict: true,
} as const;

beforeAll(async () => {
  if (!hasBrowser) return;
  main = await serveStudio(() => ({
    store,
    schema: { ...demoSchema, Gadget: GADGET },
    access: { ...demoAccess, rules: { ...demoAccess.rules, Gadget: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'] } } },
    studio: { appNames: ['crm'] },
  }));
  ({ context, userDataDir } = await launchChromium());
}, 120_000);

afterAll(async () => {
  await closeChromium(context, userDataDir);
  await stopServers(main);
});

/** The data of a GET as `sessionId`. */
async function read(path: string, sessionId: string): Promise<any> {
  return (await call(main.service, 'GET', path, { headers: { sessionId } })).body.data;
}
const count = async (className: string, queryText: string, sessionId: string) =>
  (await read(`/v1/objects/${className}?perPage=1&query=${encodeURIComponent(JSON.stringify({ queryString: queryText }))}`, sessionId))['~UnfilteredCount'];

/** Opens the import of `className` in a new tab as alice (plain session). */
async function importTab(className: string, user = { user: 'alice' }): Promise<{ page: Page; problems: string[] }> {
  const tab = await openStudio(context!, `${main.origin}/_studio/#/class/${className}`);
  await logIn(tab.page, { ...user, secure: false });
  await tab.page.waitForSelector('.toolbar button:text("Import")');
  await tab.page.click('.toolbar button:text("Import")');
  await tab.page.waitForSelector('input[name=import]');
  return tab;
}

/** Chooses `bytes` as the import file and runs the dry run; answers the report's refused count. */
async function dryRun(page: Page, name: string, bytes: Buffer | string): Promise<string | null> {
  await page.setInputFiles('input[name=import]', { name, mimeType: name.endsWith('.csv') ? 'text/csv' : 'application/x-ndjson', buffer: Buffer.from(bytes) });
  await page.click('button:text("Check (dry run)")');
  await page.waitForSelector('.import-report');
  return page.getAttribute('.import-report', 'data-refused');
}

describe.skipIf(!hasBrowser)('studio under an afternoon', () => {
  test('the dry run is the service\'s check: a strict class, an enum, a range and a missing reference refused in its words, 1,000 rows a call', async () => {
    const alice = await login(main.service, 'alice');
    const { page, problems } = await importTab('Gadget');
    const checks: number[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && /\/v1\/model\/classes\/Gadget\/check$/.test(request.url())) checks.push(JSON.parse(request.postData()!).Objects.length);
    });
    const lines = [
      { Name: 'Lamp one', Kind: 'lamp', Weight: 2, Owner: { '~ObjectID': 'EMP00001' } },
      { Name: 'Painted', Kind: 'lamp', Colour: 'red' }, // strict: Colour is not declared
      { Name: 'Heater', Kind: 'heater' }, // not one of the enum's values
      { Name: 'Anvil', Weight: 80 }, // above the range
      { Name: 'Orphan', Owner: { '~ObjectID': 'EMP99999' } }, // no such employee
    ];
    expect(await dryRun(page, 'gadgets.jsonl', lines.map((line) => JSON.stringify(line)).join('\n'))).toBe('4');
    // each refusal is the service's own answer for that object, with its row
    const expected = await call(main.service, 'POST', '/v1/model/classes/Gadget/check', { headers: { sessionId: alice }, json: { Objects: lines } });
    expect(expected.body.data.Refused.map((refusal: any) => refusal.Index)).toEqual([1, 2, 3, 4]);
    for (const { Index, Code, Message } of expected.body.data.Refused) {
      const row = `.import-report tr[data-line="${Index + 1}"]`;
      expect(await page.getAttribute(row, 'data-code')).toBe(Code);
      expect(await page.textContent(row)).toContain(Message);
    }
    expect(await page.textContent('.import-report tr[data-line="2"]')).toContain('Colour');
    expect(await page.$('.import-report tr[data-line="1"]')).toBeNull();
    expect(checks).toEqual([5]);
    expect(await count('Gadget', 'Name like "*"', alice)).toBe(0);

    // 1,500 clean rows: two checks (1,000 and 500), then written
    checks.length = 0;
    const many = Array.from({ length: 1500 }, (_, i) => JSON.stringify({ Name: `Gadget ${i}`, Kind: i % 2 ? 'fan' : 'lamp', Weight: i % 50 })).join('\n');
    expect(await dryRun(page, 'many.jsonl', many)).toBe('0');
    expect(checks).toEqual([1000, 500]);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
