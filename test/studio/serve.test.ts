/**
 * The studio's files (docs/studio.md): off unless turned on; the page and its hashed assets under the
 * service's mount path and alias, with a strict CSP and the other security headers on every answer,
 * and envelopes for everything else under its path.
 */
import { gunzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { createService } from '../../src/index.js';
import { call, demoService, expectError } from '../helpers.js';
import { codeBlocks, printedComments, readmeSection, runCodeBlock } from '../support/readme.js';

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; frame-src blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function expectSecurityHeaders(headers: Headers): void {
  expect(headers.get('content-security-policy')).toBe(CSP);
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('x-frame-options')).toBe('DENY');
  expect(headers.get('referrer-policy')).toBe('no-referrer');
  expect(headers.get('set-cookie')).toBeNull();
}

/** The page's config and the assets it loads. */
function pageParts(html: string): { config: Record<string, unknown>; assets: string[] } {
  const meta = /<meta name="odbrest-studio" content="([^"]*)">/.exec(html)![1]!;
  const config = JSON.parse(meta.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
  const assets = [...html.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  return { config, assets };
}

describe('studio off', () => {
  test('without the option its path is an unknown route, and serves() says no', async () => {
    const service = await demoService();
    expectError(await call(service, 'GET', '/_studio/'), '404', 404);
    expect(service.serves('http://odbrest.test/_studio/')).toBe(false);
  });
});

describe('studio on', () => {
  test('the page: no inline script or style, relative asset names, its config in a meta tag, the security headers', async () => {
    const service = await demoService({ studio: { appNames: ['crm'] } });
    const page = await call(service, 'GET', '/_studio/', { noAppKey: true });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expectSecurityHeaders(page.headers);
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)/); // every script is a file
    expect(page.text).not.toMatch(/<style|\sstyle=|\son\w+=/);
    const { config, assets } = pageParts(page.text);
    expect(config).toEqual({ api: '../', appKey: 'odbrest-studio', appNames: ['crm'], fileClass: 'Document', maxUploadBytes: 100 * 1024 * 1024 });
    expect(assets).toHaveLength(2);
    for (const asset of assets) {
      expect(asset).toMatch(/^main-[A-Z0-9]{8}\.(js|css)$/);
      const file = await call(service, 'GET', `/_studio/${asset}`, { noAppKey: true });
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(file.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expectSecurityHeaders(file.headers);
      expect(file.text.length).toBeGreaterThan(1000);
      // asked again with its ETag: 304
      expect((await call(service, 'GET', `/_studio/${asset}`, { headers: { 'if-none-match': file.headers.get('etag')! } })).status).toBe(304);
    }
    // no eval or Function constructor in the bundle (the CSP forbids them)
    const script = await call(service, 'GET', `/_studio/${assets.find((name) => name.endsWith('.js'))}`);
    expect(script.text).not.toMatch(/\beval\(|new Function\(/);
    expect(service.serves('http://odbrest.test/_studio/')).toBe(true);
  });

  test('gzip where the browser accepts it, the same bytes unpacked', async () => {
    const service = await demoService({ studio: true });
    const { assets } = pageParts((await call(service, 'GET', '/_studio/')).text);
    const plain = await call(service, 'GET', `/_studio/${assets[0]}`);
    const response = await service.fetch(new Request(`http://odbrest.test/_studio/${assets[0]}`, { headers: { 'accept-encoding': 'gzip, br' } }));
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(response.headers.get('vary')).toBe('accept-encoding');
    const packed = new Uint8Array(await response.arrayBuffer());
    expect(Number(response.headers.get('content-length'))).toBe(packed.byteLength);
    expect(gunzipSync(packed).toString('utf8')).toBe(plain.text);
  });

  test('the path without its slash is redirected (relatively); other files and methods are envelopes with the headers', async () => {
    const service = await demoService({ studio: true });
    const bare = await call(service, 'GET', '/_studio', { noAppKey: true });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('_studio/');
    const missing = await call(service, 'GET', '/_studio/nothing.js', { noAppKey: true });
    expectError(missing, '404', 404);
    expectSecurityHeaders(missing.headers);
    const posted = await call(service, 'POST', '/_studio/', { json: {} });
    expectError(posted, '405', 405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
    expectSecurityHeaders(posted.headers);
    const head = await service.fetch(new Request('http://odbrest.test/_studio/', { method: 'HEAD' }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  test('under a base path and alias, at a path of the host: the page finds the API relative to itself', async () => {
    const service = await demoService({ mount: { basePath: '/api', alias: 'db1' }, appKeys: ['crm-web', 'other'], studio: { path: 'admin/studio' } });
    const page = await call(service, 'GET', '/api/db1/admin/studio/');
    expect(page.status).toBe(200);
    expect(pageParts(page.text).config).toEqual({ api: '../../', appKey: 'crm-web', appNames: [], fileClass: 'Document', maxUploadBytes: 100 * 1024 * 1024 });
    expect(new URL('../../', 'http://odbrest.test/api/db1/admin/studio/').pathname).toBe('/api/db1/');
    expect((await call(service, 'GET', '/api/db1/admin/studio')).headers.get('location')).toBe('studio/');
    expectError(await call(service, 'GET', '/_studio/'), '404', 404);
  });

  test('docs, the host\'s API reference page, reaches the page as given; anything but a path or an http(s) URL is refused at start-up', async () => {
    for (const docs of ['/docs', 'https://api.example.com/reference?v=1', 'http://localhost:8080/docs']) {
      const page = await call(await demoService({ studio: { docs } }), 'GET', '/_studio/');
      expect(pageParts(page.text).config, docs).toEqual({ api: '../', appKey: 'odbrest-studio', appNames: [], fileClass: 'Document', maxUploadBytes: 100 * 1024 * 1024, docs });
    }
    for (const docs of ['javascript:alert(1)', 'data:text/html,x', '//elsewhere.example/docs', 'docs', '', '/docs#/Objects', 'https://', '/my docs']) {
      expect(() => createService({ studio: { docs } }), docs).toThrow(/^studio\.docs .* is not allowed/);
    }
  });

  test('a path that could shadow a route is refused at start-up, naming the option', () => {
    for (const path of ['v1/studio', '/v2/', '_CheckSession', 'openapi.json', '', 'a b', '../x']) {
      expect(() => createService({ studio: { path } }), path).toThrow(/^studio\.path .* is not allowed/);
    }
  });
});

test('the guide\'s example runs as printed', async () => {
  const [code] = codeBlocks(readmeSection('Turning it on'), 'ts');
  expect(await runCodeBlock(code!, { replace: { "'odbrest'": JSON.stringify(new URL('../../dist/index.js', import.meta.url).href) } })).toEqual(printedComments(code!));
});
