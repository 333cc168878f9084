/**
 * Object locks (PROTOCOL.md 6.7) across two service instances, each with its own connection to real
 * Redis (two `RedisKeyValueStore`s under one prefix, as two processes would have): a lock taken on one
 * holds on the other, of two sessions racing for a free lock on different instances exactly one wins,
 * and a lock ends on both with its session and with its minutes (a Redis expiry).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryObjectStore, type Service } from '../src/index.js';
import { kvKeys } from '../src/storage/keys.js';
import { RedisKeyValueStore } from '../stores/redis.js';
import { call, demoService, expectError, login } from './helpers.js';
import { deleteKeys, REDIS_URL, RUN_ID, serverAvailable } from './support/servers.js';

const available = await serverAvailable('Redis', 'locks across two instances');
const prefix = `odbrest-locks:${RUN_ID}:`;

describe.runIf(available)('locks across two instances on Redis', () => {
  let a: Service;
  let b: Service;
  const kvs: RedisKeyValueStore[] = [];

  beforeAll(async () => {
    const store = new MemoryObjectStore();
    const instance = () => {
      const kv = new RedisKeyValueStore({ url: REDIS_URL, prefix });
      kvs.push(kv);
      return demoService({ store, kv, access: { rules: { Customer: { read: ['*'], update: ['sales'], delete: ['sales'] } } } });
    };
    [a, b] = await Promise.all([instance(), instance()]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await deleteKeys(prefix);
  });

  const as = async (service: Service) => {
    const headers = { sessionId: await login(service, 'alice') };
    return (method: string, path: string, json?: unknown) => call(service, method, path, { headers, json });
  };

  test('a lock taken on A holds on B: B reads who holds it, its writes, deletes and lock are 423; released on A, B takes it', async () => {
    const [onA, onB] = await Promise.all([as(a), as(b)]);
    await onA('POST', '/v1/lock/object/CUS00001', { minutes: 5 });
    const seen = (await onB('GET', '/v1/lock/object/CUS00001')).body.data;
    expect(seen).toEqual({ isLocked: true, messages: [expect.stringMatching(/^locked by alice since \d{8}T\d{6}/)] });
    expectError(await onB('PATCH', '/v1/object/CUS00001', { City: 'B' }), '423', 423);
    expectError(await onB('DELETE', '/v1/object/CUS00001'), '423', 423);
    expectError(await onB('POST', '/v1/lock/object/CUS00001'), '423', 423);
    expectError(await onB('DELETE', '/v1/lock/object/CUS00001'), '423', 423);
    expect((await onA('PATCH', '/v1/object/CUS00001', { City: 'A' })).status).toBe(200);
    expect((await onA('DELETE', '/v1/lock/object/CUS00001')).body.data).toEqual({ isLocked: false, messages: [] });
    expect((await onB('POST', '/v1/lock/object/CUS00001')).status).toBe(200);
    expect((await onB('PATCH', '/v1/object/CUS00001', { City: 'B' })).status).toBe(200);
    expectError(await onA('PATCH', '/v1/object/CUS00001', { City: 'A again' }), '423', 423);
  });

  test('two sessions on two instances racing for 20 free locks: each object has exactly one holder, the same on both', async () => {
    const [onA, onB] = await Promise.all([as(a), as(b)]);
    const ids = Array.from({ length: 20 }, (_, i) => `CUS${String(100 + i).padStart(5, '0')}`);
    const taken = await Promise.all(ids.map((id) => Promise.all([onA('POST', `/v1/lock/object/${id}`), onB('POST', `/v1/lock/object/${id}`)])));
    for (const [fromA, fromB] of taken) {
      expect([fromA.status, fromB.status].sort()).toEqual([200, 423]);
    }
    for (const [i, id] of ids.entries()) {
      const winner = taken[i]![0].status === 200 ? onA : onB;
      const loser = winner === onA ? onB : onA;
      // the winner sees its own lock as not locking it; the loser, on the other instance, as locked
      expect((await winner('GET', `/v1/lock/object/${id}`)).body.data.isLocked).toBe(false);
      expect((await loser('GET', `/v1/lock/object/${id}`)).body.data.isLocked).toBe(true);
    }
  });

  test('a lock ends on B when its session logs out on A, and its Redis entry expires with its minutes', async () => {
    const [onA, onB] = await Promise.all([as(a), as(b)]);
    await onA('POST', '/v1/lock/object/CUS00002', { minutes: 1 });
    const redis = new Redis(REDIS_URL);
    const ttl = await redis.pttl(`${prefix}${kvKeys.lock('CUS00002')}`).finally(() => redis.quit());
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expectError(await onB('PATCH', '/v1/object/CUS00002', { City: 'B' }), '423', 423);
    expect((await onA('POST', '/v1/logout')).status).toBe(200);
    expect((await onB('GET', '/v1/lock/object/CUS00002')).body.data).toEqual({ isLocked: false, messages: [] });
    expect((await onB('PATCH', '/v1/object/CUS00002', { City: 'B' })).status).toBe(200);
  });
});
