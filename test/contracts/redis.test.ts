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
});

test.each([['a{b'], ['b}'], ['{slot}:']])('a prefix with a brace (%s) is refused before connecting', (bad) => {
  expect(() => new RedisKeyValueStore({ url: REDIS_URL, prefix: bad })).toThrow(/may not contain \{ or \}/);
});
