/**
 * The published package as users install it: `npm pack`, then `npm install` of the tarball into a
 * fresh project outside the repository (a temporary folder, with the peer packages an app would add),
 * shared by every case. Only what a user needs is packed (no tests, no source maps); publint finds
 * nothing; a host's install holds no OpenTelemetry SDK and no passkey library. Under each Node (the
 * test runner's, Node 22 and Node 24, test/support/nodes.ts): every subpath loads through `import` and through `require` with the
 * same exports and, but for the CLI, changes no global when loaded (package.json's "sideEffects"); an
 * app mixing both copies works; `odbrest serve` names a missing optional package; the package serves
 * and is reached by its client on Node's server and in a Next.js route handler. The same on Bun's and
 * Deno's servers; and a strict TypeScript app type-checks against it (moduleResolution node16 and bundler).
 * The declaration files themselves (odbrest's and those of the packages they name: valibot's alone
 * is about 20 s of checking) are checked once, under node16 (`skipLibCheck: false` there only).
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { packageNodes, testNodes } from './support/nodes.js';
import { freePort, spawnLines } from './support/processes.js';
import { DOCUMENTS, onlyBlock, readme } from './support/readme.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const bin = (name: string) => join(root, 'node_modules/.bin', name);
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown>; sideEffects: string[] | false };
const subpaths = Object.keys(pkg.exports)
  .filter((key) => key !== './package.json')
  .map((key) => (key === '.' ? 'odbrest' : `odbrest/${key.slice(2)}`));
/** The version the repository's lock installed, so the consumer gets the same from the npm cache. */
const installed = (name: string) => `${name}@${(JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version}`;
/** The peer packages an app adds for the entries it uses (odbrest/postgres, odbrest/redis, Node's types). */
const PEERS = ['pg', '@types/pg', 'ioredis', '@types/node'];
/** Large packages the consumer borrows from the repository's install instead (vitest for odbrest/testing, Next.js, Express for the guides' blocks). */
const BORROWED = ['vitest', 'next', 'react', 'react-dom', 'express', '@types/express'];

let files: string[];
let tarball: string;
/** The consumer project: the packed package installed by npm, the files of test/fixtures/consumer. */
let app: string;
let out: string;

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'odbrest-pack-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', out], { cwd: root });
  const [{ filename, files: packed }] = JSON.parse(stdout) as [{ filename: string; files: Array<{ path: string }> }];
  files = packed.map((file) => file.path);
  tarball = join(out, filename);
  app = join(out, 'app');
  cpSync(join(root, 'test/fixtures/consumer'), app, { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', tarball, ...PEERS.map(installed)], {
    cwd: app,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  for (const name of BORROWED) symlinkSync(join(root, 'node_modules', name), join(app, 'node_modules', name));
}, 300_000);
afterAll(() => out && rmSync(out, { recursive: true, force: true }));

test('the package holds dist, the README, the LICENSE and package.json; no tests, no maps, no sources', () => {
  expect(files.filter((file) => !file.startsWith('dist/')).sort()).toEqual(['LICENSE', 'README.md', 'package.json']);
  const testFile = /(^|\/)(test|tests|__tests__)\/|\.(test|spec)\./;
  expect(files.filter((file) => testFile.test(file) || /\.map$/.test(file) || (/\.ts$/.test(file) && !/\.d\.c?ts$/.test(file)))).toEqual([]);
  expect(files).toContain('dist/testing.js'); // the store contracts are shipped, as odbrest/testing
});

test('publint finds nothing in the packed tarball', async () => {
  // the tarball's files are under package/
  const { messages } = await publint({ pkgDir: 'package', pack: { tarball: readFileSync(tarball).buffer }, level: 'suggestion', strict: true });
  expect(messages).toEqual([]);
});

