/**
 * Uploads in the studio (docs/studio.md, issue 34 item 6) in Chromium against a real server: a new
 * file object from the file class's table and new bytes for one from its panel, each with a progress
 * bar fed by the client's `onProgress`, on a secure session (the ciphertext a Blob, since a browser
 * cannot stream a request body over HTTP/1.1) and on a plain one; the bytes the service stored are
 * the file's; a file above the service's `maxUploadBytes` is refused before a byte is sent. The
 * network is throttled (DevTools) so that the bar is seen between its ends.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryObjectStore } from '../../src/index.js';
import { createClient } from '../../src/client/index.js';
import { USERS } from '../helpers.js';
import { browserAvailable, closeChromium, launchChromium } from '../support/browser.js';
import { demoAccess } from '../../examples/demo-access.mjs';
import { expectAccessible, logIn, openStudio, serveStudio, shoot, stopServers, type Running } from '../support/studio.js';

const hasBrowser = browserAvailable('the studio upload browser tests');
const MAX_UPLOAD = 2 * 1024 * 1024;

let files: Running;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;

beforeAll(async () => {
  if (!hasBrowser) return;
  // the demo's rules: every session uploads files, alice (admins) replaces them
  files = await serveStudio(() => ({ store: new MemoryObjectStore(), access: demoAccess, files: { maxUploadBytes: MAX_UPLOAD }, studio: { appNames: ['crm'] } }));
  ({ context, userDataDir } = await launchChromium());
}, 120_000);

afterAll(async () => {
  await stopServers(files);
  await closeChromium(context, userDataDir);
});

/** The bytes the service holds for a file object, read by a session of alice's own. */
async function storedBytes(id: string): Promise<Buffer> {
  const client = createClient({ baseUrl: files.origin, appKey: 'odbrest-studio' });
  await client.login({ user: 'alice', password: USERS.alice as string, appNames: ['crm'] });
  return Buffer.from(await new Response((await client.downloadFile(id)).stream).arrayBuffer());
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Records every value the page's upload progress bar shows, as `[value, max]`, in `window.seenProgress`. */
async function watchProgress(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: Array<[number, number]> = ((window as any).seenProgress = []);
    new MutationObserver(() => {
      const bar = document.querySelector<HTMLProgressElement>('form.upload progress');
      if (bar && seen.at(-1)?.[0] !== bar.value) seen.push([bar.value, bar.max]);
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
}

/** Upload speed as DevTools throttles it (bytes per second), or unthrottled. */
async function throttle(page: Page, bytesPerSecond: number | undefined): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: bytesPerSecond ?? -1 });
}

describe.skipIf(!hasBrowser)('studio uploads', () => {
  for (const secure of [true, false]) {
    test(`a new file from the file class's table and new bytes from its panel, with a progress bar (${secure ? 'secure' : 'plain'} session)`, async () => {
      const { page, problems } = await openStudio(context!, `${files.origin}/_studio/#/class/Document`);
      await logIn(page, { secure });
      await page.waitForSelector(`[data-transport=${secure ? 'secure' : 'plain'}]`);
      await page.waitForSelector('form.upload input[type=file]');
      await expectAccessible(page, 'upload form');

      const bytes = randomBytes(1_500_000);
      await page.setInputFiles('form.upload input[type=file]', { name: 'Messwerte.bin', mimeType: 'application/octet-stream', buffer: bytes });
      await watchProgress(page);
      await throttle(page, 1_000_000);
      await page.click('form.upload button[type=submit]');
      // the new object opens in a panel once the service has it
      await page.waitForSelector('.panel.top [data-field=Name]:has-text("Messwerte.bin")', { timeout: 60_000 });
      await throttle(page, undefined);
      const id = (await page.getAttribute('.panel.top', 'data-object'))!;
      expect(sha256(await storedBytes(id))).toBe(sha256(bytes));
      expect(await page.textContent('.notice')).toContain('Messwerte.bin is uploaded (1,500,000 bytes).');
      const seen: Array<[number, number]> = await page.evaluate(() => (window as any).seenProgress);
      expect(seen.every(([, max]) => max === bytes.length)).toBe(true);
      expect(seen.some(([value]) => value > 0 && value < bytes.length), JSON.stringify(seen)).toBe(true); // seen between its ends
      expect(seen.map(([value]) => value)).toEqual(seen.map(([value]) => value).sort((a, b) => a - b));
      // the table lists it
      await page.waitForSelector(`table.objects a:text("${id}")`);

      // new bytes for it, from its panel: same object, new size and hash, the preview follows
      await page.setInputFiles('.panel.top form.upload input[type=file]', { name: 'note.txt', mimeType: 'text/plain', buffer: Buffer.from('Grüße aus dem Studio\n') });
      if (secure) await shoot(page, 'upload');
      await page.click('.panel.top form.upload button[type=submit]');
      await page.waitForSelector('.panel.top pre.file-preview:has-text("Grüße aus dem Studio")');
      expect(await page.getAttribute('.panel.top', 'data-object')).toBe(id);
      expect(await page.textContent('.panel.top [data-field=ContentType]')).toContain('text/plain');
      expect((await storedBytes(id)).toString('utf8')).toBe('Grüße aus dem Studio\n');
      expect(problems).toEqual([]);
      await page.close();
    }, 180_000);
  }

  test("a file above the service's maxUploadBytes is refused before a byte is sent", async () => {
    const { page, problems } = await openStudio(context!, `${files.origin}/_studio/#/class/Document`);
    await logIn(page);
    await page.waitForSelector('form.upload input[type=file]');
    const sent: string[] = [];
    page.on('request', (request) => request.url().includes('/v1/uploadFile') && sent.push(request.method()));
    await page.setInputFiles('form.upload input[type=file]', { name: 'gross.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(MAX_UPLOAD + 1) });
    await page.click('form.upload button[type=submit]');
    await page.waitForSelector('form.upload .error');
    expect(await page.textContent('form.upload .error')).toBe(`gross.bin has ${(MAX_UPLOAD + 1).toLocaleString('en')} bytes; the service takes at most ${MAX_UPLOAD.toLocaleString('en')}.`);
    expect(sent).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
