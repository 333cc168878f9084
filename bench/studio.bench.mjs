// The studio (issues 34 and 43): how much it sends and how quickly its first page of a large class shows.
// - gzip size of all its files (target <= 150 KB since the console's screens, each a chunk of its own), and of what a browser loads before the first
//   screen shows (the page, its style sheet and the scripts it imports before it draws; target <= 50 KB),
//   as the service sends them (it gzips its files itself where the browser accepts gzip);
// - in Chromium, the time from opening a class's table to its first row drawn, for a class of
//   100,000 objects against one of 10 in alternating rounds (a plain session resumed from the tab's
//   sessionStorage, so the login is not measured). Only the page is fetched and drawn, so the ratio
//   should be near 1. Skipped without Chromium.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { gzipSync } from 'node:zlib';
import { createService, MemoryObjectStore } from '../dist/index.js';
import { createNodeHandler } from '../dist/node.js';
import { studioFiles } from '../src/studio/assets.generated.js';
import { demoSchema } from '../examples/demo-schema.mjs';
import { APP_KEY, customer, demoData, loginAlice, median } from './common.mjs';

const CHROMIUM = '/usr/bin/chromium';
const LARGE = 100_000;
const ROUNDS = 7;

const kb = (bytes) => bytes / 1024;

/** The service's own answer for a studio path, gzip asked for: its size as sent. */
async function sentBytes(service, path) {
  const response = await service.fetch(new Request(`http://bench/_studio/${path}`, { headers: { 'accept-encoding': 'gzip' } }));
  const bytes = new Uint8Array(await response.arrayBuffer());
  // the page itself is not gzipped by the service (a proxy may): count it as gzip would send it
  return response.headers.get('content-encoding') === 'gzip' ? bytes.byteLength : gzipSync(bytes).byteLength;
}

export default async function studio() {
  const store = new MemoryObjectStore();
  for (let i = 0; i < LARGE; i++) await store.put({ className: 'Big', fields: customer(i) });
  for (let i = 0; i < 10; i++) await store.put({ className: 'Small', fields: customer(i) });
  const service = createService({ store, data: demoData(), schema: demoSchema, studio: { appKey: APP_KEY, appNames: ['crm'] }, users: { passwordIterations: 1000 } });
  await service.ready;
  const all = (await sentBytes(service, '')) + (await Promise.all(Object.keys(studioFiles).map((name) => sentBytes(service, name)))).reduce((a, b) => a + b, 0);
  const rows = [{ name: 'studio: all files, gzip', value: kb(all), unit: 'KB', target: '<= 150' }];
  if (!existsSync(CHROMIUM)) return [...rows, { name: 'studio: first page in Chromium', value: 'skipped (no Chromium)', unit: '' }];

  const server = createServer(createNodeHandler(service));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://localhost:${server.address().port}`;
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  try {
    const page = await browser.newPage();
    await page.goto(`${origin}/_studio/`);
    await page.waitForSelector('form.login');
    // what came before the first screen: the page and every file it loaded, as encoded on the wire
    const firstScreen = await page.evaluate(() =>
      [performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')].filter((entry) => entry.name.includes('/_studio/')).map((entry) => [entry.name, entry.encodedBodySize]),
    );
    const html = await sentBytes(service, '');
    const before = firstScreen.reduce((sum, [name, size]) => sum + (name.endsWith('/_studio/') ? html : size), 0);
    rows.push({ name: `studio: before the first screen (${firstScreen.length} files), gzip`, value: kb(before), unit: 'KB', target: '<= 50' });

    const sessionId = await loginAlice(service, origin);
    await page.evaluate((saved) => sessionStorage.setItem('odbrest-studio:session', saved), JSON.stringify({ credential: { sessionId }, user: 'alice' }));
    const firstPage = async (className) => {
      await page.goto('about:blank');
      const started = performance.now();
      await page.goto(`${origin}/_studio/#/class/${className}`);
      await page.waitForSelector('table.objects tbody tr');
      return performance.now() - started;
    };
    const times = { Big: [], Small: [] };
    await firstPage('Small');
    await firstPage('Big');
    for (let round = 0; round < ROUNDS; round++) for (const className of round % 2 ? ['Big', 'Small'] : ['Small', 'Big']) times[className].push(await firstPage(className));
    const large = median(times.Big);
    const small = median(times.Small);
    rows.push({ name: `studio: first page of a class of ${LARGE.toLocaleString('en')} objects in Chromium (page load, resume, model, first 50 drawn)`, value: large, unit: 'ms', reference: small, ratio: large / small, target: 'ratio near 1 (reference: a class of 10)' });
  } finally {
    await browser.close();
    await new Promise((resolve) => server.close(resolve));
  }
  return rows;
}
