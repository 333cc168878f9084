/**
 * The studio (docs/studio.md) in Chromium against a real server: the password login, secure by
 * default (the header says so) and plain; the second factor when the login asks for it; a passkey
 * (virtual authenticator); the classes, a class's table with paging, sorting and query text (a `400`
 * marks the position it names), the object panel and its stack of references (Esc goes back); dark
 * mode; a keyboard-only path; the studio under a base path and alias. Every screen is checked with
 * axe-core (no serious or critical violation) and under the studio's CSP (no violation). The
 * screenshots of docs/studio.md are made here, from a service on a fixed clock.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryObjectStore } from '../../src/index.js';
import { login, USERS } from '../helpers.js';
import { browserAvailable, closeChromium, launchChromium } from '../support/browser.js';
import { expectAccessible, logIn, openStudio as openTab, passkeyScript, registerPasskey, serveStudio as serve, shoot, stopServers, tabWithAuthenticator, type Running } from '../support/studio.js';
import { enrol } from '../two-factor/support.js';

const hasBrowser = browserAvailable('the studio browser tests');
const TWO_FACTOR = { policies: { hr: 'optional' as const }, key: 'the key that seals two-factor secrets in the studio tests', issuer: 'odbrest test' };

let main: Running;
let fixed: Running;
let mounted: Running;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;
const mainStore = new MemoryObjectStore();

beforeAll(async () => {
  if (!hasBrowser) return;
  main = await serve(
    (origin) => ({ store: mainStore, studio: { appNames: ['crm'] }, twoFactor: TWO_FACTOR, passkeys: { rpID: 'localhost', rpName: 'odbrest test', origins: [origin] } }),
    await passkeyScript(),
  );
  await mainStore.put({ className: 'Note', fields: { Title: 'a long one', Text: 'x'.repeat(1_000_000) } });
  // the screenshots' service: a fixed clock, so that the pictures change only when the studio does
  fixed = await serve(() => ({ studio: { appNames: ['crm'] }, now: () => Date.UTC(2026, 0, 15, 9, 30, 0) }));
  mounted = await serve(() => ({ studio: { path: 'tools/studio', appNames: ['crm'] }, mount: { basePath: '/api', alias: 'db1' } }));
  ({ context, userDataDir } = await launchChromium());
}, 120_000);

afterAll(async () => {
  await stopServers(main, fixed, mounted);
  await closeChromium(context, userDataDir);
});

const openStudio = (url: string) => openTab(context!, url);
const transport = (page: Page) => page.getAttribute('[data-transport]', 'data-transport');
// a row: the box that picks it, its ~ObjectID, then the fields
const firstCells = (page: Page) => page.$$eval('table.objects tbody tr td:nth-child(3)', (cells) => cells.map((cell) => cell.textContent));

describe.skipIf(!hasBrowser)('studio', () => {
  test('secure login by default, browse a class, query text with a 400 marked, sort, the reference stack', async () => {
    const { page, problems } = await openStudio(`${main.origin}/_studio/`);
    await expectAccessible(page, 'login');
    await logIn(page);
    await page.waitForSelector('table.classes');
    expect(await transport(page)).toBe('secure');
    expect(await page.textContent('header')).toContain('Encrypted end to end');
    // GET /v1/classes: the classes alice may read, with their counts
    expect(await page.$eval('table.classes tr:has(a[href="#/class/Customer"])', (row) => row.textContent)).toMatch(/^Customerdeclared300$/);
    await page.fill('input[data-search]', 'emp');
    await page.waitForFunction(() => document.querySelectorAll('table.classes tbody tr').length === 1);
    expect(await page.textContent('table.classes tbody')).toMatch(/^Employee/);
    await page.fill('input[data-search]', '');
    await shoot(page, 'classes');
    await expectAccessible(page, 'classes');

    await page.click('a[href="#/class/Customer"]');
    await page.waitForSelector('table.objects tbody tr');
    expect(await page.textContent('h1')).toMatch(/Customer\s+300 objects/);
    expect(await page.$$('table.objects tbody tr')).toHaveLength(50);
    expect(await page.textContent('.pager')).toContain('Page 1 of 6');
    await expectAccessible(page, 'objects');

    // a query text the service does not understand: its message, and the position marked in the text
    await page.fill('input[name=query]', 'City = "Berlin" and (');
    await page.press('input[name=query]', 'Enter');
    await page.waitForSelector('.query-marked mark');
    expect(await page.textContent('#query-error')).toContain('query text: expected a field name at 21');
    expect(await page.getAttribute('.query-marked', 'data-position')).toBe('21');
    await expectAccessible(page, 'query error');
    await page.fill('input[name=query]', 'City = "Berlin"');
    await page.press('input[name=query]', 'Enter');
    await page.waitForFunction(() => document.querySelector('h1')?.textContent?.includes('50 objects'));
    expect(await page.$('.query-marked')).toBeNull();
    // the query that ran (not the refused one) is a recent query of the class: in the box's list and below it
    expect(await page.$$eval('datalist option', (options) => options.map((option) => (option as HTMLOptionElement).value))).toEqual(['City = "Berlin"']);
    await page.click('button:text("Clear")');
    await page.waitForFunction(() => document.querySelector('h1')?.textContent?.includes('300 objects'));
    await page.click('details.recent summary');
    await expectAccessible(page, 'recent queries');
    await page.click('details.recent button:text(\'City = "Berlin"\')');
    await page.waitForFunction(() => document.querySelector('h1')?.textContent?.includes('50 objects'));

    // sort by Name: ascending, then descending (the page the service answers in that order)
    const unsorted = await firstCells(page);
    await page.click('th button.sort:text("Name")');
    await page.waitForSelector('th[aria-sort=ascending]');
    await page.waitForFunction(() => document.querySelector('table.objects tbody td:nth-child(3)')?.textContent === 'Anna Bauer');
    const ascending = await firstCells(page);
    expect(ascending).toEqual([...unsorted].sort());
    await page.click('th button.sort:text("Name")');
    await page.waitForSelector('th[aria-sort=descending]');
    await page.waitForFunction(() => document.querySelector('table.objects tbody td:nth-child(3)')?.textContent === 'Ida Wolf');
    expect(await firstCells(page)).toEqual([...unsorted].sort().reverse());

    // a row opens its panel; a reference opens the next one over it; Esc goes back, then closes
    await page.click('table.objects tbody tr >> nth=0');
    await page.waitForSelector('.panel.top dl.fields');
    const customer = await page.getAttribute('.panel.top', 'data-object');
    expect(await page.textContent('.panel.top')).toContain('~SecurityRights');
    await expectAccessible(page, 'object panel');
    await page.click('.panel.top [data-field=AccountManager] a.ref');
    await page.waitForSelector('.panel.top h2:text("Employee")');
    expect(await page.$$('.panel')).toHaveLength(2);
    expect(page.url()).toContain(`open=${customer},EMP0000`);
    // referenced by (GET /v1/object/{id}/referencedBy): the customers this employee manages, a page at a time
    await page.waitForSelector('.panel.top .referenced-by li');
    expect(await page.$$('.panel.top .referenced-by li')).toHaveLength(20);
    expect(await page.textContent('.panel.top .referenced-by .pager')).toMatch(/Page 1 of (8|9)/);
    const employee = await page.getAttribute('.panel.top', 'data-object');
    await expectAccessible(page, 'referenced by');
    // one of them opens as a third panel, whose account manager is this employee; Esc goes back
    await page.click('.panel.top .referenced-by li a >> nth=0');
    await page.waitForFunction(() => document.querySelectorAll('.panel').length === 3);
    await page.waitForSelector(`.panel.top [data-field=AccountManager] a[data-ref="${employee}"]`);
    expect(await page.getAttribute('.panel.top', 'data-object')).toMatch(/^CUS\d{5}$/);
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => document.querySelectorAll('.panel').length === 2);
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => document.querySelectorAll('.panel').length === 1);
    expect(await page.getAttribute('.panel.top', 'data-object')).toBe(customer);
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => document.querySelectorAll('.panel').length === 0);

    // logging out ends the session at the service
    await page.click('header button:text("Log out")');
    await page.waitForSelector('form.login');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('paging, the column choice and order kept per class, a 1 MB field clipped', async () => {
    const { page, problems } = await openStudio(`${main.origin}/_studio/#/class/Customer`);
    await logIn(page);
    await page.waitForSelector('table.objects tbody tr');
    await page.click('button[aria-label="Next page"]');
    await page.waitForSelector('table.objects tbody tr[data-row="0"] a:text("CUS00051")');
    expect(await page.textContent('.pager')).toContain('Page 2 of 6');

    const headers = () => page.$$eval('table.objects thead tr:first-child th:not(.pick)', (cells) => cells.map((cell) => cell.textContent!.trim()));
    expect(await headers()).toEqual(['~ObjectID', 'Name', 'Number', 'City', 'Active', 'Revenue', 'AccountManager']);
    await page.click('details.columns summary');
    await page.uncheck('details.columns li:has-text("Number") input');
    await page.click('button[aria-label="Move City left"]'); // past the hidden Number
    await page.click('button[aria-label="Move City left"]');
    await expectAccessible(page, 'columns');
    expect(await headers()).toEqual(['~ObjectID', 'City', 'Name', 'Active', 'Revenue', 'AccountManager']);
    await page.reload();
    await page.waitForSelector('form.login');
    await logIn(page);
    await page.waitForSelector('table.objects tbody tr');
    expect(await headers()).toEqual(['~ObjectID', 'City', 'Name', 'Active', 'Revenue', 'AccountManager']);

    // an undeclared class: the fields of the page are the columns; a 1 MB value shows its start and how much more there is
    await page.goto(`${main.origin}/_studio/#/class/Note`);
    await page.waitForSelector('table.objects tbody tr');
    expect(await headers()).toEqual(['~ObjectID', 'Title', 'Text']);
    const cell = await page.textContent('table.objects tbody td:nth-child(4)');
    expect(cell!.length).toBeLessThan(200);
    expect(cell).toContain('(999,880 more characters)');
    await page.click('table.objects tbody tr >> nth=0');
    await page.waitForSelector('.panel.top [data-field=Text] button:text("Show all")');
    expect((await page.textContent('.panel.top [data-field=Text] dd'))!.length).toBeLessThan(4200);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('a plain login says so in the header; the choice to stay logged in keeps the session in this tab only', async () => {
    const { page, problems } = await openStudio(`${main.origin}/_studio/#/class/Customer`);
    await page.waitForSelector('input[name=secure]:not([disabled])');
    await page.uncheck('input[name=secure]');
    await page.check('input[name=remember]');
    await logIn(page, { secure: false });
    await page.waitForSelector('table.objects');
    expect(await transport(page)).toBe('plain');
    expect(await page.textContent('header')).toContain('Plain session');
    // nothing of the session in cookies or localStorage; in sessionStorage because it was asked for
    expect(await context!.cookies()).toEqual([]);
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toMatch(/sessionId/);
    expect(await page.evaluate(() => sessionStorage.getItem('odbrest-studio:session'))).toMatch(/sessionId/);
    await page.reload();
    await page.waitForSelector('table.objects');
    // the session ends elsewhere: the next call goes back to the login, which says why
    const saved = JSON.parse((await page.evaluate(() => sessionStorage.getItem('odbrest-studio:session')))!);
    await main.service.fetch(new Request('http://odbrest.test/v1/logout', { method: 'POST', headers: { appkey: 'x', sessionId: saved.credential.sessionId } }));
    // the next call, or the live stream's `end` (the console follows the table's class), goes back to the login
    await page.click('button[aria-label="Next page"]', { timeout: 5_000 }).catch(() => undefined);
    await page.waitForSelector('form.login [role=status]');
    expect(await page.textContent('form.login [role=status]')).toBe('The session ended. Please log in again.');
    expect(await page.evaluate(() => sessionStorage.getItem('odbrest-studio:session'))).toBeNull();
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('the second factor when the login asks for it (341), then the session', async () => {
    const enrolled = await enrol(main.service, { now: () => Date.now(), advance: () => undefined }, 'bob', 'hr');
    const { page, problems } = await openStudio(`${main.origin}/_studio/`);
    await logIn(page, { user: 'bob', password: USERS.bob, app: 'hr' });
    await page.waitForSelector('input[name=code]');
    expect(await page.textContent('[role=alert]')).toContain('needs a second factor');
    await expectAccessible(page, 'second factor');
    await page.fill('input[name=code]', enrolled.backupCodes[0]!);
    await page.press('input[name=code]', 'Enter');
    await page.waitForSelector('table.classes');
    expect(await page.textContent('header')).toContain('Logged in as bob');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('a passkey (virtual authenticator) logs in without a password', async () => {
    const { page, cdp } = await tabWithAuthenticator(context!);
    // register one for alice first
    const registered = await registerPasskey(page, main.origin, await login(main.service, 'alice'));
    expect(registered.status.internalStatus).toBe('0');
    await page.reload();
    await page.waitForSelector('form.login');
    await page.click('button:text("Log in with a passkey")');
    await page.waitForSelector('table.classes');
    expect(await page.textContent('header')).toContain('Logged in as alice');
    expect(await transport(page)).toBe('plain');
    await cdp.detach();
    await page.close();
  }, 120_000);

  test('dark mode follows the system, and the switch overrides it (kept across reloads)', async () => {
    const { page, problems } = await openStudio(`${fixed.origin}/_studio/`);
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForSelector('html[data-theme=dark]');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.waitForSelector('html[data-theme=light]');
    await shoot(page, 'login');
    await page.selectOption('header select >> nth=0', 'dark');
    expect(await page.getAttribute('html', 'data-theme')).toBe('dark');
    await page.reload();
    await page.waitForSelector('form.login');
    expect(await page.getAttribute('html', 'data-theme')).toBe('dark');
    await expectAccessible(page, 'login, dark');
    await logIn(page);
    await page.waitForSelector('table.classes');
    await page.click('a[href="#/class/Customer"]');
    await page.waitForSelector('table.objects tbody tr');
    await expectAccessible(page, 'objects, dark');
    await page.click('table.objects tbody tr >> nth=0');
    await page.waitForSelector('.panel.top dl.fields');
    await expectAccessible(page, 'object panel, dark');
    await shoot(page, 'dark');
    await page.selectOption('header select >> nth=0', 'system');
    await page.keyboard.press('Escape');
    await page.waitForSelector('.panel', { state: 'detached' });
    await shoot(page, 'objects');
    await page.click('table.objects tbody tr >> nth=0');
    await page.click('.panel.top [data-field=AccountManager] a.ref');
    await page.waitForSelector('.panel.top h2:text("Employee")');
    await shoot(page, 'panels');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('keyboard only: log in, / to filter, j/k and Enter to open, Esc to close; German throughout', async () => {
    const { page, problems } = await openStudio(`${main.origin}/_studio/`);
    await page.selectOption('header select >> nth=1', 'de');
    await expect.poll(() => page.textContent('form.login h1')).toBe('Anmelden'); // German is a chunk of its own, loaded when chosen
    await page.focus('input[name=user]');
    await page.keyboard.type('alice');
    await page.keyboard.press('Tab');
    await page.keyboard.type(USERS.alice);
    await page.keyboard.press('Enter');
    await page.waitForSelector('table.classes');
    expect(await page.textContent('header')).toContain('Ende-zu-Ende verschlüsselt');
    await page.keyboard.press('/');
    await page.keyboard.type('Custo');
    await page.keyboard.press('Escape'); // leaves the box
    await page.keyboard.press('Enter');
    await page.waitForSelector('table.objects tbody tr');
    expect(await page.textContent('h1')).toContain('300 Objekte');
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    expect(await page.getAttribute('tr.selected', 'data-row')).toBe('1');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.panel.top[data-object=CUS00002]');
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H2');
    await page.keyboard.press('Escape');
    await page.waitForSelector('.panel', { state: 'detached' });
    await page.keyboard.press('/');
    await page.keyboard.type('Name like "Anna*"');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('h1')?.textContent?.includes('30 Objekte'));
    await expectAccessible(page, 'objects, German');
    expect(problems).toEqual([]);
    await page.selectOption('header select >> nth=1', 'en');
    await page.close();
  }, 120_000);

  test('under a base path and alias, at a path of the host, it logs in and reads', async () => {
    const { page, problems } = await openStudio(`${mounted.origin}/api/db1/tools/studio`);
    expect(page.url()).toBe(`${mounted.origin}/api/db1/tools/studio/`);
    await logIn(page);
    await page.waitForSelector('table.classes');
    expect(await transport(page)).toBe('secure');
    await page.click('a[href="#/class/Customer"]');
    await page.waitForSelector('table.objects tbody tr');
    expect(await page.textContent('h1')).toContain('300 objects');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
