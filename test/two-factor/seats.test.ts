import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { SeatCounter, readLicences, type IsLive, type SeatRequest } from '../../src/auth/seats.js';
import { MemoryKeyValueStore } from '../../src/storage/memory-kv.js';
import type { KeyValueStore } from '../../src/storage/types.js';
import { RedisKeyValueStore } from '../../stores/redis.js';
import { deleteKeys, REDIS_URL, RUN_ID, serverAvailable } from '../support/servers.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);
const everyoneLive: IsLive = async () => true;
const shop = (parallel: number | undefined): SeatRequest => ({ app: 'shop', parallel });

/** Two stores over the same data (two instances of a service) and a clock for the counters. */
interface Stores {
  first: KeyValueStore;
  second: KeyValueStore;
}

function seatSuite(name: string, open: () => Promise<Stores>, clock: { now: number }): void {
  describe(`SeatCounter on ${name}`, () => {
    const opened: KeyValueStore[] = [];
    afterEach(async () => {
      for (const kv of opened.splice(0)) await kv.close?.();
    });
    async function counters(): Promise<[SeatCounter, SeatCounter]> {
      const { first, second } = await open();
      opened.push(first, second);
      return [new SeatCounter(first, () => clock.now), new SeatCounter(second, () => clock.now)];
    }
    const session = (id: string, lifetime = HOUR) => ({ id, expiresAt: clock.now + lifetime });
    const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

    it('gives a one-seat licence to exactly one of 20 parallel takes on two instances', async () => {
      const [a, b] = await counters();
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => refusal((i % 2 ? a : b).take('alice', [shop(1)], session(`s${i}`), everyoneLive))),
      );
      expect(outcomes.filter((outcome) => outcome === undefined)).toHaveLength(1);
      for (const error of outcomes.filter((outcome) => outcome !== undefined)) {
        expect(error).toBeInstanceOf(ApiError);
        expect(error).toMatchObject({ code: '101', status: 403, message: 'all 1 seats of the licence for application "shop" are taken' });
      }
      expect(await a.count('alice', 'shop')).toBe(1);
    });

    it('hands out exactly `parallel` seats under parallel takes', async () => {
      const [a, b] = await counters();
      const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => refusal((i % 2 ? a : b).take('alice', [shop(3)], session(`s${i}`), everyoneLive))));
      expect(outcomes.filter((outcome) => outcome === undefined)).toHaveLength(3);
      expect(await b.count('alice', 'shop')).toBe(3);
    });

    it('frees a seat on release (logout), on either instance', async () => {
      const [a, b] = await counters();
      await a.take('alice', [shop(1)], session('s1'), everyoneLive);
      await expect(b.take('alice', [shop(1)], session('s2'), everyoneLive)).rejects.toMatchObject({ code: '101' });
      await b.release('alice', 's1');
      await b.take('alice', [shop(1)], session('s2'), everyoneLive);
      expect(await a.count('alice', 'shop')).toBe(1);
    });

    it('frees only the applications released (/v1/license/release)', async () => {
      const [a] = await counters();
      const both = [shop(1), { app: 'hr', parallel: 1 }];
      await a.take('alice', both, session('s1'), everyoneLive);
      await a.release('alice', 's1', ['shop', 'unknown']);
      await a.take('alice', [shop(1)], session('s2'), everyoneLive);
      await expect(a.take('alice', [{ app: 'hr', parallel: 1 }], session('s2'), everyoneLive)).rejects.toMatchObject({ code: '101' });
    });

    it('frees the seat of a session that is gone (logged out elsewhere, idle timeout)', async () => {
      const [a, b] = await counters();
      await a.take('alice', [shop(1)], session('s1'), everyoneLive);
      await expect(b.take('alice', [shop(1)], session('s2'), async (id) => id === 's1')).rejects.toMatchObject({ code: '101' });
      await b.take('alice', [shop(1)], session('s2'), async (id) => id !== 's1');
      await expect(a.take('alice', [shop(1)], session('s3'), everyoneLive)).rejects.toMatchObject({ code: '101' });
    });

    it('frees the seat of a session past its absolute end', async () => {
      const [a, b] = await counters();
      await a.take('alice', [{ app: 'hr', parallel: 1 }], session('s0'), everyoneLive); // keeps the entry alive
      await a.take('alice', [shop(1)], session('s1', 60_000), everyoneLive);
      clock.now += 59_999;
      await expect(b.take('alice', [shop(1)], session('s2'), everyoneLive)).rejects.toMatchObject({ code: '101' });
      clock.now += 1;
      expect(await a.count('alice', 'shop')).toBe(0);
      await b.take('alice', [shop(1)], session('s2'), everyoneLive);
    });

    it('takes nothing when one of several applications is full', async () => {
      const [a] = await counters();
      await a.take('alice', [{ app: 'hr', parallel: 1 }], session('s1'), everyoneLive);
      const error = await refusal(a.take('alice', [shop(2), { app: 'hr', parallel: 1 }, { app: 'crm', parallel: undefined }], session('s2'), everyoneLive));
      expect(error).toMatchObject({ code: '101', message: 'all 1 seats of the licence for application "hr" are taken' });
      expect(await a.count('alice', 'shop')).toBe(0);
      expect(await a.count('alice', 'hr')).toBe(1);
    });

    it('counts seats per user, leaves licences without a count alone, refuses parallel 0', async () => {
      const [a] = await counters();
      await a.take('alice', [shop(1)], session('s1'), everyoneLive);
      await a.take('bob', [shop(1)], session('s2'), everyoneLive);
      for (let i = 0; i < 5; i++) await a.take('alice', [{ app: 'crm', parallel: undefined }], session(`c${i}`), everyoneLive);
      expect(await a.count('alice', 'crm')).toBe(0);
      await expect(a.take('alice', [{ app: 'none', parallel: 0 }], session('s3'), everyoneLive)).rejects.toMatchObject({ code: '101' });
    });

    it('counts a session once when it takes the same application again', async () => {
      const [a] = await counters();
      await a.take('alice', [shop(1)], session('s1'), everyoneLive);
      await a.take('alice', [shop(1), shop(1)], session('s1'), everyoneLive);
      expect(await a.count('alice', 'shop')).toBe(1);
    });

    it('is not confused by application and session names that are Object members', async () => {
      const [a] = await counters();
      await a.take('alice', [{ app: '__proto__', parallel: 1 }, { app: 'constructor', parallel: 1 }], session('toString'), everyoneLive);
      await expect(a.take('alice', [{ app: '__proto__', parallel: 1 }], session('s2'), everyoneLive)).rejects.toMatchObject({ code: '101' });
      await a.release('alice', 'toString', ['__proto__']);
      await a.take('alice', [{ app: '__proto__', parallel: 1 }], session('hasOwnProperty'), everyoneLive);
      expect(await a.count('alice', 'constructor')).toBe(1);
    });
  });
}

