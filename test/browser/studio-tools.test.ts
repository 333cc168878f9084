/**
 * The studio's tools (docs/studio.md, issue 34 items 6, 9, 10 and 11) in Chromium against a real server: the
 * model screen (the declared classes and their fields, as `GET /v1/model/structure` answers them) and
 * the export of the current query's objects as JSON Lines or CSV, read back through the browser's
 * download; "copy as curl" and "copy as client code" for the current query and an open object, clicked
 * (the clipboard holds what the page shows, or the page says the browser refused it), run
 * in a shell and in Node against the same server and compared with what the page shows; a file
 * object's download and its preview (an image, a text, a PDF in Chromium's viewer; markup posing as a
 * PDF reaches the viewer, never the page). Every screen is checked with axe-core and under the studio's CSP.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryObjectStore } from '../../src/index.js';
import { createClient } from '../../src/client/index.js';
import { call, login, USERS } from '../helpers.js';
import { browserAvailable, closeChromium, launchChromium } from '../support/browser.js';
import { demoAccess } from '../../examples/demo-access.mjs';
import { expectAccessible, logIn, openStudio, serveStudio, shoot, stopServers, type Running } from '../support/studio.js';

const hasBrowser = browserAvailable('the studio tools browser tests');

/** A valid one-page PDF (a text in Helvetica) with a correct cross-reference table. */
function onePagePdf(text: string): string {
  const content = `BT /F1 36 Tf 40 100 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets = objects.map((body, i) => {
    const offset = pdf.length;
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
    return offset;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  return `${pdf}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
}

let main: Running;
/** The demo's access rules, under which every session uploads files. */
let files: Running;
let context: BrowserContext | undefined;
let userDataDir: string | undefined;
const store = new MemoryObjectStore();
const READINGS = 1_050;

beforeAll(async () => {
  if (!hasBrowser) return;
  main = await serveStudio(() => ({ store, studio: { appNames: ['crm'] } }));
  // more than one page of the largest size (1000), with text a CSV must quote or guard
  for (let i = 0; i < READINGS; i++) {
    await store.put({ className: 'Reading', fields: { Value: i, Label: i === 7 ? '=SUM(A1:A2)' : i === 8 ? 'a "quoted", two-line\ntext' : `reading ${i}`, ...(i === 9 ? { Extra: true } : {}) } });
  }
  files = await serveStudio(() => ({ store: new MemoryObjectStore(), access: demoAccess, studio: { appNames: ['crm'] } }));
  ({ context, userDataDir } = await launchChromium());
}, 120_000);

afterAll(async () => {
  // the browser first: a tab a failed test left open keeps its connections, and the servers' close waits for them
  await closeChromium(context, userDataDir);
  await stopServers(main, files);
});

