/**
 * `odbrest user add|disable|groups|password` against the configured stores, as an operator runs it:
 * the built CLI in its own process on a file store, and the same commands on PostgreSQL with Redis,
 * checked by logging in to a service on the same stores.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { createService, importObjects, type ObjectStore } from '../../src/index.js';
import { FileObjectStore } from '../../stores/file-store.js';
import { PostgresObjectStore } from '../../stores/postgres.js';
import { RedisKeyValueStore } from '../../stores/redis.js';
import { call, demoData, expectError, loginBody, USERS } from '../helpers.js';
import { DATABASE_URL, deleteKeys, dropSchema, REDIS_URL, RUN_ID, serverAvailable } from '../support/servers.js';

const cli = join(new URL('../..', import.meta.url).pathname, 'dist/cli.js');

function runCli(args: string[], cwd: string, input?: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [cli, ...args], { cwd, env: { ...process.env, ODBREST_STORE: '', ODBREST_KV: '', ...env }, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(input ?? '');
  });
}

/** Logs in to a service on `store` (and `kv`), closing nothing; answers the envelope's code. */
async function loginCode(store: ObjectStore, user: string, password: string, kv?: RedisKeyValueStore, appNames = ['crm']): Promise<{ code: string; body: any }> {
  const service = createService({ store, kv, onError: () => undefined });
  const result = await call(service, 'POST', '/v1/login', { json: loginBody(user as never, password, appNames) });
  return { code: result.body.status.internalStatus, body: result.body };
}

describe('odbrest user on a file store (the built CLI)', () => {
  test('list shows every user (table or --json); delete removes one, its sessions ended; an unknown name is exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'odbrest-user-'));
    writeFileSync(join(dir, 'api-config.yml'), 'store: file:./data\n');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, 'data'));
    const seed = await FileObjectStore.open({ path: join(dir, 'data', 'objects.journal') });
    await importObjects(seed, { objects: demoData().objects.filter((object) => object['~ClassName'] === 'UserGroup') }, 1000);
    await seed.close();
    expect((await runCli(['user', 'add', 'erin', '--groups', 'sales,support', '--licences', 'crm'], dir, 'erin long secret\n')).code).toBe(0);
    expect((await runCli(['user', 'add', 'bob', '--password', 'bob long secret'], dir)).code).toBe(0);
    expect((await runCli(['user', 'disable', 'bob'], dir)).code).toBe(0);
    const table = await runCli(['user', 'list'], dir);
    expect(table.code).toBe(0);
    // the id column holds random 8-character ids (not always with a digit): replaced where it stands
    expect(table.stdout.replace(/^(\S+ +)[0-9A-Z]{8}(?= )/gm, '$1ID').replace(/ +/g, ' ')).toBe('NAME ID GROUPS LICENCES DISABLED\nbob ID - - yes\nerin ID sales,support crm no\n2 users\n');
    const listed = JSON.parse((await runCli(['user', 'list', '--json'], dir)).stdout) as Array<{ name: string; groups: string[] }>;
    expect(listed.map(({ name, groups }) => [name, groups])).toEqual([['bob', []], ['erin', ['sales', 'support']]]);
    const deleted = await runCli(['user', 'delete', 'erin'], dir);
    expect(deleted).toMatchObject({ code: 0, stdout: expect.stringMatching(/^deleted user erin \([0-9A-Z]{8}\); 0 sessions ended\n/) });
    expect(JSON.parse((await runCli(['user', 'list', '--json'], dir)).stdout).map((user: { name: string }) => user.name)).toEqual(['bob']);
    expect(await runCli(['user', 'delete', 'erin'], dir)).toMatchObject({ code: 1, stderr: 'odbrest: no user named "erin"\n' });
    expect(await runCli(['user', 'list', 'extra'], dir)).toMatchObject({ code: 2, stderr: expect.stringMatching(/^odbrest: unexpected argument extra\n/) });
    const store = await FileObjectStore.open({ path: join(dir, 'data', 'objects.journal') });
    expect((await loginCode(store, 'erin', 'erin long secret')).code).toBe('302');
    await store.close();
  });

  test('add, groups, password, disable and enable, each in one line; mistakes in one line with exit 1 or 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'odbrest-user-'));
    writeFileSync(join(dir, 'api-config.yml'), 'store: file:./data\n');
    const seed = await FileObjectStore.open({ path: join(dir, 'data', 'objects.journal') }).catch(async () => {
      const { mkdirSync } = await import('node:fs');
      mkdirSync(join(dir, 'data'));
      return FileObjectStore.open({ path: join(dir, 'data', 'objects.journal') });
    });
    await importObjects(seed, { objects: demoData().objects.filter((object) => object['~ClassName'] === 'UserGroup') }, 1000);
    await seed.close();

    const added = await runCli(['user', 'add', 'erin', '--groups', 'sales,support', '--licences', 'crm,shop', '--description', 'Erin'], dir, 'erin long secret\n');
    expect(added).toMatchObject({ code: 0, stdout: expect.stringMatching(/^created user erin \([0-9A-Z]{8}\)\n\(the key-value store is memory/) });
    expect((await runCli(['user', 'add', 'erin', '--password', 'another long one'], dir)).stderr).toBe('odbrest: a user named "erin" exists already\n');
    expect(await runCli(['user', 'groups', 'erin', 'support'], dir)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^user erin is in the groups support\n/) });
    expect(await runCli(['user', 'groups', 'erin', 'nope'], dir)).toMatchObject({ code: 1, stderr: 'odbrest: Groups: no group named "nope" (class UserGroup)\n' });
    expect(await runCli(['user', 'password', 'erin'], dir, '', { ODBREST_USER_PASSWORD: 'short' })).toMatchObject({ code: 1, stderr: expect.stringMatching(/pass refused: .*at least 10 characters/) });
    expect(await runCli(['user', 'add'], dir)).toMatchObject({ code: 2, stderr: expect.stringMatching(/^odbrest: user add needs a user name\nusage: odbrest user add/) });
    expect(await runCli(['user', 'rename', 'erin'], dir)).toMatchObject({ code: 2 });

    let store = await FileObjectStore.open({ path: join(dir, 'data', 'objects.journal') });
    const erin = await loginCode(store, 'erin', 'erin long secret');
    expect(erin.code).toBe('0');
    expect(erin.body.data.user.Groups['~Elements'].map((group: any) => group.Name)).toEqual(['support']);
    await store.close();

    expect(await runCli(['user', 'password', 'erin', '--password', 'a changed long secret'], dir)).toMatchObject({ code: 0 });
    expect(await runCli(['user', 'disable', 'erin'], dir)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^disabled user erin; its sessions ended\n/) });
    store = await FileObjectStore.open({ path: join(dir, 'data', 'objects.journal') });
    expect((await loginCode(store, 'erin', 'a changed long secret')).code).toBe('302');
    await store.close();
    expect(await runCli(['user', 'disable', 'erin', '--enable'], dir)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^enabled user erin\n/) });
    store = await FileObjectStore.open({ path: join(dir, 'data', 'objects.journal') });
    expect((await loginCode(store, 'erin', 'erin long secret')).code).toBe('302');
    expect((await loginCode(store, 'erin', 'a changed long secret')).code).toBe('0');
    await store.close();
  });

  test('refuses the in-memory store: nothing would last', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'odbrest-user-'));
    expect(await runCli(['user', 'disable', 'bob'], dir)).toMatchObject({ code: 1, stderr: expect.stringMatching(/^odbrest: the configured store is memory/) });
  });
});