const memoryClock = { now: T0 };
seatSuite(
  'MemoryKeyValueStore',
  async () => {
    const shared = new MemoryKeyValueStore({ now: () => memoryClock.now });
    return { first: shared, second: shared };
  },
  memoryClock,
);

const redisAvailable = await serverAvailable('Redis', 'the SeatCounter suite on RedisKeyValueStore');
const prefix = `odbrest-test:${RUN_ID}:seats:`;
let runs = 0;
// The counters' clock decides which seats ended; Redis keeps the entry's own lifetime in real time.
const redisClock = { now: Date.now() };
describe.runIf(redisAvailable)('on Redis', () => {
  afterAll(() => deleteKeys(prefix));
  seatSuite(
    'RedisKeyValueStore (two clients)',
    async () => {
      const scope = `${prefix}${runs++}:`;
      return { first: new RedisKeyValueStore({ url: REDIS_URL, prefix: scope }), second: new RedisKeyValueStore({ url: REDIS_URL, prefix: scope }) };
    },
    redisClock,
  );
});

describe('readLicences', () => {
  it('reads plain licences and licences with seats, and ignores anything else', () => {
    const licences = readLicences([
      'crm',
      { app: 'shop', parallel: 2 },
      { app: 'zero', parallel: 0 },
      { app: 'negative', parallel: -1 },
      { app: 'fraction', parallel: 1.5 },
      { app: 'text', parallel: '2' },
      { app: 7, parallel: 1 },
      { parallel: 1 },
      ['nested'],
      3,
      null,
    ]);
    expect([...licences]).toEqual([
      ['crm', undefined],
      ['shop', 2],
      ['zero', 0],
    ]);
  });

  it('keeps the fewest seats when an application is listed twice', () => {
    const licences = readLicences(['shop', { app: 'shop', parallel: 3 }, 'shop', { app: 'shop', parallel: 1 }, { app: 'shop', parallel: 2 }]);
    expect([...licences]).toEqual([['shop', 1]]);
  });

  it.each([[undefined], [null], ['crm'], [{ app: 'crm' }]])('holds nothing for a field that is no list (%j)', (field) => {
    expect(readLicences(field).size).toBe(0);
  });
});
