// One of several odbrest instances behind one address: sessions, counters and one-time values in
// Redis, objects in PostgreSQL, and the secrets every instance must share from the environment.
//   REDIS_URL, DATABASE_URL, DATABASE_REPLICA_URLS, ODBREST_JWT_SECRET (32+ characters), ODBREST_PORT, ODBREST_SERVER_KEY_FILE
// Start as many as you like with the same variables (and their own ports); see "Running several
// instances" in docs/stores.md. A session reads its own writes back on every instance (the store's
// default cache consistency, `session`; docs/scaling.md says what each consistency promises and costs).
// Listings go to the PostgreSQL streaming replicas in DATABASE_REPLICA_URLS (comma-separated, optional)
// while they keep up; the store checks them and skips one that lags or fails.
import { createService, importObjects } from 'odbrest';
import { loadConfig, readSeedFile, serve } from 'odbrest/node';
import { PostgresObjectStore } from 'odbrest/postgres';
import { RedisKeyValueStore } from 'odbrest/redis';

const config = loadConfig(process.env);
if (!config.options.session?.jwtSecret) throw new Error('set ODBREST_JWT_SECRET: every instance must sign tokens with the same key');

const replicas = process.env.DATABASE_REPLICA_URLS?.split(',').filter(Boolean);
const store = new PostgresObjectStore({ connectionString: process.env.DATABASE_URL, replicas, table: 'odbrest_demo_store' });
const kv = new RedisKeyValueStore({ url: process.env.REDIS_URL, prefix: 'odbrest-demo:' });
// The demo database goes into PostgreSQL once, by whichever instance finds it empty (ids are fixed,
// so two instances doing it at the same time write the same objects).
if ((await store.count('User')) === 0) {
  await importObjects(store, readSeedFile(new URL('../demo-data.json', import.meta.url).pathname));
}

const service = createService({ ...config.options, store, kv });
const server = await serve(service, { port: config.port, hostname: config.hostname });
console.log(`odbrest instance ${process.pid} listening on http://localhost:${server.address().port}`);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => server.close(() => service.close().then(() => process.exit(0))));
}
