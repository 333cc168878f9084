/** Host configuration for the standalone server: api-config.yml, then ODBREST_* variables. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ConfigSchema } from '../adapters/config-schema.js';
import { loadConfig, openConfig, type HostConfig } from '../adapters/node-config.js';
import { createService } from '../src/index.js';
import { FileObjectStore, FolderBlobStore } from '../stores/file-store.js';
import { call, demoData, loginBody, USERS } from './helpers.js';
import { codeBlocks, readmeSection } from './support/readme.js';

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-config-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('loadConfig', () => {
  test('reads api-config.yml and the data file next to it', async () => {
    const dir = dirWith({
      'api-config.yml': 'port: 9090\ndataFile: ./data.json\ndatabaseName: crm\nappKeys: [web]\nsession: { idleTimeoutMinutes: 5 }\nloginLimit: { perUser: 2 }\nevents: { retainMinutes: 1 }\n',
      'data.json': JSON.stringify({ objects: [{ '~ClassName': 'User', Name: 'bob', _password: USERS.bob, _licences: ['crm'] }] }),
    });
    const config = loadConfig({}, dir);
    expect(config.port).toBe(9090);
    expect(config.options).toMatchObject({ databaseName: 'crm', appKeys: ['web'], session: { idleTimeoutMs: 300_000 }, loginLimit: { perUser: 2 }, events: { retainMs: 60_000 } });
    const service = createService({ ...config.options, users: { passwordIterations: 1000 } });
    await service.ready;
    const result = await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob), headers: { appkey: 'web' } });
    expect(result.body.data.databaseName).toBe('crm');
  });

  test('environment variables win over the file', () => {
    const dir = dirWith({ 'api-config.yml': 'port: 9090\ndatabaseName: fromfile\n' });
    const config = loadConfig({ PORT: '7000', ODBREST_DATABASE_NAME: 'fromenv', ODBREST_APP_KEYS: 'a, b', ODBREST_TRUST_PROXY: 'true' }, dir);
    expect(config.port).toBe(7000);
    expect(config.options).toMatchObject({ databaseName: 'fromenv', appKeys: ['a', 'b'], trustProxy: true });
  });

  test('access: the rule table from the file becomes access.rules', () => {
    const dir = dirWith({ 'api-config.yml': 'access:\n  "*": { read: ["*"] }\n  Customer: { create: [sales], delete: [admins] }\n' });
    expect(loadConfig({}, dir).options.access).toEqual({ rules: { '*': { read: ['*'] }, Customer: { create: ['sales'], delete: ['admins'] } } });
  });

  test('twoFactor: the policies from the file, the key from ODBREST_2FA_KEY (it wins over the file)', () => {
    const dir = dirWith({ 'api-config.yml': 'twoFactor:\n  policies: { hr: optional, vault: forced }\n  key: a key of the file, at least 32 characters long\n  issuer: Example HR\n' });
    expect(loadConfig({}, dir).options.twoFactor).toEqual({ policies: { hr: 'optional', vault: 'forced' }, key: 'a key of the file, at least 32 characters long', issuer: 'Example HR' });
    const config = loadConfig({ ODBREST_2FA_KEY: 'a key of the environment, 32 characters or more' }, dir);
    expect(config.options.twoFactor?.key).toBe('a key of the environment, 32 characters or more');
    const rotated = loadConfig({}, dirWith({ 'api-config.yml': `twoFactor: { policies: { hr: optional }, key: ['${'n'.repeat(32)}', '${'o'.repeat(32)}'] }\n` }));
    expect(rotated.options.twoFactor?.key).toEqual(['n'.repeat(32), 'o'.repeat(32)]);
    expect(() => createService(loadConfig({}, dirWith({ 'api-config.yml': 'twoFactor: { policies: { hr: optional } }\n' })).options)).toThrow('twoFactor.key is required');
  });

  test('objects.serialization.styles: preview and detail field lists per class, checked', async () => {
    const dir = dirWith({ 'api-config.yml': 'objects:\n  serialization:\n    styles:\n      Customer: { preview: [Name, City] }\n' });
    const config = loadConfig({}, dir);
    expect(config.options.objects?.serialization).toEqual({ styles: { Customer: { preview: ['Name', 'City'] } } });
    const service = createService({ ...config.options, data: demoData(), users: { passwordIterations: 1000 } });
    await service.ready;
    const sessionId = (await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice) })).body.data.sessionId;
    const serialization = encodeURIComponent(JSON.stringify({ type: 'class', style: 'preview' }));
    const preview = await call(service, 'GET', `/v1/object/CUS00001?serialization=${serialization}`, { headers: { sessionId } });
    expect(Object.keys(preview.body.data)).toEqual(['~ClassName', '~ObjectID', '~StoreTime', 'Name', 'City']);
    expect(() => loadConfig({}, dirWith({ 'api-config.yml': 'objects: { serialization: { styles: { Customer: { list: [Name] } } } }\n' }))).toThrow('unknown option "list" in objects.serialization.styles.Customer; allowed: preview, detailview');
    expect(() => loadConfig({}, dirWith({ 'api-config.yml': 'objects: { serialization: { styles: { Customer: { preview: Name } } } }\n' }))).toThrow(/objects\.serialization\.styles must be a list of field names/);
  });

  test('no file and no variables: defaults', () => {
    const config = loadConfig({}, dirWith({}));
    expect(config.port).toBe(8080);
    expect(config.options.data).toBeUndefined();
  });

  test.each([
    ['port: eighty\n', 'invalid configuration (port): port must be a whole number from 0 to 65535'],
    ['port: 70000\n', 'invalid configuration (port): port must be a whole number from 0 to 65535'],
    ['loginLimit: { perUser: 0 }\n', 'invalid configuration (loginLimit.perUser): loginLimit.perUser must be a whole number 1 or more'],
    ['externalLogin: { providers: [{ name: Google, secret: x }] }\n', 'invalid configuration (externalLogin.providers[0].secret): unknown option "secret" in externalLogin.providers[0]; allowed: name, endpoints'],
    ['kv: redis:/x\n', 'invalid configuration (kv.url): kv must be memory or a redis:// (rediss://) URL, not "redis:"'],
    ['requestLog: sometimes\n', 'invalid configuration (requestLog): requestLog must be true or false'],
    ['log: { format: xml }\n', 'invalid configuration (log.format): log.format must be text or json'],
    ['session: { jwtSecret: short }\n', 'invalid configuration (session.jwtSecret): session.jwtSecret must be at least 32 characters'],
    ['store: { url: memory, indexedFields: City }\n', 'invalid configuration (store.indexedFields): store.indexedFields must be a list of field names'],
    ['appKeys: web\n', 'invalid configuration (appKeys): appKeys must be a list of strings'],
    ['access: { Customer: { write: [sales] } }\n', 'invalid configuration (access.Customer.write)'],
    ['access: { Customer: { read: sales } }\n', 'access rules must be a list of group names, "*" or "self"'],
    ['prot: 80\n', 'invalid configuration (prot): unknown option "prot"; allowed: port, hostname, dataFile, macros, requestLog, log, store, kv, files, databaseName'],
    ['files: { blob: file:./files }\n', 'invalid configuration (files.blob): unknown option "blob" in files; allowed: blobs, maxUploadBytes, className'],
    ['files: { blobs: "s3://key:secret@bucket" }\n', 'invalid configuration (files.blobs.url): files.blobs: an s3:// URL names the bucket (and a prefix) only, without a key or port; credentials come from AWS_ACCESS_KEY_ID'],
    ['files: { blobs: "ftp://bucket" }\n', 'invalid configuration (files.blobs.url): files.blobs must be memory, file:<folder>, a postgres:// URL or s3://<bucket>/<prefix>, not "ftp:"'],
    ['files: { blobs: { url: memory, tabel: x } }\n', 'invalid configuration (files.blobs.tabel): unknown option "tabel" in files.blobs; allowed: url, schema, table'],
    ['files: { maxUploadBytes: 1.5 }\n', 'invalid configuration (files.maxUploadBytes): files.maxUploadBytes must be a whole number 0 or more'],
    ['files: { className: 1Doc }\n', 'invalid configuration (files.className): files.className must match [A-Za-z][A-Za-z0-9_]{0,63}'],
    ['- a\n- b\n', 'expected a mapping of options'],
    ['dataFile: ./missing.json\n', 'cannot read data file'],
    ['twoFactor: { policies: { hr: always } }\n', 'invalid configuration (twoFactor.policies.hr): twoFactor.policies: each policy must be optional or forced'],
    ['twoFactor: { key: short }\n', 'invalid configuration (twoFactor.key): twoFactor.key must be at least 32 characters'],
    ['twoFactor: { key: 7 }\n', 'invalid configuration (twoFactor.key): twoFactor.key must be a string of at least 32 characters, or a list of them'],
  ])('%j stops with a message naming the problem', (yaml, message) => {
    expect(() => loadConfig({}, dirWith({ 'api-config.yml': yaml }))).toThrow(message);
  });

  test.each([
    [{ ODBREST_TRUST_PROXY: 'yes' }, 'invalid configuration (trustProxy): trustProxy must be true or false'],
    [{ ODBREST_PORT: 'abc' }, 'invalid configuration (port): port must be a whole number from 0 to 65535'],
    [{ ODBREST_STORE: 'mongodb://u:secret@h' }, 'invalid configuration (store.url): store must be memory, file:<folder> or a postgres:// URL, not "mongodb:"'],
    [{ ODBREST_REQUEST_LOG: 'loud' }, 'invalid configuration (requestLog): requestLog must be true or false'],
    [{ ODBREST_LOG_FORMAT: 'yaml' }, 'invalid configuration (log.format): log.format must be text or json'],
    [{ ODBREST_IDLE_MINUTES: 'soon' }, 'invalid configuration (session.idleTimeoutMinutes): session.idleTimeoutMinutes must be a number'],
  ])('the variables %j stop with a message naming the option', (env, message) => {
    expect(() => loadConfig(env, dirWith({}))).toThrow(message);
  });

  test.each([
    ['1', true],
    ['false', false],
    ['0', false],
  ])('ODBREST_TRUST_PROXY=%s overrides the file', (value, expected) => {
    const dir = dirWith({ 'api-config.yml': `trustProxy: ${!expected}\n` });
    expect(loadConfig({ ODBREST_TRUST_PROXY: value }, dir).options.trustProxy).toBe(expected);
  });

  test('relative paths are read from the config file’s folder, not the working directory', () => {
    const dir = dirWith({});
    mkdirSync(join(dir, 'conf'));
    writeFileSync(join(dir, 'conf', 'api-config.yml'), 'dataFile: ./data.json\n');
    writeFileSync(join(dir, 'conf', 'data.json'), JSON.stringify({ objects: [{ '~ClassName': 'Customer', Name: 'only' }] }));
    const config = loadConfig({ ODBREST_CONFIG: 'conf/api-config.yml' }, dir);
    expect(config.options.data?.objects).toEqual([{ '~ClassName': 'Customer', Name: 'only' }]);
  });

  test.each([
    ['ODBREST_HOSTNAME', '0.0.0.0', (c: HostConfig) => c.hostname, '0.0.0.0'],
    ['ODBREST_BASE_PATH', '/api', (c: HostConfig) => c.options.mount?.basePath, '/api'],
    ['ODBREST_ALIAS', 'crm', (c: HostConfig) => c.options.mount?.alias, 'crm'],
    ['ODBREST_JWT_SECRET', 'x'.repeat(32), (c: HostConfig) => c.options.session?.jwtSecret, 'x'.repeat(32)],
    ['ODBREST_IDLE_MINUTES', '5', (c: HostConfig) => c.options.session?.idleTimeoutMs, 300_000],
    ['ODBREST_ABSOLUTE_HOURS', '2', (c: HostConfig) => c.options.session?.absoluteTimeoutMs, 7_200_000],
    ['ODBREST_MAX_BODY_BYTES', '4096', (c: HostConfig) => c.options.maxBodyBytes, 4096],
    ['ODBREST_PUBLIC_URL', 'https://api.example', (c: HostConfig) => c.options.externalLogin?.publicUrl, 'https://api.example'],
  ] as const)('%s=%s sets its option', (name, value, read, expected) => {
    expect(read(loadConfig({ [name]: value }, dirWith({})))).toEqual(expected);
  });

  test('an empty variable counts as unset', () => {
    const dir = dirWith({ 'api-config.yml': 'port: 9090\ndatabaseName: fromfile\n' });
    const config = loadConfig({ PORT: '', ODBREST_DATABASE_NAME: '', ODBREST_TRUST_PROXY: '' }, dir);
    expect([config.port, config.options.databaseName, config.options.trustProxy]).toEqual([9090, 'fromfile', undefined]);
  });

  test('PORT wins over ODBREST_PORT', () => {
    expect(loadConfig({ ODBREST_PORT: '7001', PORT: '7002' }, dirWith({})).port).toBe(7002);
  });

  test('a named config file that does not exist is an error', () => {
    expect(() => loadConfig({ ODBREST_CONFIG: 'nope.yml' }, dirWith({}))).toThrow('config file not found');
  });

  test('the request log is on unless requestLog: false', () => {
    expect(loadConfig({}, dirWith({})).options.logger).toBeTypeOf('function');
    expect(loadConfig({}, dirWith({ 'api-config.yml': 'requestLog: false\n' })).options.logger).toBeUndefined();
    expect(loadConfig({ ODBREST_REQUEST_LOG: '0' }, dirWith({})).options.logger).toBeUndefined();
  });
});

describe('the complete api-config.yml of docs/operations.md', () => {
  const yaml = codeBlocks(readmeSection('The standalone server: `odbrest serve`'), 'yaml')[0]!;

  test('is accepted as printed', () => {
    const dir = dirWith({ 'api-config.yml': yaml, 'demo-data.json': '{"objects":[]}' });
    mkdirSync(join(dir, 'keys'));
    writeFileSync(join(dir, 'keys/server-key.pem'), 'PEM');
    const config = loadConfig({}, dir);
    expect(config.options).toMatchObject({ databaseName: 'crm', session: { idleTimeoutMs: 1_800_000, maxPerUser: 1000 }, secure: { serverKey: 'PEM' } });
    expect(config.file.store).toEqual({ url: 'postgres://odbrest@db.internal:5432/crm', schema: 'public', table: 'odbrest_store', indexedFields: ['City', 'Revenue'] });
  });

  test('shows every option of the file', () => {
    const shown = new Set([...yaml.matchAll(/^(\w+):/gm)].map((match) => match[1]));
    expect(Object.keys(ConfigSchema.entries).filter((name) => !shown.has(name))).toEqual([]);
  });
});

describe('openConfig', () => {
  const seed = JSON.stringify({ objects: [{ '~ClassName': 'Customer', '~ObjectID': 'CUS00001', Name: 'first' }] });

  test('memory (the default) leaves the stores to the service', async () => {
    const options = await openConfig(loadConfig({}, dirWith({ 'api-config.yml': 'store: memory\nkv: memory\n' })));
    expect([options.store, options.kv]).toEqual([undefined, undefined]);
  });

  test('file:<folder> opens a file store there (from the config file’s folder); seed data only while it is empty', async () => {
    const dir = dirWith({ 'api-config.yml': 'store: file:./data\ndataFile: ./seed.json\n', 'seed.json': seed });
    const first = await openConfig(loadConfig({}, dir));
    expect(first.store).toBeInstanceOf(FileObjectStore);
    const service = createService(first);
    await service.ready;
    await service.store.put({ id: 'CUS00001', className: 'Customer', fields: { Name: 'changed' } });
    await service.close();
    const again = await openConfig(loadConfig({}, dir));
    expect(again.data).toBeUndefined(); // the store holds Customers: the seed would overwrite them
    expect((await again.store!.get('CUS00001'))?.fields).toEqual({ Name: 'changed' });
    await again.store!.close?.();
  });

  test('files: the blob store by URL (file:<folder> from the config file’s folder, or ODBREST_BLOBS), the limit and the class', async () => {
    const dir = dirWith({ 'api-config.yml': 'files: { blobs: file:./files, maxUploadBytes: 2048, className: Attachment }\n' });
    const options = await openConfig(loadConfig({}, dir));
    expect(options.files).toMatchObject({ maxUploadBytes: 2048, className: 'Attachment' });
    expect(options.files!.blobs).toBeInstanceOf(FolderBlobStore);
    await options.files!.blobs!.put('probe', new Blob(['bytes']).stream());
    expect(readdirSync(join(dir, 'files')).sort()).toEqual(['.lock', Buffer.from('probe').toString('hex')]); // the store's lock while open

    const fromEnv = await openConfig(loadConfig({ ODBREST_BLOBS: `file:${join(dir, 'elsewhere')}`, ODBREST_MAX_UPLOAD_BYTES: '99' }, dir));
    expect(fromEnv.files).toMatchObject({ maxUploadBytes: 99, className: 'Attachment', blobs: expect.any(FolderBlobStore) });
    expect(existsSync(join(dir, 'elsewhere'))).toBe(true);
    // memory (and no files group at all) leaves the blob store to the service
    expect((await openConfig(loadConfig({}, dirWith({ 'api-config.yml': 'files: { blobs: memory }\n' })))).files).toEqual({});
    expect((await openConfig(loadConfig({}, dirWith({})))).files).toBeUndefined();
    expect(loadConfig({}, dirWith({ 'api-config.yml': 'files: { blobs: { url: "postgres://db/x", schema: s, table: t } }\n' })).file.files?.blobs).toEqual({ url: 'postgres://db/x', schema: 's', table: 't' });
  });

  test('ODBREST_STORE chooses the store', async () => {
    const dir = dirWith({});
    const options = await openConfig(loadConfig({ ODBREST_STORE: `file:${join(dir, 'elsewhere')}` }, dir));
    expect(options.store).toBeInstanceOf(FileObjectStore);
    await options.store!.close?.();
  });

  test.each([
    ['a default export', 'export default { hello: () => ({ hi: 1 }), xApi_FindObjects: () => true };\n', ['hello', 'xApi_FindObjects']],
    ['named exports', 'export const hello = () => ({ hi: 1 });\nexport function bye() { return {}; }\n', ['bye', 'hello']],
  ])('macros from %s, beside the host’s own', async (_kind, module, names) => {
    const dir = dirWith({ 'api-config.yml': 'macros: ./macros.mjs\n', 'macros.mjs': module });
    const options = await openConfig(loadConfig({}, dir), { macros: { own: () => ({}) } });
    expect(Object.keys(options.macros!).sort()).toEqual(['own', ...names].sort());
  });

  test.each([
    ['export const hello = 5;\n', 'macros module {file}: hello must be a function (a macro or an xApi_* hook)'],
    ['export default { own: () => 1 };\n', 'macros module ./macros.mjs: own is already a macro of this server'],
    ['export default {;\n', 'cannot load the macros module {file}: '],
  ])('a macros module %j is refused', async (module, message) => {
    const dir = dirWith({ 'api-config.yml': 'macros: ./macros.mjs\n', 'macros.mjs': module });
    await expect(openConfig(loadConfig({}, dir), { macros: { own: () => ({}) } })).rejects.toThrow(message.replace('{file}', join(dir, 'macros.mjs')));
  });
});
