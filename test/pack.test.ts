/**
 * The published package as `npm pack` makes it: only what a user needs (no tests, no source maps),
 * every subpath loading through `import` and through `require` with the same exports, and an app
 * mixing both copies (an ApiError from the CommonJS copy thrown inside the ESM service).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { RUN_ID } from './support/servers.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
const subpaths = Object.keys(pkg.exports)
  .filter((key) => key !== './package.json')
  .map((key) => (key === '.' ? 'odbrest' : `odbrest/${key.slice(2)}`));

let files: string[];
/** An app folder with the packed package in its node_modules; its other packages resolve from the repository's. */
let app: string;
let out: string;

beforeAll(async () => {
  mkdirSync(join(root, 'node_modules/.cache'), { recursive: true });
  out = mkdtempSync(join(root, `node_modules/.cache/odbrest-pack-${RUN_ID}-`));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', out], { cwd: root });
  const [{ filename, files: packed }] = JSON.parse(stdout) as [{ filename: string; files: Array<{ path: string }> }];
  files = packed.map((file) => file.path);
  app = join(out, 'app');
  mkdirSync(join(app, 'node_modules/odbrest'), { recursive: true });
  await run('tar', ['-xzf', join(out, filename), '-C', join(app, 'node_modules/odbrest'), '--strip-components=1']);
}, 120_000);
afterAll(() => out && rmSync(out, { recursive: true, force: true }));

test('the package holds dist, the README, the LICENSE and package.json; no tests, no maps, no sources', () => {
  expect(files.filter((file) => !file.startsWith('dist/')).sort()).toEqual(['LICENSE', 'README.md', 'package.json']);
  const testFile = /(^|\/)(test|tests|__tests__)\/|\.(test|spec)\./;
  expect(files.filter((file) => testFile.test(file) || /\.map$/.test(file) || (/\.ts$/.test(file) && !/\.d\.c?ts$/.test(file)))).toEqual([]);
  expect(files).toContain('dist/testing.js'); // the store contracts are shipped, as odbrest/testing
});

test.each(subpaths)('%s loads through import and through require, with the same exports', async (subpath) => {
  const list = 'Object.keys(m).filter((k) => k !== "default" && k !== "module.exports").sort()';
  const esm = await run(process.execPath, ['--input-type=module', '-e', `const m = await import('${subpath}'); console.log(JSON.stringify(${list}));`], { cwd: app });
  const cjs = await run(process.execPath, ['-e', `const m = require('${subpath}'); console.log(JSON.stringify(${list}));`], { cwd: app });
  const names = JSON.parse(esm.stdout) as string[];
  expect(names.length).toBeGreaterThan(0);
  expect(JSON.parse(cjs.stdout)).toEqual(names);
});

test('an app mixing both copies: an ApiError from require("odbrest") thrown in an imported service answers its code', async () => {
  writeFileSync(
    join(app, 'mixed.mjs'),
    `import { createRequire } from 'node:module';
import { createService } from 'odbrest';
const { ApiError, StorageUnavailableError } = createRequire(import.meta.url)('odbrest');
const service = createService({
  data: { objects: [{ '~ClassName': 'User', Name: 'u', _password: 'p', _licences: ['a'] }] },
  users: { passwordIterations: 1000 },
  macros: {
    refuse: () => { throw new ApiError('4711', 'refused by the other copy', { status: 409 }); },
    down: () => { throw new StorageUnavailableError(); },
  },
});
const { clientPassValue } = await import('odbrest');
const ask = (path, headers, body) => service.fetch(new Request('http://x' + path, { method: 'POST', headers: { appkey: 'k', 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }))
  .then(async (r) => [r.status, await r.json()]);
const [, login] = await ask('/v1/login', {}, { user: 'u', pass: clientPassValue('p'), appNames: [] });
const sessionId = login.data.sessionId;
console.log(JSON.stringify([await ask('/v1/execute/refuse', { sessionId }, {}), await ask('/v1/execute/down', { sessionId }, {})]));
`,
  );
  const { stdout } = await run(process.execPath, ['mixed.mjs'], { cwd: app });
  expect(JSON.parse(stdout)).toEqual([
    [409, { status: { internalStatus: '4711', statusMessage: 'refused by the other copy' }, data: {} }],
    [503, { status: { internalStatus: '503', statusMessage: 'storage unavailable, retry later' }, data: {} }],
  ]);
});
