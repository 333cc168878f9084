/**
 * The studio's tools (docs/studio.md, issue 34 items 9 and 11) in Chromium against a real server: the
 * model screen (the declared classes and their fields, as `GET /v1/model/structure` answers them) and
 * the export of the current query's objects as JSON Lines or CSV, read back through the browser's
 * download. Every screen is checked with axe-core and under the studio's CSP.
 */
import { readFileSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryObjectStore } from '../../src/index.js';
import { call, login } from '../helpers.js';
import { browserAvailable, closeChromium, launchChromium } from '../support/browser.js';
import { expectAccessible, logIn, openStudio, serveStudio, shoot, stopServers, type Running } from '../support/studio.js';

const hasBrowser = browserAvailable('the studio tools browser tests');

let main: Running;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;
const store = new MemoryObjectStore();
const READINGS = 1_050;

beforeAll(async () => {
  if (!hasBrowser) return;
  main = await serveStudio(() => ({ store, studio: { appNames: ['crm'] } }));
  // more than one page of the largest size (1000), with text a CSV must quote or guard
  for (let i = 0; i < READINGS; i++) {
    await store.put({ className: 'Reading', fields: { Value: i, Label: i === 7 ? '=SUM(A1:A2)' : i === 8 ? 'a "quoted", two-line\ntext' : `reading ${i}`, ...(i === 9 ? { Extra: true } : {}) } });
  }
  ({ context, userDataDir } = await launchChromium());
}, 120_000);

afterAll(async () => {
  await stopServers(main);
  await closeChromium(context, userDataDir);
});

describe.skipIf(!hasBrowser)('studio tools', () => {
  test('the model: each declared class with its fields, their types, classes and whether required', async () => {
    const sessionId = await login(main.service, 'alice');
    const model = (await call(main.service, 'GET', '/v1/model/structure', { headers: { sessionId } })).body.data['~Elements'];
    const declared = model.filter((entry: any) => entry.Declared);
    expect(declared.length).toBeGreaterThan(1);
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/classes`);
    await logIn(page);
    await page.click('header a:text("Model")');
    await page.waitForSelector('table.model-class[data-class=Customer]');
    expect(page.url()).toContain('#/model');
    const shown = await page.$$eval('table.model-class', (tables) => tables.map((table) => table.getAttribute('data-class')));
    expect(shown).toEqual(declared.map((entry: any) => entry.Name).sort((a: string, b: string) => a.localeCompare(b)));
    // every field of Customer as the service declares it
    const customer = declared.find((entry: any) => entry.Name === 'Customer');
    const rows = await page.$$eval('table.model-class[data-class=Customer] tbody tr', (trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent)));
    const fields = customer.Members.filter((member: any) => !member.Base);
    expect(rows).toEqual(fields.map((member: any) => [member.Name, member.Values ? `${member.Type} (${member.Values.join(', ')})` : member.Type, member.Class ?? '', member.Required ? 'yes' : 'no']));
    expect(fields.some((member: any) => member.Type === 'ref' && member.Class === 'Employee')).toBe(true);
    // a reference's class opens that class's table
    await page.click('table.model-class[data-class=Customer] td a:text("Employee")');
    await page.waitForSelector('h1:has-text("Employee")');
    expect(page.url()).toContain('#/class/Employee');
    await page.goBack();
    await page.waitForSelector('table.model-class[data-class=Customer]');
    await expectAccessible(page, 'model');
    await shoot(page, 'model');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  /** Clicks `button` and reads the file the page saves. */
  async function download(page: Page, button: string): Promise<{ name: string; text: string }> {
    const [file] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
    return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, 'utf8') };
  }

  test('export: the current query in the table order, every page, as JSON Lines and as CSV', async () => {
    const sessionId = await login(main.service, 'alice');
    // what the service answers for the same query and order, page by page
    const expected: any[] = [];
    for (let page = 0; ; page++) {
      const query = new URLSearchParams({ query: JSON.stringify({ queryString: 'Value >= 20' }), orderBy: '-Value', page: String(page), perPage: '1000' });
      const elements = (await call(main.service, 'GET', `/v1/objects/Reading?${query}`, { headers: { sessionId } })).body.data['~Elements'];
      expected.push(...elements);
      if (elements.length < 1000) break;
    }
    expect(expected).toHaveLength(READINGS - 20);

    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/class/Reading`);
    await logIn(page);
    await page.waitForSelector('table.objects tbody tr');
    await page.fill('input[name=query]', 'Value >= 20');
    await page.press('input[name=query]', 'Enter');
    await page.waitForFunction(() => document.querySelector('h1')?.textContent?.includes('1,030 objects'));
    await page.click('th button.sort:text("Value")');
    await page.click('th button.sort:text("Value")'); // descending
    await page.waitForSelector('th[aria-sort=descending]');

    const lines = await download(page, 'button:text("Export JSON Lines")');
    expect(lines.name).toBe('Reading.jsonl');
    expect(lines.text.endsWith('\n')).toBe(true);
    expect(lines.text.trimEnd().split('\n').map((line) => JSON.parse(line))).toEqual(expected);
    await page.waitForSelector('.export-status:text("1,030 objects saved as Reading.jsonl")');

    // all of the class now (the query cleared), as CSV: the metadata, the fields, a quoted cell, a guarded formula
    await page.fill('input[name=query]', '');
    await page.press('input[name=query]', 'Enter');
    await page.waitForFunction(() => document.querySelector('h1')?.textContent?.includes('1,050 objects'));
    const csv = await download(page, 'button:text("Export CSV")');
    expect(csv.name).toBe('Reading.csv');
    const rows = csv.text.split('\r\n');
    expect(rows[0]).toBe('~ObjectID,~ClassName,~StoreTime,Value,Label,Extra');
    expect(rows).toHaveLength(READINGS + 2); // the header, the rows, the empty end after the last line break
    const byValue = (value: number) => rows.find((row) => row.includes(`,Reading,`) && row.split(',')[3] === String(value))!;
    expect(byValue(7)).toMatch(/,7,'=SUM\(A1:A2\),$/);
    expect(csv.text).toContain(`,8,"a ""quoted"", two-line\ntext",\r\n`);
    expect(byValue(9)).toMatch(/,9,reading 9,true$/);
    expect(rows.slice(1, -1).map((row) => Number(row.split(',')[3]))).toEqual(expected.map((object) => object.Value).concat(19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));

    await expectAccessible(page, 'objects with export');
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);
});
