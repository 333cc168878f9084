/**
 * The console under an afternoon's use (issue 54 items 2, 3 and 4) in Chromium against a real server
 * on the demo's rules (alice is in `sales` and `admins`; bob in `support` reads customers only), with
 * a `Gadget` class the page cannot fully see (strict, an enum, a reference): the import's dry run is
 * the service's check, 1,000 rows a call, each refusal with its row, code and message.
 */
import { readFileSync } from 'node:fs';
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
    users: { admins: 'admins' },
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

/** `text` in Windows-1252, as German Excel saves "CSV (Trennzeichen-getrennt)": Latin-1 but `€` at 0x80. */
const cp1252 = (text: string) => Buffer.from([...text].map((char) => (char === '€' ? 0x80 : char.charCodeAt(0))));

/** Clicks `button` and reads the bytes of the file the page saves. */
async function download(page: Page, button: string): Promise<{ name: string; bytes: Buffer }> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
  return { name: file.suggestedFilename(), bytes: readFileSync((await file.path())!) };
}

/** Imports a file that passes its dry run and answers the objects it made (by `Number` from `from`, 100 on). */
async function importClean(page: Page, name: string, bytes: Buffer, rows: number, from: number, sessionId: string): Promise<any[]> {
  expect(await dryRun(page, name, bytes)).toBe('0');
  await page.click(`.import-report button:text("Import ${rows} object")`);
  await page.waitForSelector(`.notice:has-text("imported into Customer from ${name}")`);
  const found = await read(`/v1/objects/Customer?perPage=100&orderBy=Number&query=${encodeURIComponent(JSON.stringify({ queryString: `Number >= ${from} and Number < ${from + 100}` }))}`, sessionId);
  return found['~Elements'].map(({ Name, Number, City, Revenue }: any) => ({ Name, Number, City, Revenue }));
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

  test('German spreadsheets: CSV as Excel writes it (a BOM, `;`, CRLF; Windows-1252; quoted separators and line breaks) is imported; the export has a BOM and the language\'s separator', async () => {
    const alice = await login(main.service, 'alice');
    const { page, problems } = await importTab('Customer');
    // UTF-8 with a BOM, `;` between fields, CRLF, a decimal comma
    const excel = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Name;Number;City;Revenue\r\nMüller & Söhne;9601;Köln;12,5\r\nGroß AG;9602;Düsseldorf;7\r\n')]);
    expect(await importClean(page, 'kunden.csv', excel, 2, 9601, alice)).toEqual([
      { Name: 'Müller & Söhne', Number: 9601, City: 'Köln', Revenue: 12.5 },
      { Name: 'Groß AG', Number: 9602, City: 'Düsseldorf', Revenue: 7 },
    ]);
    // Windows-1252 (not valid UTF-8): ä ö ü ß €
    const ansi = cp1252('Name;Number;City\r\nBäckerei Öztürk;9611;Fürth\r\nStraßen € Bau;9612;Lübeck\r\n');
    expect(await importClean(page, 'ansi.csv', ansi, 2, 9611, alice)).toEqual([
      { Name: 'Bäckerei Öztürk', Number: 9611, City: 'Fürth', Revenue: undefined },
      { Name: 'Straßen € Bau', Number: 9612, City: 'Lübeck', Revenue: undefined },
    ]);
    // quoted cells holding the separator, quotes and a line break; and a tab-separated file
    const quoted = Buffer.from('\uFEFFName;Number;City\r\n"Zeile eins; mit Semikolon\r\nZeile zwei";9621;"Bad ""Tölz"""\r\n');
    expect(await importClean(page, 'quoted.csv', quoted, 1, 9621, alice)).toEqual([{ Name: 'Zeile eins; mit Semikolon\r\nZeile zwei', Number: 9621, City: 'Bad "Tölz"', Revenue: undefined }]);
    const tabbed = Buffer.from('Name\tNumber\tCity\nTab, Komma GmbH\t9631\tWürzburg\n');
    expect(await importClean(page, 'tabbed.csv', tabbed, 1, 9631, alice)).toEqual([{ Name: 'Tab, Komma GmbH', Number: 9631, City: 'Würzburg', Revenue: undefined }]);

    // the export in German: a BOM, `;`, umlauts as UTF-8
    await page.fill('input[name=query]', 'Number >= 9601 and Number < 9700');
    await page.press('input[name=query]', 'Enter');
    await page.waitForFunction(() => document.querySelector('h1')?.textContent?.includes('6 objects'));
    await page.selectOption('header select >> nth=1', 'de');
    const german = await download(page, 'button:text("Als CSV exportieren")');
    expect(german.name).toBe('Customer.csv');
    expect([...german.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = german.bytes.toString('utf8').slice(1);
    expect(text.split('\r\n')[0]).toBe('~ObjectID;~ClassName;~StoreTime;Name;Number;City;Active;Revenue;AccountManager');
    expect(text).toContain(';Müller & Söhne;9601;Köln;;12.5;\r\n');
    expect(text).toContain(';"Zeile eins; mit Semikolon\r\nZeile zwei";9621;"Bad ""Tölz""";;;\r\n');
    expect(german.bytes.includes(Buffer.from('Straßen € Bau'))).toBe(true);
    // in English: `,`
    await page.selectOption('header select >> nth=1', 'en');
    const english = (await download(page, 'button:text("Export CSV")')).bytes.toString('utf8');
    expect(english.split('\r\n')[0]).toBe('\uFEFF~ObjectID,~ClassName,~StoreTime,Name,Number,City,Active,Revenue,AccountManager');
    expect(english).toContain(',"Tab, Komma GmbH",9631,Würzburg,,,\r\n');
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);

  test('recent queries and column layouts are kept per user; the recent queries go at logout: bob does not see alice\'s', async () => {
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/class/Customer`);
    await logIn(page, { secure: false });
    await page.waitForSelector('table.objects tbody tr');
    await page.fill('input[name=query]', 'City = "Geheimstadt"');
    await page.press('input[name=query]', 'Enter');
    await page.waitForSelector('details.recent li:has-text("Geheimstadt")', { state: 'attached' });
    await page.click('details.columns summary');
    await page.uncheck('details.columns input[type=checkbox] >> nth=2'); // City hidden
    await expect.poll(() => page.$$eval('table.objects thead th button.sort', (buttons) => buttons.map((button) => button.textContent))).not.toContain('City');
    await page.click('header button:text("Log out")');
    await page.waitForSelector('form.login');
    // bob on the same browser: neither alice's query nor her columns
    await logIn(page, { user: 'bob', password: 'bob-secret', secure: false });
    await page.evaluate(() => (location.hash = '#/class/Customer'));
    await page.waitForSelector('table.objects tbody tr');
    expect(await page.$('details.recent')).toBeNull();
    expect(await page.$$eval('datalist option', (options) => options.map((option) => option.getAttribute('value')))).toEqual([]);
    expect(await page.$$eval('table.objects thead th button.sort', (buttons) => buttons.map((button) => button.textContent))).toContain('City');
    expect(await page.evaluate(() => Object.entries(localStorage).filter(([, value]) => value.includes('Geheimstadt')))).toEqual([]);
    await page.click('header button:text("Log out")');
    await page.waitForSelector('form.login');
    // alice again: her columns kept, her recent queries gone with her logout
    await logIn(page, { secure: false });
    await page.evaluate(() => (location.hash = '#/class/Customer'));
    await page.waitForSelector('table.objects tbody tr');
    expect(await page.$$eval('table.objects thead th button.sort', (buttons) => buttons.map((button) => button.textContent))).not.toContain('City');
    expect(await page.$('details.recent')).toBeNull();
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('New object and Import are offered only with the create right (bob reads customers, alice creates them)', async () => {
    const bob = await openStudio(context!, `${main.origin}/_studio/#/class/Customer`);
    // the rights are read with the table (an object's ~SecurityRights, PROTOCOL.md 6.1): after that read and its render
    const rightsRead = bob.page.waitForResponse((response) => response.url().includes('/v1/objects/Customer') && decodeURIComponent(response.url()).includes('securityRights'));
    await logIn(bob.page, { user: 'bob', password: 'bob-secret', secure: false });
    await bob.page.waitForSelector('table.objects tbody tr');
    await rightsRead;
    await bob.page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve))));
    expect(await bob.page.$$eval('.toolbar button', (buttons) => buttons.map((button) => button.textContent))).not.toContain('New object');
    expect(await bob.page.$('.toolbar button:text("Import")')).toBeNull();
    expect(bob.problems).toEqual([]);
    await bob.page.close();
    const alice = await openStudio(context!, `${main.origin}/_studio/#/class/Customer`);
    await logIn(alice.page, { secure: false });
    await alice.page.waitForSelector('.toolbar button:text("New object")');
    await alice.page.waitForSelector('.toolbar button:text("Import")');
    await alice.page.close();
  }, 120_000);

  test('notices close by themselves (8 s, 30 s with Undo); the focus goes into a form that opens and back to its button when it closes', async () => {
    const page = await context!.newPage();
    await page.clock.install();
    await page.goto(`${main.origin}/_studio/#/class/Customer`);
    await page.waitForSelector('form.login');
    await logIn(page, { secure: false });
    await page.waitForSelector('table.objects tbody tr');
    const focused = () => page.evaluate(() => {
      const element = document.activeElement as HTMLElement | null;
      return element ? `${element.tagName.toLowerCase()}${element.getAttribute('name') ? `[name=${element.getAttribute('name')}]` : ''}:${element.closest('form')?.className ?? ''}:${element.tagName === 'BUTTON' || element.tagName === 'A' ? element.textContent : ''}` : '';
    });
    // New object: its first field; Cancel: back on New object
    await page.click('.toolbar button:text("New object")');
    await expect.poll(focused).toBe('input[name=Name]:new-object card:');
    await page.click('form.new-object button:text("Cancel")');
    await expect.poll(focused).toBe('button::New object');
    // a panel opened from a row: Edit, its first field; Cancel and Save: back on Edit; Esc: back on the row
    await page.click('table.objects tbody tr[data-row="0"] th a');
    await page.waitForSelector('.panel.top .object-actions button:text("Edit")');
    await page.click('.panel.top .object-actions button:text("Edit")');
    await expect.poll(focused).toBe('input[name=Name]:object-editor:');
    await page.click('form.object-editor button:text("Cancel")');
    await expect.poll(focused).toBe('button::Edit');
    await page.click('.panel.top .object-actions button:text("Edit")');
    await page.waitForSelector('form.object-editor .hint[data-lock=held]');
    await page.click('form.object-editor button:text("Save")');
    await page.waitForSelector('.panel.top .object-actions');
    await expect.poll(focused).toBe('button::Edit');
    await page.keyboard.press('Escape');
    await page.waitForSelector('.panel', { state: 'detached' });
    await expect.poll(focused).toMatch(/^a::CUS\d+$/);

    // a notice with Undo: still there after 20 s, gone after 30 s; an information: gone after 8 s
    await page.click('table.objects tbody tr[data-row="1"] th a');
    await page.click('.panel.top .object-actions button:text("Delete")');
    await page.waitForSelector('.notice button:text("Undo")');
    await page.clock.runFor(20_000);
    expect(await page.$('.notice button:text("Undo")')).not.toBeNull();
    await page.clock.runFor(11_000);
    await page.waitForSelector('.notice', { state: 'detached' });
    await page.click('.toolbar button:text("Import")');
    expect(await dryRun(page, 'info.jsonl', JSON.stringify({ Name: 'Notice GmbH', Number: 9701 }))).toBe('0');
    await page.click('.import-report button');
    await page.waitForSelector('.notice:has-text("imported into Customer from info.jsonl")');
    await page.clock.runFor(8_100);
    await page.waitForSelector('.notice', { state: 'detached' });
    await page.close();
  }, 120_000);

  test('form errors all at once, each field with its limits beside it; counts with plural forms; the charts in German', async () => {
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/class/Customer`);
    await logIn(page, { secure: false });
    await page.click('.toolbar button:text("New object")');
    await page.waitForSelector('form.new-object [data-field=Revenue] input');
    expect(await page.textContent('form.new-object [data-field=Revenue] .field-limits')).toBe('at least 0');
    expect(await page.textContent('form.new-object [data-field=Name] .field-limits')).toBe('at most 120 characters');
    const posts: string[] = [];
    page.on('request', (request) => request.method() === 'POST' && /\/v1\/object\/Customer$/.test(request.url()) && posts.push(request.url()));
    await page.fill('form.new-object [data-field=Number] input', '0');
    await page.fill('form.new-object [data-field=Revenue] input', '-5');
    await page.click('form.new-object button:text("Create")');
    await page.waitForSelector('form.new-object [data-field=Name] .field-error');
    expect(await page.textContent('form.new-object [data-field=Name] .field-error')).toBe('Required: enter a value.');
    expect(await page.textContent('form.new-object [data-field=Number] .field-error')).toBe('Must be at least 1.');
    expect(await page.textContent('form.new-object [data-field=Revenue] .field-error')).toBe('Must be at least 0.');
    expect(await page.$('form.new-object [data-field=City] .field-error')).toBeNull();
    expect(posts).toEqual([]);
    await page.click('form.new-object button:text("Cancel")');

    // plural forms: one object, one row to import (English and German)
    await page.evaluate(() => (location.hash = '#/class/Gadget'));
    await page.waitForSelector('.toolbar button:text("Import")');
    await page.click('.toolbar button:text("Import")');
    expect(await dryRun(page, 'one.jsonl', JSON.stringify({ Name: 'Solo', Kind: 'fan' }))).toBe('0');
    expect(await page.textContent('.import-report button')).toBe('Import 1 object');
    await page.selectOption('header select >> nth=1', 'de');
    await expect.poll(() => page.textContent('.import-report button')).toBe('1 Objekt importieren');
    await page.click('.import-report button');
    await page.waitForSelector('.notice:has-text("1 Objekt aus one.jsonl in Gadget importiert.")');
    await expect.poll(() => page.textContent('h1 .count')).toBe('1 Objekt');

    // the metrics' charts: legends and times in German
    await page.evaluate(() => (location.hash = '#/metrics'));
    await page.waitForSelector('.u-legend');
    expect(await page.$$eval('.u-legend th.u-label, .u-legend .u-label', (labels) => labels.map((label) => label.textContent))).toContain('Zeit');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
