import { afterAll, describe, expect, test } from 'vitest';
import { RedisKeyValueStore } from '../../stores/redis.js';
import { deleteKeys, REDIS_URL, RUN_ID, serverAvailable } from '../support/servers.js';
import { keyValueStoreContract } from './suites.js';

const available = await serverAvailable('Redis', 'the KeyValueStore contract on RedisKeyValueStore');
const prefix = `odbrest-test:${RUN_ID}:`;
let stores = 0;

describe.runIf(available)('RedisKeyValueStore', () => {
  afterAll(() => deleteKeys(prefix));
  // each test its own prefix, so tests never see each other's keys
  keyValueStoreContract('RedisKeyValueStore', async () => new RedisKeyValueStore({ url: REDIS_URL, prefix: `${prefix}${stores++}:` }));

  test('lines are shared by the stores of one prefix (instances), and a member leaving on one is heard on the others, once each', async () => {
    const shared = `${prefix}${stores++}:`;
    const elsewhere = `${prefix}${stores++}:`;
    const a = new RedisKeyValueStore({ url: REDIS_URL, prefix: shared });
    const b = new RedisKeyValueStore({ url: REDIS_URL, prefix: shared });
    const other = new RedisKeyValueStore({ url: REDIS_URL, prefix: elsewhere });
    try {
      const heard = { a: [] as string[], b: [] as string[], other: [] as string[] };
      await a.watchLines((key) => heard.a.push(key));
      await b.watchLines((key) => heard.b.push(key));
      await other.watchLines((key) => heard.other.push(key));
      expect(await a.lineUp('fail:user:x', 'first', 60_000)).toBe(0);
      expect(await b.lineUp('fail:user:x', 'second', 60_000)).toBe(1);
      expect(await other.lineUp('fail:user:x', 'elsewhere', 60_000)).toBe(0);
      await b.leaveLine('fail:user:x', 'first');
      expect(await a.lineUp('fail:user:x', 'second', 60_000)).toBe(0);
      await a.leaveLine('fail:user:x', 'second');
      for (let waited = 0; (heard.a.length < 2 || heard.b.length < 2) && waited < 3000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(heard).toEqual({ a: ['fail:user:x', 'fail:user:x'], b: ['fail:user:x', 'fail:user:x'], other: [] });
    } finally {
      await Promise.all([a, b, other].map((store) => store.close()));
    }
  });
});

test.each([['a{b'], ['b}'], ['{slot}:']])('a prefix with a brace (%s) is refused before connecting', (bad) => {
  expect(() => new RedisKeyValueStore({ url: REDIS_URL, prefix: bad })).toThrow(/may not contain \{ or \}/);
});