test('a host installs no OpenTelemetry SDK, no Swagger UI and no passkey library', async () => {
  const { stdout } = await run('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: app }).catch((error: { stdout: string }) => ({ stdout: error.stdout }));
  const names = stdout.split('\n').map((path) => path.replace(/^.*node_modules\//, ''));
  expect(names).toContain('@opentelemetry/api');
  expect(names.filter((name) => /^@opentelemetry\/(sdk-|exporter-|core$|resources$)|^swagger-ui-dist$|^@simplewebauthn\//.test(name))).toEqual([]);
});

/** The consumer's Next.js app built once (by the Node on the PATH), for `next start` under each Node. */
let nextBuild: Promise<unknown> | undefined;
const nextBin = () => join(app, 'node_modules/next/dist/bin/next');

// what runs the package's code runs under each Node: the runner's, Node 22 and Node 24 (test/support/nodes.ts)
describe.each(packageNodes())('under $name', ({ path: node }) => {
  // Node 22, the line between the runner's and 24, gets what depends on the Node: loading, running, serving (not the CLI's messages again)
  const between = !testNodes().some((other) => other.path === node);
  test('"sideEffects" names the CLI alone, and every public entry loads without changing a global', async () => {
    expect(pkg.sideEffects).toEqual(['./dist/cli.js', './dist/cli.cjs']);
    const { stdout } = await run(node, ['globals.mjs', ...subpaths], { cwd: app });
    expect(JSON.parse(stdout)).toEqual(Object.fromEntries(subpaths.map((subpath) => [subpath, []])));
    // the check itself sees a change
    writeFileSync(join(app, 'leaks.mjs'), 'Response.prototype.leaked = true;');
    expect(JSON.parse((await run(node, ['globals.mjs', './leaks.mjs'], { cwd: app })).stdout)).toEqual({ './leaks.mjs': ['Response.prototype.leaked'] });
  }, 60_000);

  // one process loads every entry both ways (a process per entry and way cost 30 starts per Node)
  let loaded: Promise<Record<string, { import: string[] | string; require: string[] | string }>> | undefined;
  test.each(subpaths)('%s loads through import and through require, with the same exports', async (subpath) => {
    loaded ??= run(node, ['exports.mjs', ...subpaths], { cwd: app }).then(({ stdout }) => JSON.parse(stdout));
    const both = (await loaded)[subpath]!;
    expect(Array.isArray(both.import) && both.import.length > 0 ? 'loaded' : both.import).toBe('loaded');
    expect(both.require).toEqual(both.import);
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
    const { stdout } = await run(node, ['mixed.mjs'], { cwd: app });
    expect(JSON.parse(stdout)).toEqual([
      [409, { status: { internalStatus: '4711', statusMessage: 'refused by the other copy' }, data: {} }],
      [503, { status: { internalStatus: '503', statusMessage: 'storage unavailable, retry later' }, data: {} }],
    ]);
  });

  test.skipIf(between)('odbrest serve names the package a flag or option needs', async () => {
    const cli = join(app, 'node_modules/odbrest/dist/cli.js');
    const serve = (args: string[], config: string) =>
      run(node, [cli, 'serve', '--port', '0', '--host', '127.0.0.1', ...args], { cwd: app, env: { ...process.env, ODBREST_CONFIG: join(app, config) }, timeout: 20_000 }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
    writeFileSync(join(app, 'plain.yml'), 'requestLog: false\n');
    writeFileSync(join(app, 'reference.yml'), 'apiReference: true\n');
    expect(await serve(['--metrics', '0'], 'plain.yml')).toEqual({
      code: 1,
      stderr: 'odbrest: --metrics needs the @opentelemetry/sdk-metrics package: npm install @opentelemetry/sdk-metrics @opentelemetry/exporter-prometheus\n',
    });
    expect(await serve([], 'reference.yml')).toEqual({ code: 1, stderr: 'odbrest: apiReference needs the swagger-ui-dist package: npm install swagger-ui-dist\n' });
    // passkeys' package is an optional peer: the service does not start without it (one line says so, no stack before it)
    writeFileSync(join(app, 'passkeys.yml'), 'requestLog: false\npasskeys: { rpID: localhost, rpName: Test, origins: ["http://localhost:8080"] }\n');
    expect(await serve([], 'passkeys.yml')).toEqual({ code: 1, stderr: 'odbrest: passkeys needs the @simplewebauthn/server package: npm install @simplewebauthn/server\n' });
    expect(await serve(['--otlp', 'http://127.0.0.1:4318'], 'plain.yml')).toEqual({
      code: 1,
      stderr:
        'odbrest: --otlp needs the @opentelemetry/sdk-metrics package: npm install @opentelemetry/sdk-trace-base @opentelemetry/sdk-metrics @opentelemetry/exporter-trace-otlp-http @opentelemetry/exporter-metrics-otlp-http @opentelemetry/context-async-hooks @opentelemetry/core @opentelemetry/resources\n',
    });
  }, 90_000);

  test.skipIf(between)('createService with passkeys, without @simplewebauthn/server: ready rejects naming it (import and require); without passkeys the service works', async () => {
    const passkeys = "{ passkeys: { rpID: 'localhost', rpName: 'Test', origins: ['http://localhost:8080'] }, onError: () => {} }";
    const started = (load: string) => `${load}; createService(${passkeys}).ready.then(() => console.log('started'), (error) => console.log(error.message));`;
    const esm = await run(node, ['--input-type=module', '-e', started("import { createService } from 'odbrest'")], { cwd: app });
    const cjs = await run(node, ['-e', started("const { createService } = require('odbrest')")], { cwd: app });
    const message = 'passkeys needs the @simplewebauthn/server package: npm install @simplewebauthn/server';
    expect([esm.stdout.trim(), cjs.stdout.trim()]).toEqual([message, message]);
    const plain = `import { createService } from 'odbrest';
const service = createService({ appKeys: ['k'] });
const response = await service.fetch(new Request('http://x/v1/passkey/login/options', { method: 'POST', headers: { appkey: 'k', 'content-type': 'application/json' }, body: '{}' }));
console.log(JSON.stringify([response.status, await response.json()]));`;
    const { stdout } = await run(node, ['--input-type=module', '-e', plain], { cwd: app });
    expect(JSON.parse(stdout)).toEqual([403, { status: { internalStatus: '403', statusMessage: 'passkeys are not configured on this service (option passkeys: {rpID, rpName, origins})' }, data: {} }]);
  }, 60_000);

  test("the service on Node's own server answers odbrest/client: secure login, read, create, list", async () => {
    await expectRuntime('node', node, ['runtime.mjs']);
  }, 90_000);

  test("in a Next.js route handler: next start of the consumer's app/api/[...path]/route.js; odbrest/client logs in and reads", async () => {
    const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
    // webpack: Turbopack refuses node_modules entries that link out of the project (the borrowed next)
    await (nextBuild ??= run(process.execPath, [nextBin(), 'build', '--webpack', app], { cwd: app, env, maxBuffer: 16 * 1024 * 1024 }));
    const port = await freePort();
    const server = spawnLines(node, [nextBin(), 'start', app, '-p', String(port), '-H', '127.0.0.1'], { NEXT_TELEMETRY_DISABLED: '1' }, { cwd: app, detached: true });
    try {
      await server.waitFor((line) => /Ready in/.test(line), 60_000);
      const { createClient } = (await import(join(app, 'node_modules/odbrest/dist/client.js'))) as typeof import('odbrest/client');
      const client = createClient({ baseUrl: `http://127.0.0.1:${port}/api`, appKey: 'k' });
      const login = await client.loginSecure({ user: 'u', password: 'p', appNames: ['a'] });
      expect([login.user.Name, (await client.getObject('NOT00001')).Text]).toEqual(['u', 'grüße']);
    } finally {
      await server.stop();
    }
  }, 300_000);
});

/** Runs the consumer's runtime.mjs (odbrest resolves from its node_modules) and checks the line it prints. */
async function expectRuntime(runtime: string, command: string, args: string[]): Promise<void> {
  const { stdout } = await run(command, args, { cwd: app, timeout: 60_000 });
  expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ runtime, user: 'u', note: 'grüße', created: runtime, count: 2, kind: 'secure' });
}

/** How Bun and Deno run the consumer's runtime.mjs from the consumer folder. */
const RUNTIMES: Record<string, { command: string; args: string[] }> = {
  bun: { command: bin('bun'), args: ['runtime.mjs'] },
  deno: { command: bin('deno'), args: ['run', '--allow-net', '--allow-read', '--allow-env', '--allow-sys', 'runtime.mjs'] },
};

describe.each(Object.keys(RUNTIMES))('under %s', (runtime) => {
  test('the service on the runtime\'s own server answers odbrest/client: secure login, read, create, list', async () => {
    const { command, args } = RUNTIMES[runtime]!;
    await expectRuntime(runtime, command, args);
  }, 90_000);
});

describe('a strict TypeScript app', () => {
  test.each(['node16', 'bundler'])('type-checks against every public entry under moduleResolution %s', async (resolution) => {
    expect(existsSync(join(app, `tsconfig.${resolution}.json`))).toBe(true);
    const result = await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', `tsconfig.${resolution}.json`], { cwd: app }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string; message: string }) => error.stdout || error.message,
    );
    expect(result.trim()).toBe('');
  }, 300_000);
});

describe('the README and the guides, as a new user reads them', () => {
  test("the README's `npm install odbrest` is what this file does: the package installed by npm into a fresh project", () => {
    expect(onlyBlock('install').code.trim()).toBe('npm install odbrest');
    expect(JSON.parse(readFileSync(join(app, 'node_modules/odbrest/package.json'), 'utf8')).name).toBe('odbrest');
  });

  test('every TypeScript block of the README and the guides type-checks under tsc --strict against the packed package', async () => {
    // each block a module of its own (a block ends where its fence does); the one module a block
    // imports that the reader writes (docs/stores.md's ../src/my-stores) is test/fixtures/consumer/src
    const guides = join(app, 'guides');
    mkdirSync(guides, { recursive: true });
    const files: string[] = [];
    for (const doc of DOCUMENTS) {
      for (const match of readme(doc).matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
        const line = readme(doc).slice(0, match.index).split('\n').length;
        const name = `${doc.replace(/[/.]/g, '_')}_${line}.ts`;
        writeFileSync(join(guides, name), `${match[1]}\nexport {};\n`);
        files.push(name);
      }
    }
    expect(files.length).toBeGreaterThanOrEqual(15);
    expect(files.filter((name) => name.startsWith('README_md_'))).toHaveLength(1); // the ten-line mount
    const compilerOptions = { module: 'preserve', moduleResolution: 'bundler', target: 'ES2022', lib: ['ES2023', 'DOM'], types: ['node'], strict: true, noEmit: true, skipLibCheck: true };
    writeFileSync(join(guides, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }));
    const result = await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'guides'], { cwd: app }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string; message: string }) => error.stdout || error.message,
    );
    expect(result.trim()).toBe('');
  }, 120_000);
});
