/** The built package loads as ESM and as CommonJS, by name, with declaration files for both, as an installing app would. */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { exports: Record<string, { import?: { types: string; default: string }; require?: { types: string; default: string } }> };
const subpaths = Object.keys(pkg.exports).filter((key) => key !== './package.json');

const script = `
  const service = odbrest.createService({ appKeys: ['k'] });
  service.fetch(new Request('http://x/v1/object/1', { headers: { appkey: 'k' } }))
    .then((r) => r.json()).then((body) => console.log(JSON.stringify(body)));`;

test('ESM: import "odbrest" answers a request', async () => {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', `import * as odbrest from 'odbrest';${script}`], { cwd: root });
  expect(JSON.parse(stdout)).toEqual({ status: { internalStatus: '204', statusMessage: 'no session credential sent (sessionId, Authorization or Secure-Token header)' }, data: {} });
});

test('CommonJS: require("odbrest") answers a request', async () => {
  const { stdout } = await run(process.execPath, ['-e', `const odbrest = require('odbrest');${script}`], { cwd: root });
  expect(JSON.parse(stdout).status.internalStatus).toBe('204');
});

test.each(subpaths)('subpath %s has its files and declaration files for import and require', (subpath) => {
  const entry = pkg.exports[subpath]!;
  for (const file of [entry.import!.default, entry.import!.types, entry.require!.default, entry.require!.types]) {
    expect(existsSync(`${root}${file}`), file).toBe(true);
  }
});
