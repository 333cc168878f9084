/**
 * The studio's account screen (docs/studio.md, issue 34 item 8) in Chromium against a real server with
 * `users.admins: admins` (alice is in it, bob is not): everyone sees and ends their own sessions and
 * changes their password; an administrator also lists the users with their two-factor and passkey
 * state, adds one, disables and enables it, sets its groups and password, and ends its sessions. Each
 * screen is checked with axe-core and under the studio's CSP.
 */
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, login, USERS } from '../helpers.js';
import { browserAvailable, closeChromium, launchChromium } from '../support/browser.js';
import { expectAccessible, logIn, openStudio, passkeyScript, registerPasskey, serveStudio, shoot, stopServers, tabWithAuthenticator, type Running } from '../support/studio.js';
import { enrol } from '../two-factor/support.js';

const hasBrowser = browserAvailable('the studio administration browser tests');
const SLOW = { timeout: 30_000 };

let main: Running;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;

beforeAll(async () => {
  if (!hasBrowser) return;
  main = await serveStudio(
    (origin) => ({
      users: { admins: 'admins' },
      studio: { appNames: ['crm'] },
      twoFactor: { policies: { hr: 'optional' }, key: 'the key that seals two-factor secrets in the studio tests', issuer: 'odbrest test' },
      passkeys: { rpID: 'localhost', rpName: 'odbrest test', origins: [origin] },
    }),
    await passkeyScript(),
  );
  ({ context, userDataDir } = await launchChromium());
}, 120_000);

afterAll(async () => {
  await closeChromium(context, userDataDir); // the browser first: the servers' close waits for its connections
  await stopServers(main);
});

const loginStatus = async (user: string, password: string) =>
  (await call(main.service, 'POST', '/v1/login', { json: { user, pass: password, appNames: [] } })).body.status.internalStatus;

