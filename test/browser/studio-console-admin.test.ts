/**
 * The studio as the admin console, its remaining screens (docs/studio.md, issue 43 items 1, 4 and 6) in
 * Chromium against a real server on the demo's rules with `users.admins: admins` (alice is in it, bob is
 * not): the model edited (a class declared, changed, refused with the 409's count and examples, deleted
 * once empty; the host's classes read-only; no edit controls for bob), on the memory store and on
 * PostgreSQL; saved views (saved from a table, listed beside the classes, opened with their query,
 * order and columns, deleted); the metrics and recent requests (uPlot loaded on that screen only, a
 * request followed by its X-Request-Id). Every screen is checked with axe-core and under the studio's CSP.
 */
import type { BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryObjectStore, type ObjectStore } from '../../src/index.js';
import { studioFiles } from '../../src/studio/assets.generated.js';
import { PostgresObjectStore } from '../../stores/postgres.js';
import { call, login } from '../helpers.js';
import { browserAvailable, closeChromium, launchChromium } from '../support/browser.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from '../support/servers.js';
import { expectAccessible, logIn, openStudio, serveStudio, shoot, stopServers, type Running } from '../support/studio.js';
import { demoAccess } from '../../examples/demo-access.mjs';

const hasBrowser = browserAvailable('the studio console administration browser tests');
const hasPostgres = hasBrowser && (await serverAvailable('PostgreSQL', 'the studio model editor on PostgreSQL'));
const schema = `odbrest_studio_model_${RUN_ID}`;
const BOB = { user: 'bob', password: 'bob-secret', app: 'crm' };

let context: BrowserContext | undefined;
let userDataDir: string | undefined;
const serve = (store: ObjectStore) => serveStudio(() => ({ store, access: demoAccess, users: { admins: 'admins' }, studio: { appNames: ['crm'] } }));

beforeAll(async () => {
  if (hasBrowser) ({ context, userDataDir } = await launchChromium());
}, 120_000);

afterAll(async () => {
  await closeChromium(context, userDataDir); // the browser first: the servers' close waits for its connections
});

/** The data of a request as `sessionId` (or its internalStatus when refused). */
async function send(running: Running, method: string, path: string, sessionId: string, json?: unknown): Promise<any> {
  const answer = await call(running.service, method, path, { headers: { sessionId }, json });
  return answer.status === 200 ? answer.body.data : answer.body.status.internalStatus;
}
const structure = async (running: Running, className: string, sessionId: string) => (await send(running, 'GET', `/v1/model/structure?classes=${className}`, sessionId))['~Elements'][0];

/** The HTTP status of the studio's question whether the session is an administrator, once the page has drawn what follows from it. */
async function adminProbe(page: Page): Promise<number> {
  const answer = await page.waitForResponse((response) => response.url().includes('/v1/admin/metrics?minutes=1'));
  await page.evaluate(() => new Promise((drawn) => requestAnimationFrame(() => requestAnimationFrame(drawn))));
  return answer.status();
}

/** Fills the last row of the fields table. */
async function fillField(page: Page, field: { name: string; type: string; required?: boolean; refClass?: string; maxLength?: string; min?: string; max?: string; enumText?: string; indexed?: boolean }) {
  const row = page.locator('.fields-editor tbody tr').last();
  await row.locator('input[name=field-name]').fill(field.name);
  await row.locator('select[name=field-type]').selectOption(field.type);
  if (field.required) await row.locator('input[name=field-required]').check();
  if (field.refClass) await row.locator('input[name=field-class]').fill(field.refClass);
  if (field.maxLength) await row.locator('input[name=field-maxlength]').fill(field.maxLength);
  if (field.min) await row.locator('input[name=field-min]').fill(field.min);
  if (field.max) await row.locator('input[name=field-max]').fill(field.max);
  if (field.enumText) await row.locator('input[name=field-enum]').fill(field.enumText);
  if (field.indexed) await row.locator('input[name=field-index]').check();
}

