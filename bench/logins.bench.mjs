// Concurrent logins of one user (issue 46): 16 clients log in as alice (PBKDF2, the default 210,000
// iterations) in loops for 10 s, against `npm start`'s demo (memory store) and against two instances
// over PostgreSQL and Redis (bench/login-instance.mjs, the clients alternating between them). The
// failed-login limit checks at most 5 attempts of a user at once (PROTOCOL.md 2.4); the others wait
// for a place. Rows: logins per second, p99 ÷ p50 of the logins' times (target <= 4: every login
// waits its turn, none is passed over again and again) and the answers other than 2xx (target 0).
// The rate's reference, measured in the same run for 4 s right before and 4 s right after (so drifting
// machine load hits both alike): the same 16 clients logging in as four users (alice, bob, dave,
// extern, four clients each: within the 5 places, so nobody waits for one), which costs the same
// hashing; the ratio says what waiting for places costs (target >= 0.9). On a machine busy with
// other work, 16 hashes at once get more of its CPU than 5 (more threads), which lowers the ratio.
// The servers run in their own processes; the clients are this one (a login costs the server about a
// thousand times what it costs the client). REDIS_URL and DATABASE_URL choose the servers; without
// them the second rows say so.
import { Redis } from 'ioredis';
import pg from 'pg';
import { PostgresObjectStore } from '../dist/postgres.js';
import { clientPassValue, importObjects } from '../dist/index.js';
import { ALICE_LOGIN, APP_KEY, demoData, reachable } from './common.mjs';
import { CONNECTIONS, startDemo, startServer } from './http-load.mjs';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
const SECONDS = 10;
const REFERENCE_SECONDS = 4;
/** Four users' logins (no application: only the limiter's places differ from alice's load, not the work). */
const FOUR_USERS = ['alice', 'bob', 'dave', 'extern'].map((user) => JSON.stringify({ user, pass: clientPassValue(`${user}-secret`), appNames: [] }));

const ms = (value) => `${value.toFixed(0)} ms`;
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/**
 * `CONNECTIONS` clients, client i sending login `bodies[i % bodies.length]` to `urls[i % urls.length]`
 * again and again for `seconds` (after a warm-up of two logins each): answered 2xx per second, the
 * times of all answers, and how many were not 2xx (by status and internalStatus) or had no answer.
 */
export async function loginLoad(urls, bodies = [ALICE_LOGIN], seconds = SECONDS) {
  const login = async (i) => {
    const response = await fetch(urls[i % urls.length], { method: 'POST', headers: { appkey: APP_KEY, 'content-type': 'application/json' }, body: bodies[i % bodies.length] });
    const body = await response.json();
    return response.status >= 200 && response.status < 300 ? undefined : `${response.status} ${body.status?.internalStatus}`;
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, async (_, i) => { for (let k = 0; k < 2; k++) await login(i); }));
  const times = [];
  const refused = new Map();
  let ok = 0;
  const start = performance.now();
  const until = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, i) => {
      while (performance.now() < until) {
        const sent = performance.now();
        const failure = await login(i).catch((error) => `no answer (${error.cause?.code ?? error.message})`);
        times.push(performance.now() - sent);
        if (failure) refused.set(failure, (refused.get(failure) ?? 0) + 1);
        else ok++;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  times.sort((a, b) => a - b);
  return { times, rate: ok / elapsed, ok, elapsed, total: times.length, p50: quantile(times, 0.5), p99: quantile(times, 0.99), max: times.at(-1), refused };
}

/** The rows of alice's load: the rate (against the four users'), p99 ÷ p50 (with p50, p99 and the longest) and the non-2xx answers. */
async function measure(label, urls) {
  const before = await loginLoad(urls, FOUR_USERS, REFERENCE_SECONDS);
  const result = await loginLoad(urls);
  const after = await loginLoad(urls, FOUR_USERS, REFERENCE_SECONDS);
  const times = [before, after].flatMap((load) => load.times).sort((a, b) => a - b);
  const reference = { rate: (before.ok + after.ok) / (before.elapsed + after.elapsed), p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
  const refusedCount = [...result.refused.values()].reduce((sum, n) => sum + n, 0);
  const which = [...result.refused].map(([what, n]) => `${n}× ${what}`).join(', ');
  return [
    {
      name: `${label}: logins per second (reference: four users, ${CONNECTIONS / 4} clients each)`,
      value: result.rate,
      unit: 'logins/s',
      reference: reference.rate,
      ratio: result.rate / reference.rate,
      target: '>= 0.9',
    },
    {
      name: `${label}: p99 ÷ p50 of a login's time (p50 ${ms(result.p50)}, p99 ${ms(result.p99)}, max ${ms(result.max)}; four users': ${(reference.p99 / reference.p50).toFixed(2)}, p50 ${ms(reference.p50)}, p99 ${ms(reference.p99)})`,
      value: result.p99 / result.p50,
      unit: '',
      target: '<= 4',
    },
    { name: `${label}: answers other than 2xx${which ? ` (${which})` : ''}`, value: refusedCount, unit: `of ${result.total}`, target: '0' },
  ];
}

async function memoryStore() {
  const { server, base } = await startDemo();
  try {
    return await measure(`${CONNECTIONS} concurrent logins of alice for ${SECONDS} s, memory store (npm start)`, [`${base}/v1/login`]);
  } finally {
    server.kill('SIGTERM');
  }
}

async function postgresAndRedis() {
  const label = `${CONNECTIONS} concurrent logins of alice for ${SECONDS} s, PostgreSQL+Redis, two instances`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
  const [pgUp, redisUp] = [await reachable(() => admin.connect()), await reachable(() => redis.connect())];
  if (!pgUp || !redisUp) {
    if (pgUp) await admin.end();
    redis.disconnect();
    return [{ name: `${label}: skipped`, value: `${redisUp ? '' : 'Redis '}${pgUp ? '' : 'PostgreSQL '}unreachable`, unit: '' }];
  }
  const schema = `odbrest_bench_logins_${RUN}`;
  const prefix = `odbrest-bench-logins:${RUN}:`;
  const servers = [];
  try {
    const seed = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects', cache: false });
    await importObjects(seed, demoData()); // the default password hashing, as a real deployment's
    await seed.close();
    const env = { REDIS_URL, DATABASE_URL, ODBREST_PG_SCHEMA: schema, ODBREST_REDIS_PREFIX: prefix };
    for (let i = 0; i < 2; i++) servers.push(await startServer(new URL('./login-instance.mjs', import.meta.url).pathname, env));
    return await measure(label, servers.map(({ base }) => `${base}/v1/login`));
  } finally {
    for (const { server } of servers) server.kill('SIGTERM');
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
}

export default async function bench() {
  return [...(await memoryStore()), ...(await postgresAndRedis())];
}
