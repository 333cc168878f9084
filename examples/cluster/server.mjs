// One of several odbrest instances behind one address: sessions, counters and one-time values in
// Redis, objects, file bytes and change events in PostgreSQL, and the secrets every instance must
// share from the environment.
//   REDIS_URL, DATABASE_URL, ODBREST_JWT_SECRET (32+ characters), ODBREST_PORT, ODBREST_SERVER_KEY_FILE
//   DATABASE_REPLICA_URLS=<url,url>  PostgreSQL streaming replicas for listings (optional)
//   REDIS_CLUSTER_NODES=<host:port,host:port>  a Redis Cluster instead of REDIS_URL (any of its nodes;
//                                the rest are discovered): sessions and counters, and the event bus
//                                (sharded pub/sub) instead of PostgreSQL LISTEN/NOTIFY
//   ODBREST_BLOBS=file:<folder>  file bytes in a folder every instance mounts (default: in PostgreSQL)
//   ODBREST_BLOBS=s3://<bucket>/<prefix>  file bytes in S3-compatible storage, opened as `odbrest serve`
//                                opens `files.blobs` (the endpoint, region and path style from the
//                                file's files.blobs; the key from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)
//   ODBREST_CONFIG=<file>        access rules, two-factor policies and the other options of api-config.yml
//                                (its files.blobs as above, when ODBREST_BLOBS is not set)
// Start as many as you like with the same variables (and their own ports); see "Running several
// instances" in docs/stores.md. `npm run soak` runs two of them under faults (docs/operations.md).
// A session reads its own writes back on every instance (the store's default cache consistency,
// `session`; docs/scaling.md says what each consistency promises and costs). Listings go to the
// replicas while they keep up; the store checks them and skips one that lags or fails. On a Redis
// Cluster, every operation touches keys of one slot, and the events keep their order and
// Last-Event-ID resumption. A test runs two instances as printed against a replica and a
// three-node cluster (test/cluster-example.test.ts).
import { createService, importObjects } from 'odbrest';
import { loadConfig, openBlobStore, readSeedFile, serve } from 'odbrest/node';
import { PostgresBlobStore, PostgresEventBus, PostgresObjectStore } from 'odbrest/postgres';
import { RedisEventBus, RedisKeyValueStore } from 'odbrest/redis';

const config = loadConfig(process.env);
if (!config.options.session?.jwtSecret) throw new Error('set ODBREST_JWT_SECRET: every instance must sign tokens with the same key');

const connectionString = process.env.DATABASE_URL;
const replicas = process.env.DATABASE_REPLICA_URLS?.split(',').filter(Boolean);
const store = new PostgresObjectStore({ connectionString, replicas, table: 'odbrest_demo_store' });
const nodes = process.env.REDIS_CLUSTER_NODES?.split(',').filter(Boolean).map((node) => {
  const [, host, port] = /^(.+):(\d+)$/.exec(node) ?? [];
  if (!host) throw new Error(`REDIS_CLUSTER_NODES: ${node} is not host:port`);
  return { host, port: Number(port) };
});
const kv = new RedisKeyValueStore({ url: process.env.REDIS_URL, nodes, prefix: 'odbrest-demo:' });
// A file uploaded through one instance is downloaded through another: its bytes live where all reach
// (files.blobs as `odbrest serve` opens it, a folder without its one-process lock; else PostgreSQL).
const blobs = (await openBlobStore(config.file.files?.blobs, config.baseDir, { shared: true })) ?? new PostgresBlobStore({ connectionString, table: 'odbrest_demo_blobs' });
// A write on one instance reaches the event subscribers of every instance: through the Redis Cluster
// (sharded pub/sub keeps the order) when there is one, else through PostgreSQL (LISTEN/NOTIFY).
const bus = nodes ? new RedisEventBus({ nodes, channel: 'odbrest-demo:events' }) : new PostgresEventBus({ connectionString, channel: 'odbrest_demo_events' });
// The demo database goes into PostgreSQL once, by whichever instance finds it empty (ids are fixed,
// so two instances doing it at the same time write the same objects).
if ((await store.count('User')) === 0) {
  await importObjects(store, readSeedFile(new URL('../demo-data.json', import.meta.url).pathname));
}

const service = createService({ ...config.options, store, kv, files: { ...config.options.files, blobs }, events: { ...config.options.events, bus } });
const server = await serve(service, { port: config.port, hostname: config.hostname });
console.log(`odbrest instance ${process.pid} listening on http://localhost:${server.address().port}`);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => server.close(() => service.close().then(() => process.exit(0))));
}
