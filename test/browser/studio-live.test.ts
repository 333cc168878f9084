/**
 * The console's live updates under an afternoon's use (issue 54 item 1) in Chromium against a real
 * Node server: ten object panels and three screens opened one after another, then a change made
 * through the API is seen, with no event stream refused `429` and one stream open at the end (the
 * console holds one stream per session and changes its subscriptions). And when the service refuses
 * the stream (`429`: the session's five are taken), the console says live updates are off, and says
 * nothing once they flow again.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, login, USERS } from '../helpers.js';
import { browserAvailable, closeChromium, launchChromium } from '../support/browser.js';
import { logIn, openStudio, serveStudio, stopServers, type Running } from '../support/studio.js';

const hasBrowser = browserAvailable('the studio live-updates browser tests');

let main: Running;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;

beforeAll(async () => {
  if (!hasBrowser) return;
  main = await serveStudio(() => ({ studio: { appNames: ['crm'] }, access: { rules: { Customer: { read: ['*'], create: ['*'], update: ['*'] } } } }));
  ({ context, userDataDir } = await launchChromium());
}, 120_000);

afterAll(async () => {
  await closeChromium(context, userDataDir);
  await stopServers(main);
});

/** The page's event streams: the status of each answer, and how many are open now. */
function watchStreams(page: Page): { statuses: number[]; open: () => number } {
  const statuses: number[] = [];
  let started = 0;
  let ended = 0;
  const isStream = (url: string) => /\/v1\/events\?/.test(url);
  page.on('response', (response) => {
    if (!isStream(response.url())) return;
    statuses.push(response.status());
    if (response.status() === 200) started++;
  });
  page.on('requestfinished', (request) => isStream(request.url()) && void request.response().then((response) => response?.status() === 200 && ended++));
  page.on('requestfailed', (request) => isStream(request.url()) && void request.response().then((response) => response?.status() === 200 && ended++).catch(() => undefined));
  return { statuses, open: () => started - ended };
}

const go = (page: Page, hash: string) => page.evaluate((target) => (location.hash = target), hash);

describe.skipIf(!hasBrowser)('studio live updates', () => {
  test('ten panels and three screens, then a change through the API is seen: no 429, one stream', async () => {
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/classes`);
    const streams = watchStreams(page);
    await logIn(page);
    await page.waitForSelector('table');
    for (let i = 1; i <= 10; i++) {
      const id = `CUS${String(i).padStart(5, '0')}`;
      await go(page, `#/class/Customer?open=${id}`);
      await page.waitForSelector(`.panel.top[data-object=${id}] dl.fields`);
    }
    for (const screen of ['#/events', '#/class/Employee', '#/classes']) {
      await go(page, screen);
      await page.waitForSelector('main h1');
    }
    // the Events screen with a panel over it: both follow through the one stream
    await go(page, '#/events?open=CUS00003');
    await page.waitForSelector('.panel.top[data-object=CUS00003] dl.fields');
    await expect.poll(() => page.getAttribute('[data-state]', 'data-state')).toBe('live');
    await expect.poll(streams.open, { timeout: 10_000 }).toBe(1);

    const bob = await login(main.service, 'bob');
    const created = await call(main.service, 'POST', '/v1/object/Customer', { headers: { sessionId: bob }, json: { Name: 'Seen live', City: 'Kiel' } });
    const id = created.body.data['~ObjectID'] as string;
    await page.waitForSelector(`table.event-log tr[data-kind=create][data-object="${id}"]`, { timeout: 15_000 });
    await call(main.service, 'PATCH', '/v1/object/CUS00003', { headers: { sessionId: bob }, json: { City: 'Changed live' } });
    await page.waitForSelector('.panel.top[data-object=CUS00003] [data-field=City] >> text=Changed live', { timeout: 15_000 });

    expect(streams.statuses.filter((status) => status !== 200)).toEqual([]);
    expect(streams.statuses.length).toBeGreaterThan(0);
    await expect.poll(streams.open, { timeout: 10_000 }).toBe(1);
    expect(await page.$('.live-off')).toBeNull();
    expect(problems).toEqual([]);
    await page.close();
  });

  test('a refused stream (429) is shown as live updates off, and the notice goes once they flow', async () => {
    const { page } = await openStudio(context!, `${main.origin}/_studio/#/classes`);
    // a plain session kept in this tab: its id is the page's, so the test can take the session's five streams
    await page.fill('input[name=user]', 'alice');
    await page.fill('input[name=password]', USERS.alice);
    await page.fill('input[name=application]', 'crm');
    await page.waitForSelector('input[name=secure]:not([disabled])');
    await page.uncheck('input[name=secure]');
    await page.check('input[name=remember]');
    await page.press('input[name=password]', 'Enter');
    await page.waitForSelector('table');
    const sessionId = await page.evaluate(() => JSON.parse(sessionStorage.getItem('odbrest-studio:session') ?? '{}').credential?.sessionId as string);
    expect(sessionId).toMatch(/./);
    const taken: AbortController[] = [];
    for (let i = 0; i < 5; i++) {
      const abort = new AbortController();
      const response = await fetch(`${main.origin}/v1/events?subscribe=${encodeURIComponent('[{"className":"Employee"}]')}`, { headers: { appkey: 'odbrest-studio', sessionId }, signal: abort.signal });
      expect(response.status).toBe(200);
      taken.push(abort);
    }
    await go(page, '#/events');
    await page.waitForSelector('.live-off[data-code="429"]', { timeout: 15_000 });
    expect(await page.getAttribute('[data-state]', 'data-state')).toBe('off');
    for (const abort of taken) abort.abort();
    await page.waitForSelector('.live-off', { state: 'detached', timeout: 30_000 });
    await expect.poll(() => page.getAttribute('[data-state]', 'data-state')).toBe('live');
    await page.close();
  });
});