describe.skipIf(!hasBrowser)('the account screen', () => {
  test('an administrator lists, adds, disables, regroups and resets users and ends their sessions', async () => {
    const bobElsewhere = await login(main.service, 'bob');
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/`);
    await logIn(page);
    await page.click('header a:text("Account")');
    await page.waitForSelector('tr[data-user=bob]', SLOW);
    expect(await page.locator('table.users tbody th').allTextContents()).toEqual(['alice', 'bob', 'dave', 'extern']);
    expect(await page.locator('tr[data-user=alice] td').allTextContents()).toEqual(['admins, sales', 'no', 'no', '0', expect.stringContaining('Disable alice')]);
    await expectAccessible(page, 'account (administrator)');
    await shoot(page, 'account');

    // add a user, who can log in
    await page.fill('input[name=name]', 'erin');
    await page.fill('form[aria-labelledby=add-user-title] input[name=pass]', 'erin long secret');
    await page.fill('form[aria-labelledby=add-user-title] input[name=groups]', 'sales');
    await page.click('form[aria-labelledby=add-user-title] button[type=submit]');
    await page.waitForSelector('tr[data-user=erin]', SLOW);
    expect(await loginStatus('erin', 'erin long secret')).toBe('0');

    // disable bob: his session ends and his logins are refused; enable him again
    await page.click('tr[data-user=bob] button:text("Disable bob")');
    await page.waitForSelector('tr[data-user=bob] button:text("Enable bob")', SLOW);
    expect((await call(main.service, 'GET', '/_CheckSession', { headers: { sessionId: bobElsewhere } })).body.status.internalStatus).toBe('201');
    expect(await loginStatus('bob', USERS.bob)).toBe('302');
    await page.click('tr[data-user=bob] button:text("Enable bob")');
    await page.waitForSelector('tr[data-user=bob] button:text("Disable bob")', SLOW);
    expect(await loginStatus('bob', USERS.bob)).toBe('0');

    // erin's groups and password, and her sessions
    await page.click('tr[data-user=erin] button:text("Manage erin")');
    await page.waitForSelector('[data-user-detail=erin] tr[data-session]', SLOW);
    await expectAccessible(page, 'account, a user opened');
    await page.fill('[data-user-detail=erin] input[name=groups]', 'support, sales');
    await page.fill('[data-user-detail=erin] input[name=pass]', 'erin second secret');
    await page.click('[data-user-detail=erin] button[type=submit]');
    await page.waitForSelector('tr[data-user=erin] td:text("sales, support")', SLOW);
    expect(await loginStatus('erin', 'erin long secret')).toBe('302');
    expect(await loginStatus('erin', 'erin second secret')).toBe('0');
    // closed and opened again, the list shows the session just made
    await page.click('tr[data-user=erin] button:text("Manage erin")');
    await page.waitForSelector('tr[data-user=erin] button[aria-expanded=false]', SLOW);
    await page.click('tr[data-user=erin] button:text("Manage erin")');
    await page.waitForSelector('[data-user-detail=erin] tr[data-session]', SLOW);
    await page.click('[data-user-detail=erin] button:text("End all sessions of erin")');
    await page.waitForSelector('[data-user-detail=erin] :text("No live sessions.")', SLOW);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test("the users list shows a user's passkeys (two, from two virtual authenticators) and two-factor login", async () => {
    const bob = await login(main.service, 'bob');
    for (const name of ['laptop', 'phone']) {
      // one authenticator each: the service lists the passkeys a user holds, and an authenticator holding one declines a second
      const { page, cdp } = await tabWithAuthenticator(context!);
      expect((await registerPasskey(page, main.origin, bob, name)).status.internalStatus).toBe('0');
      await cdp.detach();
      await page.close();
    }
    expect((await call(main.service, 'GET', '/v1/passkeys', { headers: { sessionId: bob } })).body.data['~Elements']).toHaveLength(2);
    await enrol(main.service, { now: () => Date.now(), advance: () => undefined }, 'bob', 'hr');

    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/`);
    await logIn(page);
    await page.click('header a:text("Account")');
    await page.waitForSelector('tr[data-user=bob]', SLOW);
    expect((await page.locator('tr[data-user=bob] td').allTextContents()).slice(1, 4)).toEqual(['no', 'yes', '2']);
    expect((await page.locator('tr[data-user=alice] td').allTextContents()).slice(1, 4)).toEqual(['no', 'no', '0']);
    await expectAccessible(page, 'account, passkeys and two-factor');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  test('a user without the group sees only their own sessions, ends another one, and changes their password', async () => {
    const other = await login(main.service, 'dave', []);
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/`);
    await logIn(page, { user: 'dave', password: USERS.dave, app: '' });
    const usersAnswer = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith('/v1/users'));
    await page.click('header a:text("Account")');
    await page.waitForSelector(`tr[data-session][data-current=false]`, SLOW);
    await usersAnswer; // the refusal is in: the administration stays hidden, and the refusal is no error to show
    await page.evaluate(() => new Promise((drawn) => requestAnimationFrame(() => requestAnimationFrame(drawn)))); // its answer drawn
    expect(await page.locator('#users-title').count()).toBe(0);
    expect(await page.locator('.screen [role=alert]').count()).toBe(0);
    await expectAccessible(page, 'account (user)');
    await page.click('tr[data-current=false] button:text("End session")');
    await page.waitForSelector(':text("The session has ended.")', SLOW);
    expect((await call(main.service, 'GET', '/_CheckSession', { headers: { sessionId: other } })).body.status.internalStatus).toBe('201');
    await page.fill('input[name=current]', 'wrong password');
    await page.fill('input[name=next]', 'dave second secret');
    await page.click('form[aria-labelledby=password-title] button[type=submit]');
    await page.waitForSelector('form[aria-labelledby=password-title] [role=alert]', SLOW);
    await page.fill('input[name=current]', USERS.dave);
    await page.click('form[aria-labelledby=password-title] button[type=submit]');
    await page.waitForSelector(':text("Your password is changed")', SLOW);
    expect(await loginStatus('dave', 'dave second secret')).toBe('0');
    await expectAccessible(page, 'account (user), after a change');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
