/**
 * RedisKeyValueStore on a Redis Cluster (issue 37, item 3): three masters the test starts on ports of
 * its own (test/support/redis-cluster.ts). The KeyValueStore contract, then sessions and the failed-login
 * limit through two services sharing the cluster: every key one operation touches
 * lies in one slot (a script touching two would be refused with CROSSSLOT).
 */
import { Cluster } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createService, type BusMessage, type Service } from '../../src/index.js';
import { RedisEventBus, RedisKeyValueStore } from '../../stores/redis.js';
import { call, demoData, login } from '../helpers.js';
import { eventually } from '../support/outage.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { keyValueStoreContract } from './suites.js';

const cluster = await startRedisCluster('the KeyValueStore contract and sessions on a Redis Cluster');
let stores = 0;
const clients: Cluster[] = [];

/** A store on its own cluster client (as the docs advise: no offline queue, a command timeout). */
function clusterStore(): RedisKeyValueStore {
  const client = new Cluster((cluster as RedisCluster).nodes, { enableOfflineQueue: false, redisOptions: { commandTimeout: 2000, maxRetriesPerRequest: 0 } });
  clients.push(client);
  return new RedisKeyValueStore({ client, prefix: `t${stores++}:` });
}

describe.runIf(cluster)('RedisKeyValueStore on a Redis Cluster', () => {
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await cluster?.close();
  });

  keyValueStoreContract('RedisKeyValueStore (cluster)', async () => clusterStore());

  it('two services share sessions, logouts and the failed-login limit through the cluster', { timeout: 60_000 }, async () => {
    const kv = clusterStore();
    const services: Service[] = await Promise.all(
      [0, 1].map(async () => {
        const service = createService({ data: demoData(), kv, users: { passwordIterations: 1000 }, loginLimit: { perUser: 3 }, onError: () => undefined });
        await service.ready;
        return service;
      }),
    );
    const sessionId = await login(services[0]!, 'alice');
    const read = (i: number) => call(services[i]!, 'GET', '/v1/object/CUS00001', { headers: { sessionId } });
    expect((await read(1)).status).toBe(200);
    expect((await call(services[1]!, 'POST', '/v1/logout', { headers: { sessionId } })).status).toBe(200);
    expect((await read(0)).body.status.internalStatus).toBe('201');
    // wrong passwords on both count against one limit
    const wrong = (i: number) => call(services[i]!, 'POST', '/v1/login', { json: { user: 'bob', pass: 'wrong', appNames: ['crm'] } });
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await wrong(i % 2)).body.status.internalStatus);
    expect(codes.slice(0, 3).every((code) => code === '302')).toBe(true);
    expect(codes.slice(3)).not.toContain('302');
  });

  it('the event bus on the cluster: 500 messages published by one instance arrive at the other, in order', { timeout: 60_000 }, async () => {
    const [a, b] = [0, 1].map(() => new RedisEventBus({ nodes: (cluster as RedisCluster).nodes, channel: 'odbrest:events:cluster-test' }));
    try {
      await Promise.all([a!.ready, b!.ready]);
      const received: string[] = [];
      let done!: () => void;
      const all = new Promise<void>((resolve) => (done = resolve));
      b!.subscribe((message) => {
        if (message.kind === 'change') received.push(message.id);
        if (received.length === 500) done();
      });
      const sent = Array.from({ length: 500 }, (_, i) => `OBJ${String(i).padStart(5, '0')}`);
      await Promise.all(sent.map((id) => a!.publish({ kind: 'change', action: 'update', className: 'Doc', id, partial: true } as BusMessage)));
      await all;
      expect(received).toEqual(sent);
    } finally {
      await Promise.all([a!.close(), b!.close()]);
    }
  });

  it('a message the shard delivers twice is heard once (a second subscription in the shard, as the failover soak met)', { timeout: 60_000 }, async () => {
    const { nodes } = cluster as RedisCluster;
    const channel = 'odbrest:events:cluster-twice';
    const [a, b] = [0, 1].map(() => new RedisEventBus({ nodes, channel }));
    // what the shard delivers, as it delivered it; and a client that delivers it again
    const raw = new Cluster(nodes, { shardedSubscribers: true });
    const again = new Cluster(nodes);
    clients.push(raw, again);
    const payloads: string[] = [];
    raw.on('smessage', (_channel: string, payload: string) => void payloads.push(payload));
    try {
      await Promise.all([a!.ready, b!.ready, raw.ssubscribe(channel)]);
      const heard: string[] = [];
      b!.subscribe((message) => void (message.kind === 'change' && heard.push(message.id)));
      const change = (id: string) => ({ kind: 'change', action: 'update', className: 'Doc', id, partial: true }) as BusMessage;
      await a!.publish(change('X1'));
      await a!.publish(change('X2'));
      await eventually(() => payloads.length === 2 && heard.length === 2);
      for (const payload of payloads.slice(0, 2)) await again.spublish(channel, payload);
      await a!.publish(change('X3'));
      await eventually(() => heard.includes('X3'));
      expect(heard).toEqual(['X1', 'X2', 'X3']);
    } finally {
      await Promise.all([a!.close(), b!.close()]);
    }
  });
});
