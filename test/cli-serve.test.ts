/**
 * `odbrest serve` as a user runs it: the built CLI in its own process, configured by a file that
 * chooses PostgreSQL and Redis and loads a macro module, by flags, and refusing what it cannot do in
 * one line with the right exit code.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { call, loginBody, USERS } from './helpers.js';
import { freePort, remoteService, spawnLines, type LineProcess } from './support/processes.js';
import { DATABASE_URL, deleteKeys, dropSchema, REDIS_URL, RUN_ID, serverAvailable } from './support/servers.js';

const root = new URL('..', import.meta.url).pathname;
const cli = join(root, 'dist/cli.js');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

/** Runs the CLI to its end; answers its exit code and output. */
function runCli(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd: options.cwd ?? mkdtempSync(join(tmpdir(), 'odbrest-serve-')), env: { ...process.env, ...options.env }, timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-serve-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const seed = JSON.stringify({
  objects: [
    { '~ClassName': 'User', '~ObjectID': 'USR00001', Name: 'alice', _password: USERS.alice, _licences: ['crm'] },
    { '~ClassName': 'Customer', '~ObjectID': 'CUS00001', Name: 'Hansen', City: 'Hamburg' },
    { '~ClassName': 'Customer', '~ObjectID': 'CUS00002', Name: 'Berg', City: 'Hamburg' },
  ],
});
const macroModule = `export default {
  customersIn: async (ctx, { city }) => ({ city, count: await ctx.store.count('Customer', { City: city }) }),
};\n`;

const running: LineProcess[] = [];
afterAll(() => Promise.all(running.map((child) => child.stop())));

/** Starts `odbrest serve` with `args`; answers the process and the address it printed. */
async function serve(args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ child: LineProcess; url: string; stderr: string[] }> {
  const child = spawnLines(process.execPath, [cli, 'serve', ...args], env, { cwd });
  running.push(child);
  const stderr: string[] = [];
  child.child.stderr!.on('data', (chunk: string) => stderr.push(chunk));
  const line = await child.waitFor((text) => text.startsWith('odbrest listening on '));
  return { child, url: line.slice('odbrest listening on '.length), stderr };
}

const available = (await serverAvailable('PostgreSQL', 'odbrest serve on PostgreSQL and Redis')) && (await serverAvailable('Redis', 'odbrest serve on PostgreSQL and Redis'));

describe.runIf(available)('a configuration choosing PostgreSQL, Redis and a macro module', () => {
  const schema = `serve_${RUN_ID}`;
  const prefix = `odbrest-serve:${RUN_ID}:`;
  afterAll(async () => {
    await Promise.all(running.map((child) => child.stop()));
    await dropSchema(schema);
    await deleteKeys(prefix);
  });

  test('logs in, reads an object, runs the macro; every request is one line of the log', async () => {
    const dir = dirWith({
      'api-config.yml': [
        'port: 0',
        'hostname: 127.0.0.1',
        'dataFile: ./data.json',
        'macros: ./macros.mjs',
        `store: { url: "${DATABASE_URL}", schema: ${schema}, table: objects, indexedFields: [City] }`,
        `kv: { url: "${REDIS_URL}", prefix: "${prefix}" }`,
        `files: { blobs: { url: "${DATABASE_URL}", schema: ${schema}, table: blobs } }`,
        'access: { Document: { create: ["*"] } }',
        'users: { passwordIterations: 1000 }',
        'appKeys: [crm-app]',
        '',
      ].join('\n'),
      'data.json': seed,
      'macros.mjs': macroModule,
    });
    const { child, url } = await serve(['--config', join(dir, 'api-config.yml')], tmpdir());
    const service = remoteService(url);
    const headers = { appkey: 'crm-app' };
    const login = await call(service as never, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice), headers });
    expect(login.body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
    const sessionId = login.body.data.sessionId as string;
    const customer = await call(service as never, 'GET', '/v1/object/CUS00001', { headers: { ...headers, sessionId } });
    expect(customer.body).toEqual({
      status: { internalStatus: '0', statusMessage: 'ok' },
      data: { '~ClassName': 'Customer', '~ObjectID': 'CUS00001', '~StoreTime': expect.any(String), Name: 'Hansen', City: 'Hamburg' },
    });
    const macro = await call(service as never, 'POST', '/v1/execute/customersIn', { json: { city: 'Hamburg' }, headers: { ...headers, sessionId } });
    expect(macro.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { city: 'Hamburg', count: 2 } });

    // the objects are in this run's PostgreSQL schema and the session in Redis under its prefix
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    const rows = await client.query(`SELECT count(*)::int AS n FROM "${schema}".objects`);
    // store.indexedFields: the field's column (and its indexes) are there
    const columns = await client.query(`SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'objects' AND column_name LIKE 'f\\_%'`, [schema]);
    await client.end();
    expect(rows.rows[0].n).toBe(3);
    expect(columns.rows).toEqual([{ column_name: 'f_City' }]);
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL);
    expect((await redis.keys(`${prefix}*`)).length).toBeGreaterThan(0);
    await redis.quit();

    await expect.poll(() => child.lines.filter((line) => !line.startsWith('odbrest listening')).map((line) => line.replace(/^\S+Z /, '').replace(/ [\d.]+ms [A-Za-z0-9._-]+$/, ''))).toEqual([
      'POST /v1/login 200 0',
      'GET /v1/object/CUS00001 200 0',
      'POST /v1/execute/customersIn 200 0',
    ]);
    expect(child.lines.join('\n')).not.toContain(sessionId);

    // files: the bytes go to the blobs tables of the same schema
    const uploadId = (await call(service as never, 'GET', '/v1/uploadFile', { headers: { ...headers, sessionId } })).body.data.uploadId as string;
    await call(service as never, 'POST', `/v1/uploadFile/${uploadId}`, { headers: { ...headers, sessionId, 'content-type': 'text/plain' }, body: 'in postgres' });
    const file = (await call(service as never, 'PATCH', `/v1/uploadFile/${uploadId}`, { headers: { ...headers, sessionId } })).body.data;
    expect(await (await fetch(`${url}/v1/file/${file['~ObjectID']}`, { headers: { ...headers, sessionId } })).text()).toBe('in postgres');
    const blobs = new pg.Client({ connectionString: DATABASE_URL });
    await blobs.connect();
    const stored = await blobs.query(`SELECT id FROM "${schema}".blobs`);
    await blobs.end();
    expect(stored.rows).toEqual([{ id: file['~ObjectID'] }]);
  });
});

