/**
 * The studio's tools (docs/studio.md, issue 34 items 9 and 11) in Chromium against a real server: the
 * model screen (the declared classes and their fields, as `GET /v1/model/structure` answers them) and
 * the export of the current query's objects as JSON Lines or CSV, read back through the browser's
 * download. Every screen is checked with axe-core and under the studio's CSP.
 */
import type { BrowserContext } from 'playwright-core';
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

beforeAll(async () => {
  if (!hasBrowser) return;
  main = await serveStudio(() => ({ store, studio: { appNames: ['crm'] } }));
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
});
