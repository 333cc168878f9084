/**
 * The studio as the admin console (docs/studio.md, issue 43 items 2, 3, 4, 5 and 7) in Chromium against
 * a real server on the demo's rules (alice is in `sales` and `admins`; bob in `support` reads customers
 * only), with a `Team` class of a reference and a set of employees: per-column filters that write the
 * query text, sorting; picking rows (click, shift-click, all that match), a field changed on all of them
 * and undone, a delete to the recycle bin and undone, with the objects refused listed and why; references
 * and sets picked by searching their class (a refused query text marked); the live events inspector
 * (class filter, pause and resume, a link to the object); the import of CSV and JSON Lines with a dry run
 * and a progress bar. Every screen is checked with axe-core and under the studio's CSP.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryObjectStore } from '../../src/index.js';
import { call, login } from '../helpers.js';
import { browserAvailable, closeChromium, launchChromium } from '../support/browser.js';
import { expectAccessible, logIn, openStudio, serveStudio, shoot, stopServers, type Running } from '../support/studio.js';
import { demoAccess } from '../../examples/demo-access.mjs';
import { demoSchema } from '../../examples/demo-schema.mjs';

const hasBrowser = browserAvailable('the studio console browser tests');

let main: Running;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;
const store = new MemoryObjectStore();
const SLOW = { timeout: 30_000 };
const TEAM = { fields: { Name: { type: 'string', required: true }, Lead: { type: 'ref', class: 'Employee' }, Members: { type: 'set', class: 'Employee' } } } as const;

beforeAll(async () => {
  if (!hasBrowser) return;
  main = await serveStudio(() => ({
    store,
    schema: { ...demoSchema, Team: TEAM },
    access: { ...demoAccess, rules: { ...demoAccess.rules, Team: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'] } } },
    studio: { appNames: ['crm'] },
  }));
  ({ context, userDataDir } = await launchChromium());
}, 120_000);

afterAll(async () => {
  await closeChromium(context, userDataDir);
  await stopServers(main);
});

/** The data of a GET as `sessionId` (or its internalStatus when refused). */
async function read(path: string, sessionId: string): Promise<any> {
  const answer = await call(main.service, 'GET', path, { headers: { sessionId } });
  return answer.status === 200 ? answer.body.data : answer.body.status.internalStatus;
}
const listing = (className: string, queryText: string, sessionId: string, extra = '') =>
  read(`/v1/objects/${className}?perPage=1000&query=${encodeURIComponent(JSON.stringify({ queryString: queryText }))}${extra}`, sessionId);
const column = (page: Page, index: number) => page.$$eval(`table.objects tbody tr td:nth-child(${index})`, (cells) => cells.map((cell) => cell.textContent ?? ''));