describe('odbrest serve', () => {
  test('--config, --port and --host win over the variables and the file; requestLog: false is quiet', async () => {
    const port = await freePort();
    const dir = dirWith({ 'conf.yml': 'port: 1\nhostname: 0.0.0.0\nrequestLog: false\ndataFile: ./data.json\nusers: { passwordIterations: 1000 }\n', 'data.json': seed });
    const { child, url, stderr } = await serve(['--config', 'conf.yml', '--port', String(port), '--host', '127.0.0.1'], dir, { PORT: '2', ODBREST_HOSTNAME: '::1' });
    expect(url).toBe(`http://127.0.0.1:${port}`);
    const login = await call(remoteService(url) as never, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice), headers: { appkey: 'x' } });
    expect(login.body.status.internalStatus).toBe('0');
    await child.stop();
    expect([child.lines, stderr]).toEqual([[`odbrest listening on ${url}`], []]);
  });

  test('the request log going to a pipe nobody reads any more (EPIPE) is dropped; the service goes on answering', async () => {
    const dir = dirWith({ 'api-config.yml': 'dataFile: ./data.json\nusers: { passwordIterations: 1000 }\n', 'data.json': seed });
    const { child, url } = await serve(['--port', '0', '--host', '127.0.0.1'], dir);
    const service = remoteService(url) as never;
    expect((await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice), headers: { appkey: 'x' } })).status).toBe(200);
    child.child.stdout!.destroy(); // the reading end of its stdout pipe goes away
    for (let i = 0; i < 20; i++) {
      const login = await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice), headers: { appkey: 'x' } });
      expect(login.body.status.internalStatus).toBe('0');
      await new Promise((resolve) => setTimeout(resolve, 5)); // a turn of the server's loop: its log is written (and fails)
    }
    expect([child.child.exitCode, child.child.signalCode]).toEqual([null, null]);
    await child.stop();
  });

  test('files: uploads go to the blob folder the configuration names, downloads come from it, maxUploadBytes holds', async () => {
    const dir = dirWith({
      'api-config.yml': 'dataFile: ./data.json\nusers: { passwordIterations: 1000 }\nfiles: { blobs: file:./blobs, maxUploadBytes: 64 }\naccess: { Document: { create: ["*"] } }\n',
      'data.json': seed,
    });
    const { url } = await serve(['--port', '0', '--host', '127.0.0.1'], dir);
    const service = remoteService(url) as never;
    const sessionId = (await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice), headers: { appkey: 'x' } })).body.data.sessionId as string;
    const headers = { appkey: 'x', sessionId };
    const send = async (body: string) => {
      const uploadId = (await call(service, 'GET', '/v1/uploadFile', { headers })).body.data.uploadId as string;
      const sent = await call(service, 'POST', `/v1/uploadFile/${uploadId}?name=notes.txt`, { headers: { ...headers, 'content-type': 'text/plain' }, body });
      return { sent, finished: await call(service, 'PATCH', `/v1/uploadFile/${uploadId}`, { headers }) };
    };
    const { finished } = await send('x'.repeat(64));
    expect(finished.body.data).toMatchObject({ '~ClassName': 'Document', Name: 'notes.txt', Size: 64, ContentType: 'text/plain' });
    const id = finished.body.data['~ObjectID'] as string;
    expect(readdirSync(join(dir, 'blobs')).sort()).toEqual(['.lock', Buffer.from(id).toString('hex')]); // the server holds the folder's lock
    const download = await fetch(`${url}/v1/file/${id}`, { headers });
    expect([download.status, download.headers.get('content-disposition'), await download.text()]).toEqual([200, 'attachment; filename=notes.txt', 'x'.repeat(64)]);
    const tooLarge = await send('x'.repeat(65));
    expect([tooLarge.sent.status, tooLarge.sent.body.status.internalStatus]).toEqual([413, '413']);
  });

  test('studio: in api-config.yml serves the studio under the base path and prints its address', async () => {
    const dir = dirWith({ 'api-config.yml': 'dataFile: ./data.json\nusers: { passwordIterations: 1000 }\nmount: { basePath: /api }\nstudio: { path: tools/studio, appNames: [crm], docs: \'https://api.example.com/docs\' }\n', 'data.json': seed });
    const { child, url } = await serve(['--port', '0', '--host', '127.0.0.1'], dir);
    expect(await child.waitFor((line) => line.startsWith('odbrest studio'))).toBe(`odbrest studio, the data browser, at ${url}/tools/studio/`);
    const page = await fetch(`${url}/tools/studio/`);
    expect([page.status, page.headers.get('x-frame-options')]).toEqual([200, 'DENY']);
    const text = await page.text();
    expect(text).toContain('&quot;appNames&quot;:[&quot;crm&quot;]');
    expect(text).toContain('&quot;docs&quot;:&quot;https://api.example.com/docs&quot;');
  });

  test('apiReference: Swagger UI on the service\'s openapi.json at {base}/docs, its files from swagger-ui-dist, no other origin', async () => {
    const dir = dirWith({ 'api-config.yml': 'mount: { basePath: /api }\napiReference: true\n' });
    const { url } = await serve(['--port', '0', '--host', '127.0.0.1'], dir);
    const page = await fetch(`${url}/docs`);
    expect([page.status, page.headers.get('content-type'), page.headers.get('content-security-policy')]).toEqual([
      200,
      'text/html; charset=utf-8',
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ]);
    const html = await page.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(sources).toEqual(['data:,', 'docs/swagger-ui.css', 'docs/swagger-ui-bundle.js', 'docs/start.js']);
    const dist = join(root, 'node_modules/swagger-ui-dist');
    for (const [name, type] of [['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'], ['swagger-ui.css', 'text/css; charset=utf-8']]) {
      const file = await fetch(new URL(`docs/${name}`, `${url}/docs`));
      expect([file.status, file.headers.get('content-type'), await file.text()]).toEqual([200, type, readFileSync(join(dist, name!), 'utf8')]);
    }
    // the page's start finds the document relative to the page: /api/docs -> /api/openapi.json
    const start = await (await fetch(`${url}/docs/start.js`)).text();
    const spec = new URL(JSON.parse(/url: new URL\(("[^"]+")/.exec(start)![1]!) as string, `${url}/docs`).href;
    expect(spec).toBe(`${url}/openapi.json`);
    expect((await (await fetch(spec)).json()).openapi).toMatch(/^3\.1/);
    const missing = await fetch(`${url}/docs/index.html`);
    expect([missing.status, (await missing.json()).status.internalStatus]).toEqual([404, '404']);
    const post = await fetch(`${url}/docs`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  test('store: and kv: name modules whose default export makes the store, given kv.options; objects live in it', async () => {
    const dist = join(root, 'dist/index.js');
    const dir = dirWith({
      'api-config.yml': 'dataFile: ./data.json\nusers: { passwordIterations: 1000 }\nstore: ./my-store.mjs\nkv: { module: ./my-kv.mjs, options: { label: second } }\naccess: { Customer: { create: ["*"] } }\n',
      'data.json': seed,
      'my-store.mjs': `import { appendFileSync } from 'node:fs';
import { MemoryObjectStore } from ${JSON.stringify(dist)};
export default async (options) => {
  const store = new MemoryObjectStore();
  const put = store.put.bind(store);
  store.put = (object) => (appendFileSync('puts.log', object.className + ' ' + JSON.stringify(options) + '\\n'), put(object));
  return store;
};
`,
      'my-kv.mjs': `import { writeFileSync } from 'node:fs';
import { MemoryKeyValueStore } from ${JSON.stringify(dist)};
export default (options) => (writeFileSync('kv.log', options.label), new MemoryKeyValueStore());
`,
    });
    const { url, stderr } = await serve(['--port', '0', '--host', '127.0.0.1'], dir);
    const service = remoteService(url) as never;
    const sessionId = (await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice), headers: { appkey: 'x' } })).body.data.sessionId as string;
    const created = await call(service, 'POST', '/v1/object/Customer', { json: { Name: 'Nord', City: 'Kiel' }, headers: { appkey: 'x', sessionId } });
    expect(created.body.status.internalStatus).toBe('0');
    expect(readFileSync(join(dir, 'puts.log'), 'utf8').trim().split('\n')).toEqual(['User {}', 'Customer {}', 'Customer {}', 'Customer {}']);
    expect(readFileSync(join(dir, 'kv.log'), 'utf8')).toBe('second');
    expect(stderr.join('')).toBe(''); // not the in-memory notice: the module is the store
  });

  test.each([
    ['store: ./none.mjs\n', 'odbrest: cannot load the store module {dir}/none.mjs: not found\n'],
    ['store: ./not-a-function.mjs\n', 'odbrest: store module {dir}/not-a-function.mjs: its default export must be a function that makes the ObjectStore\n'],
    ['kv: ./half.mjs\n', 'odbrest: kv module {dir}/half.mjs: what its default export made is not a KeyValueStore (no set, compareAndSet, take, delete, increment, ttl, expire, getAndExpire)\n'],
    ['store: { url: memory, module: ./half.mjs }\n', 'odbrest: invalid configuration (store): give store.url or store.module, not both\n'],
    ['store: { url: memory, options: { a: 1 } }\n', 'odbrest: invalid configuration (store.options): options are for store.module\n'],
    ['store: { module: my-store.mjs }\n', 'odbrest: invalid configuration (store.module): store.module must be a path to a module (./my-store.mjs)\n'],
  ])('a store module that cannot make a store: %j stops with one line (exit 1)', async (yaml, message) => {
    const dir = dirWith({ 'api-config.yml': yaml, 'not-a-function.mjs': 'export default {};\n', 'half.mjs': 'export default () => ({ get: async () => undefined });\n' });
    expect(await runCli(['serve', '--port', '0'], { cwd: dir })).toEqual({ code: 1, stdout: '', stderr: message.replace('{dir}', dir) });
  });

  test('with the in-memory store and no data it says so in one line', async () => {
    const { child, stderr } = await serve(['--port', '0', '--host', '127.0.0.1'], dirWith({}));
    await child.stop();
    expect(stderr.join('')).toBe('odbrest: serving an empty in-memory database, gone on exit; choose store: and dataFile: in api-config.yml (docs/operations.md, "Options")\n');
  });

  test.each([['--help'], ['help'], ['serve', '--help']])('%s prints the usage and exits 0', async (...args) => {
    const { code, stdout, stderr } = await runCli(args);
    expect([code, stderr]).toEqual([0, '']);
    expect(stdout).toMatch(/^usage: odbrest serve \[--config FILE\] \[--port N\] \[--host H\]/);
  });

  // Every command the main usage lists answers --help (and -h, and `help COMMAND`) with its own usage, before reading any flag or configuration.
  const commands = ['serve', 'check', 'keygen', 'export', 'import', 'user', 'types'];
  test('the main usage lists exactly these commands', async () => {
    const { stdout } = await runCli(['--help']);
    expect([...new Set([...stdout.matchAll(/^(?:usage:|\s+) odbrest ([a-z]+) /gm)].map((match) => match[1]))]).toEqual(commands);
  });
  test.each([...commands.map((command) => [command, '--help']), ['import', '-h'], ['help', 'export'], ['user', 'add', 'bob', '--help'], ['types', '--out', 'x', '--help']].map((args) => [args.join(' '), args]))(
    'odbrest %s prints that command\'s usage and exits 0',
    async (_, args) => {
      const command = args[0] === 'help' ? args[1]! : args[0]!;
      const { code, stdout, stderr } = await runCli(args);
      expect([code, stderr]).toEqual([0, '']);
      expect(stdout).toMatch(new RegExp(`^usage: odbrest ${command} `));
    },
  );

  test('--version prints the version and exits 0', async () => {
    expect(await runCli(['--version'])).toEqual({ code: 0, stdout: `odbrest ${version}\n`, stderr: '' });
  });

  test('a port in use is one line and exit 1', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      expect(await runCli(['serve', '--port', String(port), '--host', '127.0.0.1'])).toEqual({
        code: 1,
        stdout: '',
        stderr: `odbrest: port ${port} is already in use\n`,
      });
    } finally {
      blocker.close();
    }
  });

  test.each([
    [['serve', '--bogus'], 'odbrest: unknown flag --bogus for serve\nusage: odbrest serve'],
    [['serve', '--port'], 'odbrest: --port needs a value\nusage: odbrest serve'],
    [['serve', '--port', '80x'], 'odbrest: --port must be a whole number from 0 to 65535\nusage: odbrest serve'],
    [['serve', 'extra'], 'odbrest: serve takes no argument extra\nusage: odbrest serve'],
    [['bogus'], 'odbrest: unknown command bogus\nusage: odbrest serve'],
  ])('%j is a usage error: exit 2', async (args, message) => {
    const { code, stdout, stderr } = await runCli(args);
    expect([code, stdout, stderr.slice(0, message.length)]).toEqual([2, '', message]);
  });

  test.each([
    ['prot: 80\n', 'odbrest: invalid configuration (prot): unknown option "prot"; allowed: port, hostname, dataFile, macros, requestLog, log, store, kv, files, databaseName, mount, appKeys, trustProxy, cors, serviceCheck, maxBodyBytes, session, loginLimit, twoFactor, access, users, passkeys, mail, customLogin, secure, externalLogin, objects, schema, openApi, apiReference, studio, events, caches\n'],
    ['session: { idle: 5 }\n', 'odbrest: invalid configuration (session.idle): unknown option "idle" in session; allowed: idleTimeoutMinutes, absoluteTimeoutHours, jwtSecret, maxPerUser\n'],
    ['store: mysql://user:secret@db/x\n', 'odbrest: invalid configuration (store.url): store must be memory, file:<folder> or a postgres:// URL, not "mysql:"\n'],
    ['kv: { url: memory, prefix: 3 }\n', 'odbrest: invalid configuration (kv.prefix): kv.prefix must be a string\n'],
    ['macros: ./nope.mjs\n', `odbrest: cannot load the macros module {dir}/nope.mjs: not found\n`],
    ['session: 5\n', 'odbrest: invalid configuration (session): session must be a mapping of idleTimeoutMinutes, absoluteTimeoutHours, jwtSecret, maxPerUser\n'],
  ])('the configuration %j stops with one line naming the option (exit 1)', async (yaml, message) => {
    const dir = dirWith({ 'api-config.yml': yaml });
    expect(await runCli(['serve', '--port', '0'], { cwd: dir })).toEqual({ code: 1, stdout: '', stderr: message.replace('{dir}', dir) });
  });
});
