/**
 * Issue 12, finding 1: the failed-login limit raced. 1,000 parallel wrong-password logins for one user
 * (limit 5 per user, 20 per address) had 163-533 of them checked (`302`) before the limit answered
 * `303`, and the right password at position 500 logged in. Each attempt must take its place in the
 * count before its password is hashed: at most the limit's number are checked, and the right password
 * inside the flood gets `303` — on one instance, and on two sharing Redis.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { importObjects } from '../../src/index.js';
import { PostgresObjectStore } from '../../stores/postgres.js';
import { startServer, type RunningServer } from '../adapters/servers.js';
import { demoData, loginBody } from '../helpers.js';
import { bundleForNode, spawnLines, type LineProcess } from '../support/processes.js';
import { DATABASE_URL, deleteKeys, dropSchema, REDIS_URL, RUN_ID, serverAvailable } from '../support/servers.js';

const FLOOD = 1000;
const RIGHT_AT = 500;

/** 1,000 logins of `user` at once across `logins` (a function per instance), the right password at position 500. */
async function flood(logins: Array<(body: unknown) => Promise<Response>>, user: 'bob' | 'dave', password: string) {
  const answers = await Promise.all(
    Array.from({ length: FLOOD }, async (_, i) => {
      const body = loginBody(user, i === RIGHT_AT ? password : `wrong-${i}`);
      const response = await logins[i % logins.length]!(body);
      return { status: response.status, internalStatus: (await response.json()).status.internalStatus as string };
    }),
  );
  const count = (code: string) => answers.filter((answer) => answer.internalStatus === code).length;
  return { checked: count('302'), limited: count('303'), right: answers[RIGHT_AT]!, other: answers.filter((a) => !['302', '303'].includes(a.internalStatus)) };
}

/** 50 logins of `user` with the right password at once across `logins`: how each was answered, and whether each session then works. */
async function together(logins: Array<(body: unknown) => Promise<Response>>, bases: string[], user: 'bob' | 'extern', password: string, appNames: string[]) {
  const answers = await Promise.all(
    Array.from({ length: TOGETHER }, async (_, i) => {
      const send = () => logins[i % logins.length]!(loginBody(user, password, appNames));
      // a kept-alive socket the server closed after the flood before may fail before any answer: once more, on a new one
      const response = await send().catch((error: unknown) => (error instanceof TypeError ? send() : Promise.reject(error)));
      const body = await response.json();
      return { status: response.status, internalStatus: body.status.internalStatus as string, sessionId: body.data?.sessionId as string | undefined };
    }),
  );
  const working = await Promise.all(
    answers.map(async (answer, i) => {
      if (!answer.sessionId) return false;
      const checkSession = () => fetch(`${bases[i % bases.length]}/_CheckSession`, { headers: { appkey: 'sec', sessionId: answer.sessionId! } });
      const check = await checkSession().catch((error: unknown) => (error instanceof TypeError ? checkSession() : Promise.reject(error)));
      return (await check.json()).status.internalStatus === '0';
    }),
  );
  return { codes: answers.map((answer) => `${answer.status} ${answer.internalStatus}`), working: working.filter(Boolean).length };
}

const TOGETHER = 50;
const allOk = Array.from({ length: TOGETHER }, () => '200 0');

const poster = (base: string) => (body: unknown) =>
  fetch(`${base}/v1/login`, { method: 'POST', headers: { appkey: 'sec', 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('one instance (the Node example, limit 5 per user and 20 per address)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer('node', { ODBREST_LOGIN_PER_USER: '5', ODBREST_LOGIN_PER_ADDRESS: '20' });
  });
  afterAll(() => server?.stop());

  test('1,000 parallel wrong passwords: at most 5 are checked, and the right one among them gets 303', async () => {
    const result = await flood([poster(`${server.origin}/api`)], 'bob', 'bob-secret');
    expect(result.other).toEqual([]);
    expect(result.checked).toBeGreaterThanOrEqual(1);
    expect(result.checked).toBeLessThanOrEqual(5);
    expect(result.limited).toBe(FLOOD - result.checked);
    expect(result.right).toEqual({ status: 429, internalStatus: '303' });
  });

  test('issue 23, item 3: 50 parallel logins of one user with the right password all get sessions (none is 303)', async () => {
    const result = await together([poster(`${server.origin}/api`)], [`${server.origin}/api`], 'extern', 'extern-secret', ['crm']);
    expect(result.codes).toEqual(allOk);
    expect(result.working).toBe(TOGETHER);
  });
});

const available = (await serverAvailable('Redis', 'the login-limit race across two instances')) && (await serverAvailable('PostgreSQL', 'the login-limit race across two instances'));

describe.runIf(available)('two instances sharing Redis', () => {
  const schema = `odbrest_race_${RUN_ID}`;
  const prefix = `odbrest-race:${RUN_ID}:`;
  const children: LineProcess[] = [];
  const bases: string[] = [];

  beforeAll(async () => {
    const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
    await importObjects(store, demoData(), 1000);
    await store.close();
    const entry = await bundleForNode(join(import.meta.dirname, '../fixtures/instance.ts'));
    const env = { REDIS_URL, DATABASE_URL, ODBREST_REDIS_PREFIX: prefix, ODBREST_PG_SCHEMA: schema, ODBREST_JWT_SECRET: `race-secret-of-this-test-run-${RUN_ID}` };
    for (let i = 0; i < 2; i++) {
      const child = spawnLines(process.execPath, [entry], env);
      children.push(child);
      bases.push(`http://127.0.0.1:${(await child.waitFor((line) => line.startsWith('listening '))).split(' ')[1]}`);
    }
  });
  afterAll(async () => {
    for (const child of children) {
      child.child.kill('SIGTERM');
      await child.exited;
    }
    await dropSchema(schema);
    await deleteKeys(prefix);
  });

  test('1,000 parallel wrong passwords split over both: at most 5 are checked, the right one gets 303', async () => {
    const result = await flood(bases.map(poster), 'dave', 'dave-secret');
    expect(result.other).toEqual([]);
    expect(result.checked).toBeGreaterThanOrEqual(1);
    expect(result.checked).toBeLessThanOrEqual(5);
    expect(result.right).toEqual({ status: 429, internalStatus: '303' });
  });

  test('issue 23, item 3: 50 parallel right-password logins of one user split over both all get sessions', async () => {
    const result = await together(bases.map(poster), bases, 'bob', 'bob-secret', ['crm']);
    expect(result.codes).toEqual(allOk);
    expect(result.working).toBe(TOGETHER);
  });
});
