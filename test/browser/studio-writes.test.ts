/**
 * The studio's writes (docs/studio.md, issue 34 item 5) in Chromium against a real server, on the
 * demo's access rules (alice is in `sales` and `admins`): create an object with the editors of its
 * declared fields; edit one under its lock (another session sees the lock while the form is open, and
 * it is released after); a `409` made by a second session shows the stored version beside the edit,
 * to overwrite or reload; a `423` names who holds the lock; delete to the recycle bin with undo, and
 * the recycle bin with restore; a change by another session appearing live. Every screen is checked
 * with axe-core and under the studio's CSP.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryObjectStore } from '../../src/index.js';
import { call, login } from '../helpers.js';
import { browserAvailable, closeChromium, launchChromium } from '../support/browser.js';
import { expectAccessible, logIn, openStudio, serveStudio, shoot, stopServers, type Running } from '../support/studio.js';
import { demoAccess } from '../../examples/demo-access.mjs';

const hasBrowser = browserAvailable('the studio writes browser tests');

let main: Running;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;
const store = new MemoryObjectStore();

beforeAll(async () => {
  if (!hasBrowser) return;
  main = await serveStudio(() => ({ store, access: demoAccess, studio: { appNames: ['crm'] } }));
  ({ context, userDataDir } = await launchChromium());
}, 120_000);

afterAll(async () => {
  await stopServers(main);
  await closeChromium(context, userDataDir);
});

/** The object as the service holds it now, read by a session of its own. */
async function stored(id: string, sessionId: string): Promise<any> {
  const answer = await call(main.service, 'GET', `/v1/object/${id}`, { headers: { sessionId } });
  return answer.status === 200 ? answer.body.data : answer.body.status.internalStatus;
}
/** Polls (the page reads again after a write, over a loaded machine) for up to 30 s. */
const SLOW = { timeout: 30_000 };
const lockSeenBy = async (id: string, sessionId: string) => (await call(main.service, 'GET', `/v1/lock/object/${id}`, { headers: { sessionId } })).body.data;

/** Logs in (secure) and opens a customer's panel. */
async function openCustomer(page: Page, id: string): Promise<void> {
  await page.goto(`${main.origin}/_studio/#/class/Customer?open=${id}`);
  await page.waitForSelector(`.panel.top[data-object=${id}] .object-actions button:text("Edit")`);
}

