/**
 * Issue 12, finding 3: unauthenticated state floods evicted live sessions. OAuth states and sessions
 * shared one in-memory LRU, so a flood of `GET /v1/auth/google?appkey=...` (no login) pushed out a
 * session logged in before (`201`). Each kind of state now has its own bound: sessions are never
 * evicted (a full store refuses new logins with `503`), failed-login counters neither, OAuth states
 * only among themselves, and one client address may start only so many external logins. The store
 * here is small so that the flood fills it (the old store's single LRU of `maxEntries` shared by all).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { KV_PARTITIONS, MemoryKeyValueStore, type Service } from '../../src/index.js';
import { call, demoData, demoService, expectError, login, loginBody, USERS } from '../helpers.js';
import { overNode, type OverNode } from './over-node.js';

const google = {
  '~ClassName': 'OAuthProvider',
  name: 'Google',
  type: 'google',
  additionalData: JSON.stringify({ clientId: 'g-id', clientSecret: 'g-secret' }),
};

async function floodable(): Promise<{ service: Service; kv: MemoryKeyValueStore; node: OverNode }> {
  const kv = new MemoryKeyValueStore({
    maxEntries: 100,
    partitions: {
      ...KV_PARTITIONS,
      'sess:': { maxEntries: 12, whenFull: 'refuse' },
      'fail:': { maxEntries: 40, whenFull: 'refuse' },
      'oauth:': { maxEntries: 50, whenFull: 'evict' },
    },
  });
  const service = await demoService({
    kv,
    trustProxy: true, // the flood comes from many addresses (X-Forwarded-For, as behind a proxy)
    data: { objects: [...demoData().objects, google] },
    externalLogin: { providers: [{ name: 'Google' }], publicUrl: 'https://odbrest.example' },
  });
  return { service, kv, node: await overNode(service) };
}

const from = (address: string) => ({ 'x-forwarded-for': address });

describe('floods of unauthenticated state', () => {
  let node: OverNode;
  let kv: MemoryKeyValueStore;
  beforeAll(async () => ({ node, kv } = await floodable()));
  afterAll(() => node?.close());

  test('2,000 external-login starts from 100 addresses leave a session logged in before alive', async () => {
    const sessionId = await login(node.remote, 'alice');
    for (let i = 0; i < 2000; i += 100) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, j) => call(node.remote, 'GET', `/v1/auth/google?appkey=anything`, { headers: from(`10.0.${j}.${i % 200}`) })),
      );
      for (const answer of answers) expect(answer.status === 302 || answer.body?.status?.internalStatus === '303').toBe(true);
    }
    const read = await call(node.remote, 'GET', '/v1/object/CUS00001', { headers: { sessionId } });
    expect(read.body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
    expect(kv.size).toBeLessThanOrEqual(12 + 40 + 200_000 + 50 + 100); // every kind within its bound
  });

  test('one address may start 60 external logins, then 303 with Retry-After', async () => {
    const answers = [];
    for (let i = 0; i < 61; i++) answers.push(await call(node.remote, 'GET', '/v1/auth/google?appkey=x', { headers: from('192.0.2.61') }));
    expect(answers.slice(0, 60).every((answer) => answer.status === 302)).toBe(true);
    expectError(answers[60]!, '303', 429);
    expect(Number(answers[60]!.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('a full session store', () => {
  test('refuses new logins with 503 and keeps every live session', async () => {
    const { node } = await floodable();
    try {
      const sessions: string[] = [];
      let refused;
      for (let i = 0; i < 20 && !refused; i++) {
        const answer = await call(node.remote, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice) });
        if (answer.body.status.internalStatus === '0') sessions.push(answer.body.data.sessionId);
        else refused = answer;
      }
      expect(refused).toBeDefined();
      expectError(refused!, '503', 503);
      for (const sessionId of sessions) {
        expect((await call(node.remote, 'GET', '/v1/object/CUS00001', { headers: { sessionId } })).body.status.internalStatus).toBe('0');
      }
    } finally {
      await node.close();
    }
  });
});

describe('failed-login counters', () => {
  test('a flood of distinct user names does not reset the counter that protects a real user', async () => {
    const { node } = await floodable();
    try {
      for (let i = 0; i < 5; i++) await call(node.remote, 'POST', '/v1/login', { json: loginBody('bob', 'wrong'), headers: from('198.51.100.1') });
      expectError(await call(node.remote, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob), headers: from('198.51.100.2') }), '303', 429);
      // 200 names, each from its own address: the counters fill their bound; none is pushed out
      for (let i = 0; i < 200; i += 20) {
        await Promise.all(
          Array.from({ length: 20 }, (_, j) => call(node.remote, 'POST', '/v1/login', { json: loginBody(`nobody-${i + j}`, 'x'), headers: from(`203.0.113.${i + j}`) })),
        );
      }
      // the right password, from the address that failed before: still refused by bob's counter
      expectError(await call(node.remote, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob), headers: from('198.51.100.1') }), '303', 429);
    } finally {
      await node.close();
    }
  });
});
