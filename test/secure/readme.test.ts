/**
 * The README's "Secure login" promises: its client example and its Python client (an independent
 * implementation of the wire format) run against the demo (examples/node/server.mjs) and print what
 * the README says.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const section = (() => {
  const readme = readFileSync(`${root}README.md`, 'utf8');
  const start = readme.indexOf('## Secure login');
  const end = readme.indexOf('\n## ', start + 5);
  return readme.slice(start, end < 0 ? undefined : end);
})();
const block = (language: string) => new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(section)![1]!;

let demo: ChildProcess;
let url = '';

beforeAll(async () => {
  demo = spawn(process.execPath, ['examples/node/server.mjs'], { cwd: root, env: { ...process.env, PORT: '0' } });
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    demo.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/localhost:\d+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    demo.once('exit', (code) => reject(new Error(`demo exited with ${code}: ${out}`)));
  });
});

afterAll(() => {
  demo?.kill();
});

/** The `// value` comments of a code block, in order. */
const promised = (code: string, comment: string) => [...code.matchAll(new RegExp(`${comment} (.+)$`, 'gm'))].map((m) => m[1]!.trim());

test('the client example prints what its comments say', async () => {
  const code = block('ts');
  // The example is TypeScript only in one type argument; it runs against the built package.
  const script = code
    .replace('<{ count: number }>', '')
    .replace("'odbrest/client'", JSON.stringify(new URL('dist/client.js', `file://${root}`).href))
    .replaceAll('http://localhost:8080', url);
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-readme-'));
  writeFileSync(join(dir, 'example.mjs'), script);
  const { stdout } = await run(process.execPath, [join(dir, 'example.mjs')]);
  const expected = promised(code, '//').filter((value) => /^(alice|404)/.test(value));
  expect(stdout.trim().split('\n')).toEqual(expected);
});

const hasPythonCrypto = spawnSync('python3', ['-c', 'import cryptography'], { stdio: 'ignore' }).status === 0;

test.skipIf(!hasPythonCrypto)('the Python client logs in securely and prints what its comments say', async () => {
  const code = block('python');
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-readme-'));
  writeFileSync(join(dir, 'client.py'), code.replace('http://localhost:8080', url));
  const { stdout } = await run('python3', [join(dir, 'client.py')]);
  expect(stdout.trim().split('\n')).toEqual(promised(code, '#').filter((value) => !value.startsWith('secure login')));
});