const servers = (await serverAvailable('PostgreSQL', 'odbrest user on PostgreSQL')) && (await serverAvailable('Redis', 'odbrest user on PostgreSQL'));

describe.runIf(servers)('odbrest user on PostgreSQL and Redis', () => {
  const schema = `odbrest_user_${RUN_ID}`;
  const prefix = `odbrest-user:${RUN_ID}:`;
  afterAll(async () => {
    await dropSchema(schema);
    await deleteKeys(prefix);
  });

  test('disabling a user ends its live sessions on a running service that shares the stores', async () => {
    const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
    await importObjects(store, demoData(), 1000);
    const kv = new RedisKeyValueStore({ url: REDIS_URL, prefix });
    const service = createService({ store, kv, onError: () => undefined });
    const bob = await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) });
    const sessionId = bob.body.data.sessionId as string;
    const dir = mkdtempSync(join(tmpdir(), 'odbrest-user-'));
    writeFileSync(join(dir, 'api-config.yml'), `store:\n  url: ${DATABASE_URL}\n  schema: ${schema}\n  table: objects\nkv:\n  url: ${REDIS_URL}\n  prefix: "${prefix}"\n`);
    const result = await runCli(['user', 'disable', 'bob'], dir);
    expect(result).toMatchObject({ code: 0, stdout: 'disabled user bob; its sessions ended\n' });
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId } }), '201', 401);
    expectError(await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) }), '302', 401);
    expect(await runCli(['user', 'add', 'frank', '--groups', 'sales', '--licences', 'crm', '--password', 'frank long secret'], dir)).toMatchObject({ code: 0 });
    expect((await loginCode(store, 'frank', 'frank long secret', kv)).code).toBe('0');
    await service.close();
  });
});
