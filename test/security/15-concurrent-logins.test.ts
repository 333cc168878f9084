/**
 * Issue 46: 16 clients logging in as one user at once (a kiosk account, an integration account used
 * by several workers) had to wait for the 5 places of the failed-login limit with doubling pauses,
 * and lost their turn to newcomers again and again: p99 26 times the median, and now and then a
 * `503` once a wait passed `maxWaitMs` (a client whose login ended logged in again at once and took
 * the place before any waiter looked again, so 11 of the 16 starved). Waiters are now served in turn,
 * on one service and across services sharing Redis. This runs that load for a few seconds on one
 * service (memory store) and on two sharing Redis, and asserts that every login is answered with a
 * session: none waits past the bound. In turn, a login waits while the 15 others are checked, about
 * 3 logins' time at 5 at once (16 logins' time at 5 at once, measured first on this machine, so a
 * busy machine moves it too); the bound is twice that, and at least 1 s. Latency itself is the bench's (bench/logins.bench.mjs).
 * PBKDF2 runs at its default cost: a login that ends frees its place for a moment only, so a waiter
 * that looks after pauses hardly ever finds it free, as with the product's passwords.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { createService, type KeyValueStore, type Service } from '../../src/index.js';
import { RedisKeyValueStore } from '../../stores/redis.js';
import { call, demoData, loginBody, USERS } from '../helpers.js';
import { deleteKeys, REDIS_URL, RUN_ID, serverAvailable } from '../support/servers.js';

const CLIENTS = 16;
const SECONDS = 4;

const loginAlice = (service: Service) => call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice) });

/** The time per login of alice with 5 at once (as many as the limit checks at once), from 4 rounds of 5. */
async function loginInterval(service: Service): Promise<number> {
  const started = performance.now();
  for (let round = 0; round < 4; round++) {
    const answers = await Promise.all(Array.from({ length: 5 }, () => loginAlice(service)));
    expect(answers.map((answer) => answer.body.status.internalStatus)).toEqual(['0', '0', '0', '0', '0']);
  }
  return (performance.now() - started) / 20;
}

/** Services on the demo data with these key-value stores, waiting at most `maxWaitMs`. */
async function servicesOn(kvs: Array<KeyValueStore | undefined>, maxWaitMs: number): Promise<Service[]> {
  const services = kvs.map((kv) =>
    createService({ data: demoData(), kv, loginLimit: { maxWaitMs }, onError: () => undefined }),
  );
  await Promise.all(services.map((service) => service.ready));
  return services;
}

/** `CLIENTS` clients logging in as alice again and again for `SECONDS`, client i on `services[i % n]`: the answers' codes, counted. */
async function loginLoad(services: Service[]): Promise<Record<string, number>> {
  const codes: Record<string, number> = {};
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      while (performance.now() < until) {
        const answer = await loginAlice(services[i % services.length]!);
        const code = `${answer.status} ${answer.body?.status?.internalStatus}${answer.status === 200 ? "" : ` ${answer.body?.status?.statusMessage}`}`;
        codes[code] = (codes[code] ?? 0) + 1;
      }
    }),
  );
  return codes;
}

/** The bound of a wait: twice the time of `CLIENTS` logins at 5 at once, measured on a service of its own; at least 1 s. */
async function bound(): Promise<number> {
  const [probe] = await servicesOn([undefined], 10_000);
  try {
    return Math.max(1000, 2 * CLIENTS * (await loginInterval(probe!)));
  } finally {
    await probe!.close();
  }
}

test(`${CLIENTS} clients logging in as one user for ${SECONDS} s on one service: every login gets a session, none a 503`, { timeout: 120_000 }, async () => {
  const services = await servicesOn([undefined], await bound());
  try {
    const codes = await loginLoad(services);
    expect(Object.keys(codes)).toEqual(['200 0']);
    expect(codes['200 0']).toBeGreaterThanOrEqual(CLIENTS);
  } finally {
    await services[0]!.close();
  }
});

const available = await serverAvailable('Redis', 'concurrent logins of one user on two services sharing Redis');

describe.runIf(available)('two services sharing Redis', () => {
  const prefix = `odbrest-logins:${RUN_ID}:`;
  afterAll(() => deleteKeys(prefix));

  test(`${CLIENTS} clients logging in as one user for ${SECONDS} s, half on each: every login gets a session, none a 503`, { timeout: 120_000 }, async () => {
    const services = await servicesOn([0, 1].map(() => new RedisKeyValueStore({ url: REDIS_URL, prefix })), await bound());
    try {
      const codes = await loginLoad(services);
      expect(Object.keys(codes)).toEqual(['200 0']);
      expect(codes['200 0']).toBeGreaterThanOrEqual(CLIENTS);
    } finally {
      await Promise.all(services.map((service) => service.close()));
    }
  });
});
