/**
 * examples/cluster/server.mjs run as its comment says: two instances with the same variables, on a
 * PostgreSQL primary with a streaming replica (`DATABASE_REPLICA_URLS`) and a three-node Redis
 * Cluster (`REDIS_CLUSTER_NODES`), all started by the test on ports of their own
 * (test/support/pg-replica.ts, test/support/redis-cluster.ts). `REDIS_URL` points where nothing
 * listens, so the instances work only if sessions, counters and events go through the cluster. The
 * first instance runs under the test runner's Node, the second under Node 24 (as while a deployment
 * moves from one to the other).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Service } from '../src/index.js';
import { APP_KEY, call, login } from './helpers.js';
import { SseReader } from './events/sse.js';
import { testNodes, type NodeRuntime } from './support/nodes.js';
import { startReplicaPair, type ReplicaPair } from './support/pg-replica.js';
import { freePort, remoteService, spawnLines, type LineProcess } from './support/processes.js';
import { startRedisCluster, type RedisCluster } from './support/redis-cluster.js';

const SUITES = 'the cluster example on a read replica and a Redis Cluster';
const pair = await startReplicaPair(SUITES);
const cluster = pair ? await startRedisCluster(SUITES) : undefined;
const example = fileURLToPath(new URL('../examples/cluster/server.mjs', import.meta.url));
const [runner, node24 = runner] = testNodes() as [NodeRuntime, NodeRuntime?];

describe.runIf(pair && cluster)(`examples/cluster/server.mjs on a read replica and a Redis Cluster, A under ${runner.name} and B under ${node24.name}`, () => {
  const { primaryUrl, replicaUrl } = pair as ReplicaPair;
  const { nodes } = cluster as RedisCluster;
  const instances: LineProcess[] = [];
  const bases: string[] = [];
  const folder = mkdtempSync(join(tmpdir(), 'odbrest-cluster-example-'));

  beforeAll(async () => {
    const env = {
      DATABASE_URL: primaryUrl,
      DATABASE_REPLICA_URLS: replicaUrl,
      REDIS_CLUSTER_NODES: nodes.map((node) => `${node.host}:${node.port}`).join(','),
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`, // nothing listens: everything Redis is on the cluster
      ODBREST_JWT_SECRET: 'an-example-secret-shared-by-all-instances-0123',
      ODBREST_CONFIG: join(folder, 'api-config.yml'),
    };
    writeFileSync(env.ODBREST_CONFIG, 'access:\n  "*": { read: ["*"] }\n  Customer: { create: [sales], update: [sales] }\n');
    // one after the other: the first fills the empty database with the demo data
    for (const node of [runner, node24]) {
      const port = await freePort();
      const instance = spawnLines(node.path, [example], { ...env, ODBREST_PORT: String(port) });
      instances.push(instance);
      await instance.waitFor((line) => line.includes(`listening on http://localhost:${port}`), 60_000);
      bases.push(`http://127.0.0.1:${port}`);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await cluster?.close();
    await pair?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it("a session from A writes on A, and on B reads and lists the write and gets its event; the cluster holds the session and the replica serves B's listings", { timeout: 60_000 }, async () => {
    const [a, b] = bases.map((base) => remoteService(base) as Service);
    const alice = await login(a!, 'alice');
    const stream = await b!.fetch(new Request(`http://odbrest.test/v1/events?subscribe=${encodeURIComponent(JSON.stringify([{ className: 'Customer', query: { City: 'Kiel' } }]))}`, { headers: { appkey: APP_KEY, sessionId: alice } }));
    expect(stream.status).toBe(200);
    const events = new SseReader(stream);
    const created = await call(a!, 'POST', '/v1/object/Customer', { headers: { sessionId: alice }, json: { Name: 'Live GmbH', City: 'Kiel' } });
    const id = created.body.data['~ObjectID'];
    expect(await events.next(10_000)).toMatchObject({ event: 'create', json: { '~ObjectID': id, object: { Name: 'Live GmbH' } } });
    expect((await call(b!, 'GET', `/v1/object/${id}`, { headers: { sessionId: alice } })).body.data).toMatchObject({ Name: 'Live GmbH' });
    const listed = await call(b!, 'GET', `/v1/objects/Customer?${encodeURI('query={"City":"Kiel"}')}`, { headers: { sessionId: alice } });
    expect(listed.body.data['~Elements'].map((object: { '~ObjectID': string }) => object['~ObjectID'])).toContain(id);
    await events.close();

    // the session lives on the cluster (its key in the slot of its id), not on a single Redis
    const found = nodes.flatMap((node) => execFileSync('redis-cli', ['-h', node.host, '-p', String(node.port), '--scan', '--pattern', `odbrest-demo:*${alice}*`], { encoding: 'utf8' }).split('\n').filter(Boolean));
    expect(found.length).toBeGreaterThan(0);
    // the instances hold connections to the replica (the store reads listings there while it keeps up)
    const replica = new pg.Client({ connectionString: replicaUrl });
    await replica.connect();
    try {
      const { rows } = await replica.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
      expect(rows[0].n).toBeGreaterThan(0);
    } finally {
      await replica.end();
    }
  });
});