describe.skipIf(!hasBrowser)('studio console', () => {
  test('per-column filters write the query text, which stays editable; sorting by any column', async () => {
    const alice = await login(main.service, 'alice');
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/class/Customer`);
    await logIn(page);
    await page.waitForSelector('table.objects tbody tr');
    await page.fill('input[data-filter=City]', 'ber');
    await page.press('input[data-filter=City]', 'Enter');
    await expect.poll(() => page.inputValue('input[name=query]')).toBe('City like "*ber*"');
    await page.fill('input[data-filter=Revenue]', '>= 50000');
    await page.press('input[data-filter=Revenue]', 'Enter');
    const text = 'City like "*ber*" and Revenue >= 50000';
    await expect.poll(() => page.inputValue('input[name=query]')).toBe(text);
    const expected = await listing('Customer', text, alice);
    await expect.poll(() => page.textContent('h1')).toContain(`${expected['~UnfilteredCount']} objects`);
    expect(expected['~UnfilteredCount']).toBeGreaterThan(0);
    // columns: pick, ~ObjectID (th), Name, Number, City, Active, Revenue
    expect(new Set(await column(page, 5))).toEqual(new Set(['Berlin']));
    await expectAccessible(page, 'filters');
    await shoot(page, 'filters');

    // a filter changed again replaces its comparison; the text edited by hand keeps what the person wrote
    await page.fill('input[data-filter=City]', 'Hamburg');
    await page.press('input[data-filter=City]', 'Enter');
    await expect.poll(() => page.inputValue('input[name=query]')).toBe('Revenue >= 50000 and City like "*Hamburg*"');
    await page.fill('input[name=query]', 'Revenue >= 50000 or Number = 7');
    await page.press('input[name=query]', 'Enter');
    await page.fill('input[data-filter=Active]', 'true');
    await page.press('input[data-filter=Active]', 'Enter');
    const edited = '(Revenue >= 50000 or Number = 7) and Active = true';
    await expect.poll(() => page.inputValue('input[name=query]')).toBe(edited);
    await expect.poll(() => page.textContent('h1')).toContain(`${(await listing('Customer', edited, alice))['~UnfilteredCount']} objects`);

    // sorting by any column: Revenue descending, then Name ascending
    await page.click('button:text("Clear")');
    await page.click('th button.sort:has-text("Revenue")');
    await page.click('th button.sort:has-text("Revenue")');
    const byRevenue = (await read('/v1/objects/Customer?perPage=3&orderBy=-Revenue', alice))['~Elements'].map((object: any) => String(object.Revenue));
    await expect.poll(async () => (await column(page, 7)).slice(0, 3)).toEqual(byRevenue);
    await page.click('th button.sort:has-text("Name")');
    const byName = (await read('/v1/objects/Customer?perPage=3&orderBy=Name', alice))['~Elements'].map((object: any) => object.Name);
    await expect.poll(async () => (await column(page, 3)).slice(0, 3)).toEqual(byName);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('bulk: pick by click and shift-click, change one field on all with one Undo; delete all that match to the recycle bin, undone', async () => {
    const alice = await login(main.service, 'alice');
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/class/Customer`);
    await logIn(page);
    await page.waitForSelector('table.objects tbody tr');
    await page.fill('input[name=query]', 'City = "Vienna"');
    await page.press('input[name=query]', 'Enter');
    await expect.poll(() => page.textContent('h1')).toContain('50 objects');
    const ids = await page.$$eval('table.objects tbody th a', (links) => links.map((link) => link.textContent!));
    const before = await Promise.all(ids.slice(0, 5).map((id) => read(`/v1/object/${id}`, alice)));
    await page.click('tr[data-row="0"] td.pick input');
    await page.click('tr[data-row="4"] td.pick input', { modifiers: ['Shift'] });
    await page.waitForSelector('.bulk-bar [data-picked="5"]');
    await page.selectOption('.bulk-bar select', 'Revenue');
    await page.fill('.bulk-bar #bulk-value', '12345');
    await expectAccessible(page, 'bulk');
    await shoot(page, 'bulk');
    await page.click('.bulk-bar button:text("Change on 5")');
    await page.waitForSelector('.notice:has-text("Revenue changed on 5 objects")');
    for (const id of ids.slice(0, 5)) expect((await read(`/v1/object/${id}`, alice)).Revenue).toBe(12345);
    expect((await read(`/v1/object/${ids[5]}`, alice)).Revenue).not.toBe(12345);
    await page.click('.notice button:text("Undo")');
    await page.waitForSelector('.notice:has-text("Undone for 5 objects")');
    for (const [index, id] of ids.slice(0, 5).entries()) expect((await read(`/v1/object/${id}`, alice)).Revenue).toBe(before[index].Revenue);

    // the whole page, then all that match (more than a page: 50 of Vienna on a page of 50? use Berlin and Hamburg)
    await page.fill('input[name=query]', 'City = "Berlin" or City = "Hamburg"');
    await page.press('input[name=query]', 'Enter');
    await expect.poll(() => page.textContent('h1')).toContain('100 objects');
    await page.check('th.pick input');
    await page.click('button:text("Pick all 100 that match")');
    await page.waitForSelector('.bulk-bar [data-picked="100"]');
    await page.click('.bulk-bar button:text("Delete 100 (to the recycle bin)")');
    await page.waitForSelector('.notice:has-text("100 objects were moved to the recycle bin")');
    expect((await listing('Customer', 'City = "Berlin" or City = "Hamburg"', alice))['~UnfilteredCount']).toBe(0);
    await page.click('.notice button:text("Undo")');
    await page.waitForSelector('.notice:has-text("Undone for 100 objects")');
    expect((await listing('Customer', 'City = "Berlin" or City = "Hamburg"', alice))['~UnfilteredCount']).toBe(100);
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);

  test('bulk: a partial refusal shows which objects and why (no right on one, another locked by a second session)', async () => {
    const alice = await login(main.service, 'alice');
    const second = await login(main.service, 'alice');
    // CUS00031 readable only for alice (per-object security); CUS00037 locked by the second session
    expect((await call(main.service, 'POST', '/v1/setObjectSecurity/CUS00031', { headers: { sessionId: alice }, json: { security: [{ userObjectName: 'alice', rights: 1 }], replace: true } })).status).toBe(200);
    expect((await call(main.service, 'POST', '/v1/lock/object/CUS00037', { headers: { sessionId: second } })).status).toBe(200);
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/class/Customer`);
    await logIn(page);
    await page.waitForSelector('table.objects tbody tr');
    await page.fill('input[name=query]', 'Number in (31, 37, 43)');
    await page.press('input[name=query]', 'Enter');
    await expect.poll(() => page.textContent('h1')).toContain('3 objects');
    await page.check('th.pick input');
    await page.click('.bulk-bar button:text("Delete 3 (to the recycle bin)")');
    await page.waitForSelector('.bulk-confirm tr[data-object=CUS00031]');
    expect(await page.textContent('.bulk-confirm')).toContain('1 of the picked objects would be refused; 2 may be deleted');
    expect(await page.textContent('.bulk-confirm tr[data-object=CUS00031]')).toContain('this session may not delete it');
    await expectAccessible(page, 'bulk refused');
    await page.click('.bulk-confirm button:text("Delete the other 2")');
    await page.waitForSelector('.bulk-refused tr[data-object=CUS00037]');
    expect(await page.textContent('.bulk-refused tr[data-object=CUS00037]')).toMatch(/locked by alice since/);
    expect(await page.textContent('.bulk-refused tr[data-object=CUS00031]')).toContain('this session may not delete it');
    await shoot(page, 'bulk-refused');
    expect(await read('/v1/object/CUS00043', alice)).toBe('404');
    expect((await read('/v1/object/CUS00037', alice))['~ObjectID']).toBe('CUS00037');
    await page.click('.notice button:text("Undo")');
    await expect.poll(async () => (await read('/v1/object/CUS00043', alice))['~ObjectID'], SLOW).toBe('CUS00043');

    await expect.poll(async () => (await page.$$('table.objects tbody tr')).length, SLOW).toBe(3);
    // a change is all or nothing: the lock refuses it whole; the locks of the picked objects say which
    await page.check('th.pick input');
    await page.selectOption('.bulk-bar select', 'City');
    await page.fill('.bulk-bar #bulk-value', 'Nirgendwo');
    await page.click('.bulk-bar button:text("Change on 3")');
    await page.click('.bulk-confirm button:text("Change the other 2")');
    await page.waitForSelector('.bulk .error:has-text("locked by alice")');
    expect(await page.textContent('.bulk-refused tr[data-object=CUS00037]')).toMatch(/locked by alice since/);
    expect(await page.textContent('.bulk-refused tr[data-object=CUS00031]')).toContain('this session may not change it');
    expect(await page.$('.bulk-refused tr[data-object=CUS00043]')).toBeNull();
    expect((await read('/v1/object/CUS00043', alice)).City).not.toBe('Nirgendwo');
    await call(main.service, 'DELETE', '/v1/lock/object/CUS00037', { headers: { sessionId: second } });
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('relations picked, not typed: a reference and a set searched by name (a refused query text marked), a set reordered', async () => {
    const alice = await login(main.service, 'alice');
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/class/Team`);
    await logIn(page);
    await page.waitForSelector('.toolbar button:text("New object")');
    await page.click('button:text("New object")');
    await page.waitForSelector('form.new-object [data-field=Lead] input[data-picker-search]');
    await page.fill('form.new-object [data-field=Name] input', 'Platform');
    // the reference: words over Employee's text fields (Name1, Name2, Name3)
    await page.fill('[data-field=Lead] input[data-picker-search]', 'wagner');
    await page.press('[data-field=Lead] input[data-picker-search]', 'Enter');
    await page.click('[data-field=Lead] button[data-pick=EMP00003]');
    await page.waitForSelector('[data-field=Lead] [data-chosen=EMP00003]:has-text("Erin")');
    // query text the service refuses: its message, the position marked
    await page.fill('[data-field=Members] input[data-picker-search]', 'Name1 = ');
    await page.press('[data-field=Members] input[data-picker-search]', 'Enter');
    await page.waitForSelector('[data-field=Members] .query-marked mark');
    expect(await page.textContent('[data-field=Members] .query-error')).toContain('query text');
    // the set: three added, the last moved up, the first removed
    await page.fill('[data-field=Members] input[data-picker-search]', '');
    await page.click('[data-field=Members] .picker-search button');
    for (const id of ['EMP00001', 'EMP00002', 'EMP00003']) await page.click(`[data-field=Members] button[data-pick=${id}]`);
    await page.waitForSelector('[data-field=Members] li[data-chosen=EMP00003]');
    await page.click('[data-field=Members] li[data-chosen=EMP00003] button[aria-label^="Move"][aria-label$="up"]');
    await page.click('[data-field=Members] li[data-chosen=EMP00001] button[aria-label^="Remove"]');
    expect(await page.$$eval('[data-field=Members] li[data-chosen]', (items) => items.map((item) => item.getAttribute('data-chosen')))).toEqual(['EMP00003', 'EMP00002']);
    await expectAccessible(page, 'picker');
    await shoot(page, 'picker');
    await page.click('form.new-object button:text("Create")');
    await page.waitForSelector('.panel.top .object-actions');
    const id = (await page.getAttribute('.panel.top', 'data-object'))!;
    const team = await read(`/v1/object/${id}`, alice);
    expect(team.Lead['~ObjectID']).toBe('EMP00003');
    expect(team.Members['~Elements'].map((member: any) => member['~ObjectID'])).toEqual(['EMP00003', 'EMP00002']);

    // editing: the chosen objects shown by name; one replaced
    await page.click('.panel.top .object-actions button:text("Edit")');
    await page.waitForSelector('form.object-editor [data-field=Lead] [data-chosen=EMP00003]:has-text("Erin")');
    await page.fill('form.object-editor [data-field=Lead] input[data-picker-search]', 'head of');
    await page.press('form.object-editor [data-field=Lead] input[data-picker-search]', 'Enter');
    await page.click('form.object-editor [data-field=Lead] button[data-pick=EMP00001]');
    await page.click('form.object-editor button:text("Save")');
    await expect.poll(async () => (await read(`/v1/object/${id}`, alice)).Lead['~ObjectID'], SLOW).toBe('EMP00001');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('live events: class, id, kind and time as they come; a class filter, pause and resume, a link to each object', async () => {
    const second = await login(main.service, 'alice');
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/`);
    await logIn(page);
    await page.waitForSelector('table.classes');
    const streaming = page.waitForResponse((response) => response.url().includes('/v1/events?'));
    await page.click('header a:text("Events")');
    await streaming;
    const created = await call(main.service, 'POST', '/v1/object/Customer', { headers: { sessionId: second }, json: { Name: 'Live Kunde', City: 'Graz' } });
    const id = created.body.data['~ObjectID'];
    await call(main.service, 'PATCH', `/v1/object/${id}`, { headers: { sessionId: second }, json: { City: 'Linz' } });
    await page.waitForSelector(`table.event-log tr[data-kind=update][data-object="${id}"]`);
    expect(await page.textContent(`table.event-log tr[data-kind=create][data-object="${id}"]`)).toMatch(new RegExp(`^\\d{2}:\\d{2}:\\d{2}\\.\\d{3}createdCustomer${id}$`));
    await expectAccessible(page, 'events');
    await shoot(page, 'events');

    // pause: what arrives meanwhile is held, and shown on resume
    await page.click('button:text("Pause")');
    await call(main.service, 'DELETE', `/v1/object/${id}`, { headers: { sessionId: second } });
    await page.waitForSelector('button:text("Resume (1 new)")');
    expect(await page.$(`table.event-log tr[data-kind=delete][data-object="${id}"]`)).toBeNull();
    await page.click('button:text("Resume (1 new)")');
    await page.waitForSelector(`table.event-log tr[data-kind=delete][data-object="${id}"]`);

    // a class filter: only that class's events (the stream follows that class alone)
    const refollowed = page.waitForResponse((response) => response.url().includes('/v1/events?') && response.url().includes('Team'));
    await page.selectOption('.events select', 'Team');
    await refollowed;
    expect(await page.$('table.event-log')).toBeNull();
    const team = await call(main.service, 'POST', '/v1/object/Team', { headers: { sessionId: second }, json: { Name: 'Live team' } });
    const teamId = team.body.data['~ObjectID'];
    await call(main.service, 'POST', '/v1/object/Customer', { headers: { sessionId: second }, json: { Name: 'Not shown' } });
    await page.waitForSelector(`table.event-log tr[data-kind=create][data-object="${teamId}"]`);
    expect(await page.$$eval('table.event-log tbody tr', (rows) => rows.map((row) => row.children[2]!.textContent))).toEqual(['Team']);
    // German throughout
    await page.selectOption('header select >> nth=1', 'de');
    await page.waitForSelector('h1:text("Ereignisse")');
    expect(await page.textContent(`table.event-log tr[data-object="${teamId}"]`)).toContain('angelegt');
    expect(await page.textContent('.events')).toContain('Anhalten');
    await expectAccessible(page, 'events in German');
    await page.selectOption('header select >> nth=1', 'en');
    await page.click(`table.event-log tr[data-object="${teamId}"] a`);
    await page.waitForSelector(`.panel.top[data-object="${teamId}"] [data-field=Name] dd:has-text("Live team")`);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('import: a dry run lists the rows the service would refuse and writes nothing; then CSV and JSON Lines with a progress bar', async () => {
    const alice = await login(main.service, 'alice');
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/class/Customer`);
    await logIn(page);
    await page.waitForSelector('table.objects tbody tr');
    await page.click('.toolbar button:text("Import")');
    const bad = [
      'Name,Number,City,Revenue,AccountManager',
      'Import One,9001,Graz,10,EMP00001',
      ',9002,Graz,10,EMP00001',
      'Import Three,9003,Graz,-5,',
      'Import Four,9004,Graz,10,NOPE0000',
      `"Import, Five",9005,"Gr""az",10,EMP00002`,
    ].join('\r\n');
    await page.setInputFiles('input[name=import]', { name: 'customers.csv', mimeType: 'text/csv', buffer: Buffer.from(bad) });
    await page.click('button:text("Check (dry run)")');
    await page.waitForSelector('.import-report');
    expect(await page.getAttribute('.import-report', 'data-refused')).toBe('3');
    // the service's check (PROTOCOL.md 6.12) in its words, with its code
    expect(await page.getAttribute('.import-report tr[data-line="3"]', 'data-code')).toBe('400');
    expect(await page.textContent('.import-report tr[data-line="3"]')).toContain('Name');
    expect(await page.textContent('.import-report tr[data-line="4"]')).toContain('Revenue');
    expect(await page.textContent('.import-report tr[data-line="5"]')).toContain('NOPE0000');
    expect(await page.$('.import-report button:text("Import")')).toBeNull();
    await expectAccessible(page, 'import dry run');
    await shoot(page, 'import');
    expect((await listing('Customer', 'Number >= 9000', alice))['~UnfilteredCount']).toBe(0);

    // a clean file of 250 rows: written 100 a request, the progress bar between its ends
    const rows = Array.from({ length: 250 }, (_, i) => `Import ${i},${9100 + i},'=Graz,${i},EMP00002`);
    await page.setInputFiles('input[name=import]', { name: 'many.csv', mimeType: 'text/csv', buffer: Buffer.from(['Name,Number,City,Revenue,AccountManager', ...rows].join('\n')) });
    await page.click('button:text("Check (dry run)")');
    await page.waitForSelector('.import-report[data-refused="0"][data-rows="250"]');
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let requests = 0;
    await page.route('**/v1/multi', async (route) => {
      if (++requests === 2) await held;
      await route.continue();
    });
    await page.click('.import-report button:text("Import 250 objects")');
    await page.waitForSelector('.import-progress:has-text("100 of 250 written")');
    expect(await page.getAttribute('.import-progress progress', 'value')).toBe('100');
    release();
    await page.waitForSelector('.notice:has-text("250 objects imported into Customer from many.csv")');
    await page.unroute('**/v1/multi');
    const imported = await listing('Customer', 'Number >= 9100', alice);
    expect(imported['~UnfilteredCount']).toBe(250);
    const one = imported['~Elements'].find((object: any) => object.Number === 9107);
    expect(one).toMatchObject({ Name: 'Import 7', City: '=Graz', Revenue: 7 });
    expect(one.AccountManager['~ObjectID']).toBe('EMP00002');

    // JSON Lines as the export writes them (metadata and nested references)
    const jsonl = [{ '~ObjectID': 'OLD00001', '~ClassName': 'Customer', Name: 'Jay Son', Number: 9500, AccountManager: { '~ObjectID': 'EMP00001', '~ClassName': 'Employee', Name1: 'Alice' } }, { Name: 'Jay Two', Number: 9501 }]
      .map((object) => JSON.stringify(object))
      .join('\n');
    await page.setInputFiles('input[name=import]', { name: 'customers.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(jsonl) });
    await page.click('button:text("Check (dry run)")');
    await page.click('.import-report button:text("Import 2 objects")');
    await page.waitForSelector('.notice:has-text("2 objects imported")');
    const jays = await listing('Customer', 'Number >= 9500', alice);
    expect(jays['~Elements'].map((object: any) => [object.Name, object.AccountManager?.['~ObjectID'] ?? null])).toEqual([
      ['Jay Son', 'EMP00001'],
      ['Jay Two', null],
    ]);
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);
});