describe.skipIf(!hasBrowser)('studio writes', () => {
  test('create with the editors of the declared fields, then edit under the lock, released after', async () => {
    const other = await login(main.service, 'bob');
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/class/Customer`);
    await logIn(page);
    await page.waitForSelector('table.objects tbody tr');
    await page.click('button:text("New object")');
    await page.waitForSelector('form.new-object [data-field=AccountManager] input[data-picker-search]');
    // an editor per declared type: text, integer, true/false, number, a reference picked from its class
    expect(await page.getAttribute('form.new-object [data-field=Number] input', 'step')).toBe('1');
    expect(await page.$('form.new-object [data-field=Active] select')).not.toBeNull();
    expect(await page.getAttribute('form.new-object [data-field=AccountManager] input[data-picker-search]', 'placeholder')).toContain('Employee');
    await page.fill('form.new-object [data-field=Name] input', 'Zoe Zimmermann');
    await page.fill('form.new-object [data-field=Number] input', '4711');
    await page.selectOption('form.new-object [data-field=Active] select', 'true');
    await page.fill('form.new-object [data-field=City] input', 'Köln');
    await page.fill('form.new-object [data-field=Revenue] input', '1234.5');
    await page.fill('form.new-object [data-field=AccountManager] input[data-picker-search]', 'Bob');
    await page.press('form.new-object [data-field=AccountManager] input[data-picker-search]', 'Enter');
    await page.click('form.new-object [data-field=AccountManager] button[data-pick=EMP00002]');
    await page.waitForSelector('form.new-object [data-field=AccountManager] [data-chosen=EMP00002]');
    await expectAccessible(page, 'new object');
    await shoot(page, 'create');
    await page.click('form.new-object button:text("Create")');
    await page.waitForSelector('.panel.top .object-actions');
    const id = (await page.getAttribute('.panel.top', 'data-object'))!;
    const created = await stored(id, other);
    expect(created).toMatchObject({ '~ClassName': 'Customer', Name: 'Zoe Zimmermann', Number: 4711, Active: true, City: 'Köln', Revenue: 1234.5 });
    expect(created.AccountManager['~ObjectID']).toBe('EMP00002');
    expect(await page.textContent('h1')).toContain('301 objects'); // the table read again

    // edit: the lock is taken while the form is open (another session sees it), released after the save
    await page.click('.panel.top .object-actions button:text("Edit")');
    await page.waitForSelector('form.object-editor [data-lock=held]');
    expect(await lockSeenBy(id, other)).toEqual({ isLocked: true, messages: [expect.stringMatching(/^locked by alice since /)] });
    expect(await page.inputValue('form.object-editor [data-field=City] input')).toBe('Köln');
    await page.fill('form.object-editor [data-field=City] input', 'Bonn');
    await page.fill('form.object-editor [data-field=Revenue] input', '99');
    await page.fill('form.object-editor [data-field=Number] input', '3.5');
    await page.click('form.object-editor button:text("Save")');
    // the page's own check, before anything is sent (the editor is a whole number's): its words beside the field
    await page.waitForSelector('form.object-editor [data-field=Number] .field-error:text("Not a valid integer.")');
    await page.fill('form.object-editor [data-field=Number] input', '4712');
    await expectAccessible(page, 'edit');
    await shoot(page, 'edit');
    await page.click('form.object-editor button:text("Save")');
    await page.waitForSelector('.panel.top [data-field=City] dd:has-text("Bonn")');
    expect(await stored(id, other)).toMatchObject({ City: 'Bonn', Revenue: 99, Name: 'Zoe Zimmermann' });
    await expect.poll(() => lockSeenBy(id, other), SLOW).toEqual({ isLocked: false, messages: [] });

    // cancelling releases the lock too, and so does closing the panel (Esc)
    await page.click('.panel.top .object-actions button:text("Edit")');
    await page.waitForSelector('form.object-editor [data-lock=held]');
    await page.click('form.object-editor button:text("Cancel")');
    await expect.poll(() => lockSeenBy(id, other), SLOW).toEqual({ isLocked: false, messages: [] });
    await page.click('.panel.top .object-actions button:text("Edit")');
    await page.waitForSelector('form.object-editor [data-lock=held]');
    await page.keyboard.press('Escape');
    await page.waitForSelector('.panel', { state: 'detached' });
    await expect.poll(() => lockSeenBy(id, other), SLOW).toEqual({ isLocked: false, messages: [] });
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('a 409 made by a second session shows the stored version beside the edit: overwrite, or reload; a 423 names who holds the lock', async () => {
    const second = await login(main.service, 'alice');
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/`);
    // the live stream cut (as a proxy that drops it would): the panel keeps what it read, and the save finds out
    await page.route('**/v1/events?*', (route) => route.abort());
    await logIn(page);
    await page.waitForSelector('table.classes');
    await openCustomer(page, 'CUS00007');
    const seen = await page.textContent('.panel.top [data-field=City] dd');

    // the second session changes the object after the studio read it
    const changed = await call(main.service, 'PATCH', '/v1/object/CUS00007', { headers: { sessionId: second }, json: { City: 'Hamburg-Altona' } });
    expect(changed.status).toBe(200);
    expect(seen).not.toBe('Hamburg-Altona');
    await page.click('.panel.top .object-actions button:text("Edit")');
    await page.waitForSelector('form.object-editor [data-lock=held]');
    await page.fill('form.object-editor [data-field=City] input', 'Potsdam');
    await page.click('form.object-editor button:text("Save")');
    await page.waitForSelector('.conflict');
    expect(await page.textContent('.conflict tr[data-field=City] .mine')).toBe('Potsdam');
    expect(await page.textContent('.conflict tr[data-field=City] .stored')).toBe('Hamburg-Altona');
    await expectAccessible(page, 'conflict');
    await shoot(page, 'conflict');
    await page.click('.conflict button:text("Overwrite with my edit")');
    await page.waitForSelector('.panel.top [data-field=City] dd:has-text("Potsdam")');
    expect((await stored('CUS00007', second)).City).toBe('Potsdam');

    // again, and this time the person drops their edit for the stored version
    await call(main.service, 'PATCH', '/v1/object/CUS00007', { headers: { sessionId: second }, json: { City: 'Rostock' } });
    await page.click('.panel.top .object-actions button:text("Edit")');
    await page.waitForSelector('form.object-editor [data-lock=held]');
    await page.fill('form.object-editor [data-field=City] input', 'Leipzig');
    await page.click('form.object-editor button:text("Save")');
    await page.click('.conflict button:text("Reload (drop my edit)")');
    expect(await page.inputValue('form.object-editor [data-field=City] input')).toBe('Rostock');
    await page.click('form.object-editor button:text("Cancel")');
    expect((await stored('CUS00007', second)).City).toBe('Rostock');

    // the second session holds the lock: the studio says who, and offers no form
    await expect.poll(() => lockSeenBy('CUS00007', second), SLOW).toEqual({ isLocked: false, messages: [] }); // the studio released its lock
    expect((await call(main.service, 'POST', '/v1/lock/object/CUS00007', { headers: { sessionId: second } })).status).toBe(200);
    await page.click('.panel.top .object-actions button:text("Edit")');
    await page.waitForSelector('form.object-editor [role=alert]');
    expect(await page.textContent('form.object-editor [role=alert]')).toMatch(/Someone else is editing this object: this object is locked by alice since \d{8}T\d{6}/);
    expect(await page.$('form.object-editor [data-field=City]')).toBeNull();
    await expectAccessible(page, 'locked');
    await page.click('form.object-editor button:text("Cancel")');
    await call(main.service, 'DELETE', '/v1/lock/object/CUS00007', { headers: { sessionId: second } });
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('delete to the recycle bin with undo; the recycle bin restores', async () => {
    const other = await login(main.service, 'bob');
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/`);
    await logIn(page);
    await page.waitForSelector('table.classes');
    await openCustomer(page, 'CUS00011');
    await page.waitForSelector('table.objects tbody tr');
    const count = async () => Number(/([\d,]+) objects/.exec((await page.textContent('h1')) ?? '')?.[1]?.replace(',', ''));
    const before = await count();
    await page.click('.panel.top .object-actions button:text("Delete (to the recycle bin)")');
    await page.waitForSelector('.panel', { state: 'detached' });
    await page.waitForSelector('.notice:has-text("was moved to the recycle bin")');
    expect(await stored('CUS00011', other)).toBe('404');
    await expect.poll(count, SLOW).toBe(before - 1);
    await expectAccessible(page, 'deleted, undo offered');
    await page.click('.notice button:text("Undo")');
    await expect.poll(() => stored('CUS00011', other), SLOW).toMatchObject({ '~ObjectID': 'CUS00011' });
    await expect.poll(count, SLOW).toBe(before);

    await openCustomer(page, 'CUS00012');
    await page.click('.panel.top .object-actions button:text("Delete (to the recycle bin)")');
    await page.waitForSelector('.panel', { state: 'detached' });
    await page.click('header a:text("Recycle bin")');
    await page.waitForSelector('table.bin tr[data-object=CUS00012]');
    expect(await page.textContent('table.bin tr[data-object=CUS00012]')).toMatch(/CUS00012.*\d{8}T\d{6}/);
    await expectAccessible(page, 'recycle bin');
    await shoot(page, 'recycle-bin');
    await page.click('table.bin tr[data-object=CUS00012] button:text("Restore")');
    await page.waitForSelector('table.bin tr[data-object=CUS00012]', { state: 'detached' });
    expect(await stored('CUS00012', other)).toMatchObject({ '~ObjectID': 'CUS00012' });
    await page.click('.notice button:text("Open")');
    await page.waitForSelector('.panel.top[data-object=CUS00012]');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('live: a change by another session appears in the open table and panel', async () => {
    const second = await login(main.service, 'alice');
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/`);
    await logIn(page);
    await page.waitForSelector('table.classes');
    await openCustomer(page, 'CUS00002');
    await page.waitForSelector('table.objects tbody tr[data-row="1"]');
    await call(main.service, 'PATCH', '/v1/object/CUS00002', { headers: { sessionId: second }, json: { City: 'Live-Stadt' } });
    await page.waitForSelector('.panel.top [data-field=City] dd:has-text("Live-Stadt")');
    await page.waitForSelector('table.objects tbody tr[data-row="1"] td:has-text("Live-Stadt")');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
