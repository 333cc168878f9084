/**
 * `odbrest check` as an operator runs it: the built CLI in its own process, reading a configuration,
 * saying what `serve` would start, starting nothing, and exit 1 naming the option that is wrong
 * (a store module's function is called, as serve calls it, and what it made must be a whole store).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileObjectStore } from '../stores/file-store.js';

const root = new URL('..', import.meta.url).pathname;
const cli = join(root, 'dist/cli.js');

function runCli(args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd, env: { ...process.env, ...env }, timeout: 20_000 }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-check-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('odbrest check', () => {
  test('a valid configuration: what serve would start, credentials hidden, nothing connected or listened on', async () => {
    const dir = dirWith({
      'api-config.yml': [
        'port: 9191',
        'hostname: 127.0.0.1',
        'mount: { basePath: /api }',
        'dataFile: ./data.json',
        'macros: ./macros.mjs',
        // nothing listens on port 1: a check that connected would fail
        'store: { url: "postgres://app:hunter2@127.0.0.1:1/crm", schema: crm }',
        'kv: { module: ./my-kv.mjs, options: { size: 3 } }',
        'files: { blobs: file:./blobs }',
        'studio: { appNames: [crm] }',
        'apiReference: true',
        'session: { jwtSecret: "0123456789abcdef0123456789abcdef" }',
        'twoFactor: { policies: { hr: optional }, key: "a two-factor key of 32 characters or more" }',
        'passkeys: { rpID: crm.example.com, rpName: CRM, origins: ["https://crm.example.com"] }',
        'externalLogin: { publicUrl: "https://crm.example.com/api", providers: [{ name: google }, { name: github }] }',
        '',
      ].join('\n'),
      'data.json': JSON.stringify({ objects: [{ '~ClassName': 'Customer', Name: 'Hansen' }, { '~ClassName': 'Customer', Name: 'Berg' }] }),
      'macros.mjs': 'export const hello = () => "hello";\n',
      // called as serve calls it (issue 50, item 8), and what it made closed: closed.txt says so
      'my-kv.mjs': `import { writeFileSync } from 'node:fs';\nimport { MemoryKeyValueStore } from '${root}dist/index.js';\nexport default ({ size }) => Object.assign(new MemoryKeyValueStore(), { close: async () => writeFileSync('closed.txt', String(size)) });\n`,
    });
    const { code, stdout, stderr } = await runCli(['check', '--config', 'api-config.yml'], dir);
    expect([code, stderr]).toEqual([0, '']);
    expect(stdout).toBe(
      [
        `${dir}/api-config.yml: valid`,
        'listen         127.0.0.1, port 9191, under /api',
        'objects        postgres://app:***@127.0.0.1:1/crm (schema crm)',
        `key-value      module ${dir}/my-kv.mjs`,
        `files          the folder ${dir}/blobs`,
        `seed data      ${dir}/data.json (2 objects)`,
        `macros         ${dir}/macros.mjs`,
        'studio         /api/_studio/',
        'API reference  /api/docs',
        'OpenAPI        /api/openapi.json',
        'logins         plain (/v1/login), token (/v2/login, configured key), secure (a key generated at start), passkeys (crm.example.com), two-factor (hr: optional)',
        'providers      google, github (their OAuthProvider entries are read from the store at start)',
        'request log    on, standard output, text',
        '',
      ].join('\n'),
    );
    expect(stdout).not.toContain('hunter2');
    expect(readFileSync(join(dir, 'closed.txt'), 'utf8')).toBe('3');
  });

  test('no configuration file: the defaults', async () => {
    const { code, stdout } = await runCli(['check'], dirWith({}));
    expect(code).toBe(0);
    expect(stdout).toContain('no configuration file (defaults and ODBREST_* variables): valid\n');
    expect(stdout).toContain('\nobjects        memory (gone on exit)\n');
  });

  test.each([
    ['stroe: memory\n', 'odbrest: invalid configuration (stroe): unknown option "stroe"; allowed: port,'],
    ['session: { idleTimeoutMinutes: -1 }\n', 'odbrest: invalid configuration (session.idleTimeoutMinutes): session.idleTimeoutMinutes must be a number above 0\n'],
    ['studio: { path: v1 }\n', 'odbrest: studio.path "v1" is not allowed'],
    ['apiReference: { path: openapi.json }\n', 'odbrest: apiReference.path "openapi.json" is not allowed'],
    ['schema: { Customer: { fields: { Name: { type: nonsense } } } }\n', 'odbrest: schema'],
    ['externalLogin: { providers: [{ name: google }] }\n', 'odbrest: externalLogin.publicUrl (the external https address of the service) is required when externalLogin.providers are configured\n'],
    ['kv: ./absent.mjs\n', 'odbrest: invalid configuration (kv.module): cannot load the kv module {dir}/absent.mjs: not found\n'],
    ['store: ./exports-nothing.mjs\n', 'odbrest: invalid configuration (store.module): store module {dir}/exports-nothing.mjs: its default export must be a function that makes the ObjectStore\n'],
    // issue 50, item 8: the module's function is called, and what it makes must be a whole store
    ['store: ./four-missing.mjs\n', 'odbrest: invalid configuration (store.module): store module {dir}/four-missing.mjs: what its default export made is not an ObjectStore (no getMany, find, count, delete)\n'],
    ['kv: ./kv-missing.mjs\n', 'odbrest: invalid configuration (kv.module): kv module {dir}/kv-missing.mjs: what its default export made is not a KeyValueStore (no take, ttl, expire, getAndExpire)\n'],
    ['macros: ./absent.mjs\n', 'odbrest: cannot load the macros module {dir}/absent.mjs: not found\n'],
  ])('%j: exit 1, one line naming the option', async (yaml, message) => {
    const dir = dirWith({
      'api-config.yml': yaml,
      'exports-nothing.mjs': 'export const x = 1;\n',
      'four-missing.mjs': 'export default async () => ({ get: async () => undefined, put: async (o) => o });\n',
      'kv-missing.mjs': 'const f = async () => undefined;\nexport default () => ({ get: f, set: f, compareAndSet: f, delete: f, increment: f });\n',
    });
    const { code, stdout, stderr } = await runCli(['check'], dir);
    const expected = message.replace('{dir}', dir);
    expect([code, stdout, stderr.slice(0, expected.length)]).toEqual([1, '', expected]);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  test('an unknown flag is a usage error (exit 2)', async () => {
    const { code, stderr } = await runCli(['check', '--port', '1'], dirWith({}));
    expect(code).toBe(2);
    expect(stderr).toMatch(/^odbrest: Unknown option '--port'.*\nusage: odbrest check/s);
  });

  // issue 50, item 2: a stored declaration the service cannot compile (an older version wrote Infinity as null)
  test('--store opens the stores and names a stored class declaration the service cannot use (exit 1)', async () => {
    const dir = dirWith({ 'api-config.yml': 'store: file:./data\n' });
    const { code, stdout } = await runCli(['check', '--store'], dir);
    expect(code).toBe(0);
    expect(stdout).toMatch(/\nstores +opened and answering; every stored class declaration is usable\n/);
    const store = await FileObjectStore.open({ path: join(dir, 'data', 'objects.journal') });
    const declaration = { declaration: { fields: { N: { type: 'number', enum: [1, null] } }, indexes: [], strict: false } };
    await store.put({ id: 'MODEL_Poison', className: 'ModelClass', fields: { _className: 'Poison', _class: JSON.stringify(declaration) } });
    await store.close();
    const broken = await runCli(['check', '--store'], dir);
    expect([broken.code, broken.stdout]).toEqual([1, '']);
    expect(broken.stderr).toMatch(/^odbrest: the stores hold what the service cannot use:\n  class Poison: its stored declaration cannot be used/);
    // without --store the configuration alone is checked, as before
    expect((await runCli(['check'], dir)).code).toBe(0);
  });
});
