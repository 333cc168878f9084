// One instance of the logins bench over PostgreSQL and Redis, in its own process: objects in
// DATABASE_URL's schema ODBREST_PG_SCHEMA (seeded by the bench), sessions and the failed-login counts
// in REDIS_URL under ODBREST_REDIS_PREFIX, default login limits and password hashing, served by the
// Node adapter on a free port (prints `listening on http://127.0.0.1:<port>`).
import { createService } from '../dist/index.js';
import { serve } from '../dist/node.js';
import { PostgresObjectStore } from '../dist/postgres.js';
import { RedisKeyValueStore } from '../dist/redis.js';
import { demoAccess } from '../examples/demo-access.mjs';

const env = process.env;
const service = createService({
  store: new PostgresObjectStore({ connectionString: env.DATABASE_URL, schema: env.ODBREST_PG_SCHEMA, table: 'objects' }),
  kv: new RedisKeyValueStore({ url: env.REDIS_URL, prefix: env.ODBREST_REDIS_PREFIX }),
  access: demoAccess,
  onError: (error) => console.error(error),
});
await service.ready;
const server = await serve(service, { port: 0, hostname: '127.0.0.1' });
console.log(`listening on http://127.0.0.1:${server.address().port}`);
process.on('SIGTERM', () => server.close(() => service.close().then(() => process.exit(0))));