const stores: Array<[string, boolean, () => ObjectStore]> = [
  ['the memory store', hasBrowser, () => new MemoryObjectStore()],
  ['PostgreSQL', hasPostgres, () => new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' })],
];

for (const [storeName, available, makeStore] of stores) {
  describe.runIf(available)(`the model editor on ${storeName}`, () => {
    let main: Running;
    let store: ObjectStore;
    beforeAll(async () => {
      store = makeStore();
      main = await serve(store);
    }, 120_000);
    afterAll(async () => {
      await stopServers(main);
      if (store instanceof PostgresObjectStore) {
        await store.close();
        await dropSchema(schema);
      }
    });

    test('an administrator declares a class, changes it, sees a change stored objects would break refused with its count and examples, and deletes it once empty; the host classes are read-only', async () => {
      const alice = await login(main.service, 'alice');
      const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/model`);
      await logIn(page);
      await page.waitForSelector('table.model-class[data-class=Customer][data-declared-by=host]');
      expect(await page.textContent('table.model-class[data-class=Customer] caption')).toContain('declared by the host (read-only)');
      expect(await page.$('table.model-class[data-class=Customer] button')).toBeNull();

      // a new class: four fields, an index, an access rule
      await page.click('button:text("New class")');
      await page.fill('input[name=class-name]', 'Ticket');
      await page.fill('input[name=class-description]', 'Support tickets');
      await fillField(page, { name: 'Title', type: 'string', required: true, maxLength: '200' });
      await page.click('button:text("Add field")');
      await fillField(page, { name: 'Priority', type: 'integer', min: '1', max: '5', indexed: true });
      await page.click('button:text("Add field")');
      await fillField(page, { name: 'Customer', type: 'ref', refClass: 'Customer' });
      await page.click('button:text("Add field")');
      await fillField(page, { name: 'Status', type: 'string', enumText: 'open, closed' });
      for (const [action, groups] of [['read', '*'], ['create', 'sales'], ['update', 'sales'], ['delete', 'admins']]) await page.fill(`input[name=access-${action}]`, groups!);
      await expectAccessible(page, 'model editor');
      await page.$eval('form.class-editor', (form) => form.scrollIntoView());
      await shoot(page, 'model-editor');
      await page.click('button:text("Declare class")');
      await page.waitForSelector('table.model-class[data-class=Ticket][data-declared-by=runtime]');
      const declared = await structure(main, 'Ticket', alice);
      expect(declared).toMatchObject({ Declared: true, Runtime: true, Description: 'Support tickets', Access: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'] } });
      expect(declared.Members.filter((member: any) => !member.Base)).toEqual([
        { Name: 'Title', Type: 'string', Required: true, MaxLength: 200 },
        { Name: 'Priority', Type: 'integer', Required: false, Min: 1, Max: 5 },
        { Name: 'Customer', Type: 'ref', Class: 'Customer', Required: false },
        { Name: 'Status', Type: 'string', Required: false, Values: ['open', 'closed'] },
      ]);
      expect(declared.Indices.map((index: any) => index.Members)).toContainEqual(['Priority']);
      expect(await page.textContent('table.model-class[data-class=Ticket] tr[data-field=Priority]')).toBe('Priorityinteger (1…5)noyes');
      // the service checks writes against it
      const ids: string[] = [];
      for (const priority of [2, 5, 4]) ids.push((await send(main, 'POST', '/v1/object/Ticket', alice, { Title: `T${priority}`, Priority: priority, Customer: { '~ObjectID': 'CUS00001' } }))['~ObjectID']);
      expect(await send(main, 'POST', '/v1/object/Ticket', alice, { Title: 'too urgent', Priority: 9 })).toBe('400');

      // narrowing Priority to 1…3 would break two stored tickets: the 409's count and examples, nothing changed
      await page.click('button:text("Edit Ticket")');
      await page.waitForSelector('form.class-editor[data-class=Ticket]');
      await page.fill('tr[data-field-row=Priority] input[name=field-max]', '3');
      await page.click('button:text("Save declaration")');
      await page.waitForSelector('.model-violations[data-violations="2"]');
      expect(await page.textContent('.model-violations')).toContain('2 stored objects would not satisfy this declaration, so nothing was changed');
      expect((await page.$$eval('.model-violations li a', (links) => links.map((link) => link.textContent))).sort()).toEqual([ids[1], ids[2]].sort());
      expect((await structure(main, 'Ticket', alice)).Members.find((member: any) => member.Name === 'Priority').Max).toBe(5);
      await expectAccessible(page, 'model 409');
      await shoot(page, 'model-409');
      // an example opens its object
      await page.click(`.model-violations li a:text("${ids[1]}")`);
      await page.waitForSelector(`.panel.top[data-object="${ids[1]}"]`);
      await page.keyboard.press('Escape');

      // a change they satisfy: Max back to 5, Status dropped, undeclared fields refused from now on
      await page.fill('tr[data-field-row=Priority] input[name=field-max]', '5');
      await page.click('tr[data-field-row=Status] button[aria-label="Remove Status"]');
      await page.check('input[name=class-strict]');
      await page.click('button:text("Save declaration")');
      await page.waitForSelector('p[role=status]:has-text("The declaration is saved")');
      const changed = await structure(main, 'Ticket', alice);
      expect(changed.Strict).toBe(true);
      expect(changed.Members.map((member: any) => member.Name)).not.toContain('Status');

      // deleting: refused while it holds objects (the service's 409), done once empty
      await page.click('button:text("Delete Ticket")');
      await page.click('button:text("Delete the declaration of Ticket")');
      await page.waitForSelector('.model p.error');
      expect((await structure(main, 'Ticket', alice)).Declared).toBe(true);
      for (const id of ids) await send(main, 'DELETE', `/v1/object/${id}`, alice);
      await page.click('button:text("Delete Ticket")');
      await page.click('button:text("Delete the declaration of Ticket")');
      await page.waitForSelector('p[role=status]:has-text("The declaration of Ticket is deleted")');
      await page.waitForSelector('table.model-class[data-class=Ticket]', { state: 'detached' }); // the model read again
      expect((await structure(main, 'Ticket', alice))?.Declared ?? false).toBe(false);
      expect(problems).toEqual([]);
      await page.close();

      // bob is no administrator: the model without edit controls, no metrics in the header
      const bobTab = await openStudio(context!, `${main.origin}/_studio/#/model`);
      const probed = adminProbe(bobTab.page);
      await logIn(bobTab.page, BOB);
      await bobTab.page.waitForSelector('table.model-class[data-class=Customer]');
      expect(await probed).toBe(403);
      expect(await bobTab.page.$$('.model button')).toEqual([]);
      expect(await bobTab.page.$('header a:text("Metrics")')).toBeNull();
      await expectAccessible(bobTab.page, 'model without administration');
      expect(bobTab.problems).toEqual([]);
      await bobTab.page.close();
    }, 180_000);
  });
}

describe.runIf(hasBrowser)('saved views and metrics', () => {
  let main: Running;
  beforeAll(async () => {
    main = await serve(new MemoryObjectStore());
  }, 120_000);
  afterAll(() => stopServers(main));

  test('a view (class, query, order, columns) saved by name per user, listed beside the classes, opened by a click and deleted', async () => {
    const alice = await login(main.service, 'alice');
    const bob = await login(main.service, 'bob');
    expect(await send(main, 'PUT', '/v1/savedQueries/Bobs', bob, { Class: 'Customer', Query: '' })).toMatchObject({ Name: 'Bobs' });
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/class/Customer`);
    await logIn(page);
    await page.waitForSelector('table.objects tbody tr');
    await page.fill('input[name=query]', 'City = "Berlin"');
    await page.press('input[name=query]', 'Enter');
    await page.click('th button.sort:has-text("Revenue")');
    await page.click('th button.sort:has-text("Revenue")');
    await page.waitForSelector('th[aria-sort=descending]:has-text("Revenue")');
    await page.click('details.columns summary');
    await page.uncheck('details.columns li:has-text("Active") input');
    await page.click('details.columns summary');
    await page.click('details.save-view summary');
    await page.fill('input[name=view-name]', 'Berlin by revenue');
    await page.click('details.save-view button:text("Save")');
    await page.waitForSelector('.save-view p:has-text("Saved as")');
    const saved = { Name: 'Berlin by revenue', Class: 'Customer', Query: 'City = "Berlin"', OrderBy: '-Revenue', Columns: ['Name', 'Number', 'City', 'Revenue', 'AccountManager'] };
    expect((await send(main, 'GET', '/v1/savedQueries', alice))['~Elements']).toEqual([saved]);

    // beside the classes: alice's own views only; the table's columns forgotten, so the view brings them back
    await page.evaluate(() => localStorage.removeItem('odbrest-studio:columns:Customer'));
    await page.click('header a.brand');
    await page.waitForSelector('.saved-views li[data-view="Berlin by revenue"]');
    expect(await page.$$eval('.saved-views li', (items) => items.map((item) => item.getAttribute('data-view')))).toEqual(['Berlin by revenue']);
    await expectAccessible(page, 'saved views');
    await shoot(page, 'saved-views');
    await page.click('.saved-views a:text("Berlin by revenue")');
    await page.waitForSelector('table.objects tbody tr');
    expect(page.url()).toContain('#/class/Customer');
    expect(await page.inputValue('input[name=query]')).toBe('City = "Berlin"');
    expect(await page.$$eval('table.objects thead th button.sort', (buttons) => buttons.map((button) => button.firstChild!.textContent))).toEqual(saved.Columns);
    expect(await page.getAttribute('th:has(button.sort:has-text("Revenue"))', 'aria-sort')).toBe('descending');
    const expected = await send(main, 'GET', `/v1/objects/Customer?perPage=5&orderBy=-Revenue&query=${encodeURIComponent(JSON.stringify({ queryString: saved.Query }))}`, alice);
    await expect.poll(() => page.textContent('h1')).toContain(`${expected['~UnfilteredCount']} objects`);
    expect((await page.$$eval('table.objects tbody th a', (links) => links.map((link) => link.textContent))).slice(0, 5)).toEqual(expected['~Elements'].map((object: any) => object['~ObjectID']));

    // deleted from the list
    await page.click('header a.brand');
    await page.click('.saved-views button[aria-label="Delete the view Berlin by revenue"]');
    await page.waitForSelector('.saved-views p:has-text("None yet")');
    expect((await send(main, 'GET', '/v1/savedQueries', alice))['~Elements']).toEqual([]);
    expect((await send(main, 'GET', '/v1/savedQueries', bob))['~Elements'].map((view: any) => view.Name)).toEqual(['Bobs']);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('metrics: charts from uPlot (loaded on this screen only), a table per route, the recent requests followed by their X-Request-Id; administrators only', async () => {
    // the chart library and its style sheet: files of the build that nothing before this screen loads
    const chartFiles = Object.entries(studioFiles)
      .filter(([name, file]) => name.startsWith('uPlot.min-') || file.text.includes('u-legend'))
      .map(([name]) => name);
    expect(chartFiles.some((name) => name.endsWith('.css'))).toBe(true);
    expect(chartFiles.some((name) => name.endsWith('.js'))).toBe(true);
    const alice = await login(main.service, 'alice');
    const followed = await call(main.service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: alice, 'X-Request-Id': 'follow-me.42' } });
    expect(followed.headers.get('x-request-id')).toBe('follow-me.42');
    await call(main.service, 'GET', '/v1/object/NOPE00001', { headers: { sessionId: alice, 'X-Request-Id': 'not-found.43' } });

    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/`);
    const loaded: string[] = [];
    page.on('response', (response: Response) => loaded.push(new URL(response.url()).pathname.split('/').pop()!));
    await logIn(page);
    await page.waitForSelector('table.classes');
    await page.click('table.classes a:text("Customer")');
    await page.waitForSelector('table.objects tbody tr');
    await page.click('header a:text("Model")');
    await page.waitForSelector('table.model-class');
    expect(loaded.filter((name) => chartFiles.includes(name))).toEqual([]);
    await page.click('header a:text("Metrics")');
    await page.waitForSelector('figure[data-chart=chart-requests] canvas');
    await expect.poll(() => loaded.filter((name) => chartFiles.includes(name)).sort()).toEqual([...chartFiles].sort());
    for (const chart of ['chart-requests', 'chart-latency', 'chart-sessions']) await page.waitForSelector(`figure[data-chart=${chart}] .uplot canvas`);
    // uPlot's style sheet applies (its rule for .u-legend), with no inline style refused by the CSP
    expect(await page.$eval('figure[data-chart=chart-requests] .u-legend', (legend) => getComputedStyle(legend).textAlign)).toBe('center');

    // the route table as the service counts it
    const metrics = await send(main, 'GET', '/v1/admin/metrics?minutes=15', alice);
    const route = metrics.Routes.find((entry: any) => entry.Route === '/v1/object/:id' && entry.Method === 'GET');
    expect(route.Count).toBeGreaterThanOrEqual(2);
    const shownCount = Number(await page.textContent('table.metric-routes tr[data-route="GET /v1/object/:id"] td:nth-of-type(2)'));
    expect(shownCount).toBeGreaterThanOrEqual(2);
    expect(shownCount).toBeLessThanOrEqual(route.Count);

    // one request followed by its id
    await page.fill('input[name=request-filter]', 'follow-me.42');
    await page.waitForSelector('table.recent-requests tr[data-request-id="follow-me.42"]');
    expect(await page.$$eval('table.recent-requests tbody tr', (rows) => rows.map((row) => [...row.children].slice(1).map((cell) => cell.textContent)))).toEqual([
      ['GET', '/v1/object/:id', '200', '0', expect.any(String), 'alice', 'follow-me.42'],
    ]);
    await page.fill('input[name=request-filter]', 'not-found.43');
    await page.waitForSelector('table.recent-requests tr[data-request-id="not-found.43"][data-status="404"]');
    await page.fill('input[name=request-filter]', '');
    await expectAccessible(page, 'metrics');
    await page.evaluate(() => window.scrollTo(0, 0));
    await shoot(page, 'metrics');

    // an hour: the series asked for 60 minutes, a point a minute
    const hour = page.waitForResponse((response) => response.url().includes('/v1/admin/metrics?minutes=60'));
    await page.selectOption('select[name=minutes]', '60');
    await hour;
    await page.waitForSelector('[data-instance]:has-text("a point every 60 s")');
    // German throughout
    await page.selectOption('header select >> nth=1', 'de');
    await page.waitForSelector('h1:text("Metriken")');
    expect(await page.textContent('.metrics')).toContain('Letzte Anfragen');
    await expectAccessible(page, 'metrics in German');
    await page.selectOption('header select >> nth=1', 'en');
    expect(problems).toEqual([]);
    await page.close();

    // bob: no link, and the screen itself says the service's 403
    const bobTab = await openStudio(context!, `${main.origin}/_studio/#/metrics`);
    const probed = adminProbe(bobTab.page);
    await logIn(bobTab.page, BOB);
    await bobTab.page.waitForSelector('.metrics p.error:has-text("only members of the group")');
    expect(await probed).toBe(403);
    expect(await bobTab.page.$('header a:text("Metrics")')).toBeNull();
    expect(bobTab.problems).toEqual([]);
    await bobTab.page.close();
  }, 120_000);
});