describe.skipIf(!hasBrowser)('studio tools', () => {
  test('the model: each declared class with its fields, their types and limits, classes, whether required and indexed', async () => {
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
    // the type with its values, range and length; whether an index of its own serves it
    const limits = (member: any) =>
      [member.Values?.join(', '), member.Min !== undefined || member.Max !== undefined ? `${member.Min ?? ''}…${member.Max ?? ''}` : '', member.MaxLength !== undefined ? `≤ ${member.MaxLength}` : ''].filter(Boolean).join('; ');
    const indexed = (name: string) => customer.Indices.some((index: any) => index.Members.length === 1 && index.Members[0] === name);
    expect(rows).toEqual(
      fields.map((member: any) => [member.Name, limits(member) ? `${member.Type} (${limits(member)})` : member.Type, member.Class ?? '', member.Required ? 'yes' : 'no', indexed(member.Name) ? 'yes' : 'no']),
    );
    expect(rows.find((row) => row[0] === 'Name')).toEqual(['Name', 'string (≤ 120)', '', 'yes', 'yes']);
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

  /** Clicks `button` and reads the file the page saves. */
  async function download(page: Page, button: string): Promise<{ name: string; text: string }> {
    const [file] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
    return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, 'utf8') };
  }

  test('export: the current query in the table order, every page, as JSON Lines and as CSV', async () => {
    const sessionId = await login(main.service, 'alice');
    // what the service answers for the same query and order, page by page
    const expected: any[] = [];
    for (let page = 0; ; page++) {
      const query = new URLSearchParams({ query: JSON.stringify({ queryString: 'Value >= 20' }), orderBy: '-Value', page: String(page), perPage: '1000' });
      const elements = (await call(main.service, 'GET', `/v1/objects/Reading?${query}`, { headers: { sessionId } })).body.data['~Elements'];
      expected.push(...elements);
      if (elements.length < 1000) break;
    }
    expect(expected).toHaveLength(READINGS - 20);

    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/class/Reading`);
    await logIn(page);
    await page.waitForSelector('table.objects tbody tr');
    await page.fill('input[name=query]', 'Value >= 20');
    await page.press('input[name=query]', 'Enter');
    await page.waitForFunction(() => document.querySelector('h1')?.textContent?.includes('1,030 objects'));
    await page.click('th button.sort:text("Value")');
    await page.click('th button.sort:text("Value")'); // descending
    await page.waitForSelector('th[aria-sort=descending]');

    const lines = await download(page, 'button:text("Export JSON Lines")');
    expect(lines.name).toBe('Reading.jsonl');
    expect(lines.text.endsWith('\n')).toBe(true);
    expect(lines.text.trimEnd().split('\n').map((line) => JSON.parse(line))).toEqual(expected);
    await page.waitForSelector('.export-status:text("1,030 objects saved as Reading.jsonl")');

    // all of the class now (the query cleared), as CSV: the metadata, the fields, a quoted cell, a guarded formula
    await page.fill('input[name=query]', '');
    await page.press('input[name=query]', 'Enter');
    await page.waitForFunction(() => document.querySelector('h1')?.textContent?.includes('1,050 objects'));
    const csv = await download(page, 'button:text("Export CSV")');
    expect(csv.name).toBe('Reading.csv');
    const rows = csv.text.split('\r\n');
    expect(rows[0]).toBe('\uFEFF~ObjectID,~ClassName,~StoreTime,Value,Label,Extra'); // a BOM first: Excel reads UTF-8 so
    expect(rows).toHaveLength(READINGS + 2); // the header, the rows, the empty end after the last line break
    const byValue = (value: number) => rows.find((row) => row.includes(`,Reading,`) && row.split(',')[3] === String(value))!;
    expect(byValue(7)).toMatch(/,7,'=SUM\(A1:A2\),$/);
    expect(csv.text).toContain(`,8,"a ""quoted"", two-line\ntext",\r\n`);
    expect(byValue(9)).toMatch(/,9,reading 9,true$/);
    // the pages became the file one by one: Extra first came with the second page (Value < 50), so the
    // rows of the first end before its column, and those of the second carry it (empty where unset)
    expect(byValue(9).split(',')[5]).toBe('true');
    expect(byValue(500)).toMatch(/,Reading,[^,]+,500,reading 500$/);
    expect(byValue(50)).toMatch(/,50,reading 50$/);
    expect(byValue(49)).toMatch(/,49,reading 49,$/);
    expect(rows.slice(1, -1).map((row) => Number(row.split(',')[3]))).toEqual(expected.map((object) => object.Value).concat(19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));

    await expectAccessible(page, 'objects with export');
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);

  /** Runs a copied text: curl in a shell, client code in Node (from the package's folder, where `odbrest/client` resolves); its output as JSON. */
  const run = promisify(execFile);
  const ROOT = new URL('../..', import.meta.url).pathname;
  async function runCurl(text: string, env: Record<string, string> = {}): Promise<any> {
    return JSON.parse((await run('sh', ['-c', text], { env: { ...process.env, ...env } })).stdout);
  }
  async function runClient(text: string, env: Record<string, string> = {}): Promise<any> {
    const code = text.replace('console.log(await', 'console.log(JSON.stringify(await').replace(/\);$/, '));').replace('process.env.ODBREST_SESSION!', 'process.env.ODBREST_SESSION');
    return JSON.parse((await run(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, env: { ...process.env, ...env } })).stdout);
  }
  const copied = async (page: Page, scope: string, kind: 'curl' | 'client') => {
    if (!(await page.$eval(`${scope} details.copy-as`, (details) => (details as HTMLDetailsElement).open))) await page.click(`${scope} details.copy-as summary`);
    return page.inputValue(`${scope} textarea[data-copy=${kind}]`);
  };

  /** Clicks the copy button of `kind` in `scope` and answers what the clipboard then holds (the page says it copied). */
  async function clicked(page: Page, scope: string, kind: 'curl' | 'client'): Promise<string> {
    await page.click(`${scope} details.copy-as button:text("${kind === 'curl' ? 'Copy as curl' : 'Copy as client code'}")`);
    await page.waitForSelector(`${scope} details.copy-as [aria-live]:text("Copied as ${kind === 'curl' ? 'curl' : 'odbrest/client'}.")`);
    const text = await page.evaluate(() => navigator.clipboard.readText());
    await page.evaluate(() => navigator.clipboard.writeText('')); // the next click must put its own text there
    return text;
  }

  test('copy as curl and as client code: the current query and an open object, run as copied', async () => {
    await context!.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: main.origin });
    const { page, problems } = await openStudio(context!, `${main.origin}/_studio/#/class/Reading`);
    await logIn(page, { secure: false });
    await page.waitForSelector('table.objects tbody tr');
    await page.fill('input[name=query]', 'Value < 100 and Label != "x y"');
    await page.press('input[name=query]', 'Enter');
    await page.waitForFunction(() => document.querySelector('h1')?.textContent?.includes('100 objects'));
    await page.click('th button.sort:text("Value")');
    await page.click('th button.sort:text("Value")');
    await page.waitForSelector('th[aria-sort=descending]');
    await page.click('button[aria-label="Next page"]');
    await page.waitForSelector('.pager:has-text("Page 2 of 2")');
    await page.waitForFunction(() => document.querySelector('table.objects tbody td:nth-child(3)')?.textContent === '49');
    const shown = await page.$$eval('table.objects tbody th a', (links) => links.map((link) => link.textContent));
    expect(shown).toHaveLength(50);

    const curl = await copied(page, '.screen', 'curl');
    expect(curl).toMatch(/^curl -s '/);
    expect(await clicked(page, '.screen', 'curl')).toBe(curl);
    expect(await page.$('.screen details.copy-as a.docs-link')).toBeNull(); // no docs option, no link to the reference
    const answer = await runCurl(curl);
    expect(answer.data['~Elements'].map((object: any) => object['~ObjectID'])).toEqual(shown);
    expect(answer.data['~Elements'][0].Value).toBe(49);
    const code = await copied(page, '.screen', 'client');
    expect(code).toContain(`import { createClient } from 'odbrest/client';`);
    expect(await clicked(page, '.screen', 'client')).toBe(code);
    expect((await runClient(code))['~Elements'].map((object: any) => object['~ObjectID'])).toEqual(shown);
    await expectAccessible(page, 'objects with copy as');

    // an open object: its curl and client code answer the object the panel shows
    await page.click('table.objects tbody th a >> nth=3');
    await page.waitForSelector('.panel.top');
    const id = (await page.getAttribute('.panel.top', 'data-object'))!;
    const objectCurl = await copied(page, '.panel.top', 'curl');
    expect(await clicked(page, '.panel.top', 'curl')).toBe(objectCurl);
    const object = await runCurl(objectCurl);
    expect(object.data).toMatchObject({ '~ObjectID': id, '~ClassName': 'Reading', Value: 46 });
    const objectCode = await copied(page, '.panel.top', 'client');
    expect(await clicked(page, '.panel.top', 'client')).toBe(objectCode);
    expect(await runClient(objectCode)).toMatchObject({ '~ObjectID': id, Value: 46 });
    expect(await page.textContent('.panel.top')).toContain('reading 46');
    await expectAccessible(page, 'panel with copy as');
    expect(problems).toEqual([]);
    await page.close();

    // a secure session: the copies read a plain session id from ODBREST_SESSION, and say so
    const secure = await openStudio(context!, `${main.origin}/_studio/#/class/Reading?open=${id}`);
    await logIn(secure.page);
    await secure.page.waitForSelector('[data-transport=secure]');
    await secure.page.waitForSelector('.panel.top details.copy-as');
    const secureCurl = await copied(secure.page, '.panel.top', 'curl');
    expect(secureCurl).toContain('"sessionId: $ODBREST_SESSION"');
    expect(await secure.page.textContent('.panel.top details.copy-as')).toContain('ODBREST_SESSION');
    const plain = await login(main.service, 'alice');
    expect((await runCurl(secureCurl, { ODBREST_SESSION: plain })).data).toMatchObject({ '~ObjectID': id, Value: 46 });
    expect(await runClient(await copied(secure.page, '.panel.top', 'client'), { ODBREST_SESSION: plain })).toMatchObject({ '~ObjectID': id });
    expect(await clicked(secure.page, '.panel.top', 'curl')).toBe(secureCurl);

    // a browser that refuses the clipboard: the page says so and points to the text
    const cdp = await context!.newCDPSession(secure.page);
    await cdp.send('Browser.setPermission', { permission: { name: 'clipboard-write' }, setting: 'denied', origin: main.origin });
    await secure.page.click('.panel.top details.copy-as button:text("Copy as client code")');
    await secure.page.waitForSelector('.panel.top details.copy-as [aria-live]:text("The browser refused the clipboard: select the text and copy it.")');
    await cdp.detach();
    await context!.clearPermissions();
    expect(secure.problems).toEqual([]);
    await secure.page.close();
  }, 180_000);

  /**
   * The PDF preview's frame once Chromium's viewer has read the file: its document's type, the
   * viewer's load state (`success`, `failed`) and the page count its toolbar shows (as a person reads
   * "/ 1"). The viewer is Chromium's own extension page: this reads its state and shadow DOM.
   */
  async function pdfShown(page: Page): Promise<{ type: string; state: string; pages: number }> {
    await page.waitForSelector('.panel.top iframe.pdf-preview');
    const frame = (await (await page.$('.panel.top iframe.pdf-preview'))!.contentFrame())!;
    const isViewer = (candidate: Frame) => candidate.parentFrame() === frame && candidate.url().startsWith('chrome-extension://');
    await expect.poll(() => page.frames().some(isViewer), { timeout: 30_000 }).toBe(true);
    const type = await frame.evaluate(() => document.contentType);
    const shown = await page.frames().find(isViewer)!.waitForFunction(() => {
      const viewer = document.querySelector('pdf-viewer') as (Element & { loadState_?: string }) | null;
      if (!viewer?.loadState_ || viewer.loadState_ === 'loading') return undefined;
      const selector = (viewer.shadowRoot?.querySelector('viewer-toolbar') as Element | null)?.shadowRoot?.querySelector('viewer-page-selector');
      return { state: viewer.loadState_, pages: Number(/\/\s*(\d+)/.exec(selector?.shadowRoot?.textContent ?? '')?.[1]) };
    });
    return { type, ...((await shown.jsonValue()) as { state: string; pages: number }) };
  }

  test('files: download, and a preview of an image, a text and a PDF, on a secure session', async () => {
    const uploader = createClient({ baseUrl: files.origin, appKey: 'odbrest-studio' });
    await uploader.login({ user: 'alice', password: USERS.alice as string, appNames: ['crm'] });
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const image = await uploader.uploadFile(new Blob([png], { type: 'image/png' }), { name: 'dot.png' });
    const text = await uploader.uploadFile(new Blob(['Grüße\n<b>not markup</b>\n'], { type: 'text/plain' }), { name: 'note.txt' });
    const pdfBytes = onePagePdf('Hello from a PDF');
    const pdf = await uploader.uploadFile(new Blob([pdfBytes], { type: 'application/pdf' }), { name: 'report.pdf' });
    // markup that claims to be a PDF: it must reach the PDF viewer, never render as a page of the studio's origin
    const posing = await uploader.uploadFile(new Blob(['<!doctype html><img src=x onerror="top.pwned=1"><script>top.pwned=2</script>'], { type: 'application/pdf' }), { name: 'posing.pdf' });

    const { page, problems } = await openStudio(context!, `${files.origin}/_studio/#/class/Document?open=${image['~ObjectID']}`);
    await logIn(page);
    await page.waitForSelector('[data-transport=secure]');
    // the image, decoded from a blob: URL (img-src allows blob:)
    await page.waitForSelector('.panel.top img.file-preview');
    await page.waitForFunction(() => (document.querySelector('.panel.top img.file-preview') as HTMLImageElement | null)?.naturalWidth === 1);
    const saved = await download(page, '.panel.top button:text("Download dot.png")');
    expect(saved.name).toBe('dot.png');
    const [file] = await Promise.all([page.waitForEvent('download'), page.click('.panel.top button:text("Download dot.png")')]);
    expect(readFileSync((await file.path())!)).toEqual(png);
    await expectAccessible(page, 'image file');

    // a text, shown as text (never as markup)
    await page.goto(`${files.origin}/_studio/#/class/Document?open=${text['~ObjectID']}`);
    await page.waitForSelector('.panel.top pre.file-preview');
    expect(await page.textContent('.panel.top pre.file-preview')).toBe('Grüße\n<b>not markup</b>\n');
    expect(await page.$('.panel.top pre.file-preview b')).toBeNull();
    expect((await download(page, '.panel.top button:text("Download note.txt")')).text).toBe('Grüße\n<b>not markup</b>\n');
    await expectAccessible(page, 'text file');

    // a PDF, in a frame of a blob: URL typed application/pdf: Chromium's PDF viewer shows its one page
    await page.goto(`${files.origin}/_studio/#/class/Document?open=${pdf['~ObjectID']}`);
    expect(await pdfShown(page)).toEqual({ type: 'application/pdf', state: 'success', pages: 1 });
    await expectAccessible(page, 'pdf file');
    // the download works, and again: each download reads the file anew, and a browser must not
    // answer the second from its cache (a sealed answer is one message)
    expect((await download(page, '.panel.top button:text("Download report.pdf")')).text).toBe(pdfBytes);
    expect((await download(page, '.panel.top button:text("Download report.pdf")')).text).toBe(pdfBytes);
    expect(await page.$('.panel.top .file-view .error')).toBeNull();
    // markup stored as a PDF: the viewer finds no page, and no script of it ran
    await page.goto(`${files.origin}/_studio/#/class/Document?open=${posing['~ObjectID']}`);
    expect(await pdfShown(page)).toEqual({ type: 'application/pdf', state: 'failed', pages: 0 });
    expect(await page.evaluate(() => (window as any).pwned)).toBeUndefined();
    // an object that is not a file has no file section
    await page.goto(`${files.origin}/_studio/#/class/Customer?open=CUS00001`);
    await page.waitForSelector('.panel.top details.copy-as');
    expect(await page.$('.panel.top .file-view')).toBeNull();
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);
});

