import { afterAll, describe } from 'vitest';
import { Redis } from 'ioredis';
import { RedisKeyValueStore } from '../../stores/redis.js';
import { REDIS_URL, RUN_ID, serverAvailable } from '../support/servers.js';
import { keyValueStoreContract } from './key-value-store.js';

const available = await serverAvailable('Redis', 'the KeyValueStore contract on RedisKeyValueStore');
const prefix = `odbrest-test:${RUN_ID}:`;
let stores = 0;

describe.runIf(available)('RedisKeyValueStore', () => {
  afterAll(async () => {
    const admin = new Redis(REDIS_URL);
    const keys = await admin.keys(`${prefix}*`); // this run's keys only
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
  });
  // each test its own prefix, so tests never see each other's keys
  keyValueStoreContract('RedisKeyValueStore', async () => new RedisKeyValueStore({ url: REDIS_URL, prefix: `${prefix}${stores++}:` }));
});
