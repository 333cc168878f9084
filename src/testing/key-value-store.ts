/**
 * The KeyValueStore contract, written once and run against every implementation:
 *
 *   keyValueStoreContract('MyKv', async () => new MyKv(...), clock);
 *
 * `create` returns a new, empty store for each test. Expiry is checked by moving `clock`: a test clock
 * the store was built with, or (the default) real time, for stores whose server keeps the time.
 */
import type { TestApi } from './test-api.js';
import type { KeyValueStore } from '../storage/types.js';

export interface ContractClock {
  /** Lets `ms` milliseconds pass for the store. */
  advance(ms: number): Promise<void>;
}

/** Real time: waits. TTLs in the contract are a few hundred ms, so this stays quick. */
export const realClock: ContractClock = { advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

/** Base TTL of entries that must expire during a test; `LONG` for entries that must not. */
const SHORT = 300;
const LONG = 600_000;

export function keyValueStoreContract(name: string, create: () => Promise<KeyValueStore>, clock: ContractClock = realClock, { afterEach, describe, expect, it }: TestApi): void {
  describe(`KeyValueStore contract: ${name}`, () => {
    const open: KeyValueStore[] = [];
    const fresh = async () => {
      const kv = await create();
      open.push(kv);
      return kv;
    };
    afterEach(async () => {
      for (const kv of open.splice(0)) await kv.close?.();
    });

    describe('get and set', () => {
      it('answers undefined for an absent key and the value for a set one', async () => {
        const kv = await fresh();
        expect(await kv.get('k')).toBeUndefined();
        await kv.set('k', 'v1', LONG);
        expect(await kv.get('k')).toBe('v1');
        await kv.set('k', 'v2', LONG);
        expect(await kv.get('k')).toBe('v2');
      });

      it('keeps keys apart and stores the empty string as a value', async () => {
        const kv = await fresh();
        await kv.set('a', '', LONG);
        await kv.set('A', 'upper', LONG);
        expect(await kv.get('a')).toBe('');
        expect(await kv.get('A')).toBe('upper');
        expect(await kv.get('a ')).toBeUndefined();
      });

      it('keeps unicode keys and values, braces, colons and large values', async () => {
        const kv = await fresh();
        const big = JSON.stringify({ blob: 'ü😀'.repeat(200_000) });
        await kv.set('sess:{ab_C-9}', 'x', LONG);
        await kv.set('schlüssel:名前:😀', 'wert 👩‍💻 שלום\n"quoted"\\', LONG);
        await kv.set('big', big, LONG);
        expect(await kv.get('sess:{ab_C-9}')).toBe('x');
        expect(await kv.get('schlüssel:名前:😀')).toBe('wert 👩‍💻 שלום\n"quoted"\\');
        expect(await kv.get('big')).toBe(big);
      });

      it('forgets a value when its TTL has passed', async () => {
        const kv = await fresh();
        await kv.set('short', 'v', SHORT);
        await kv.set('long', 'v', LONG);
        expect(await kv.get('short')).toBe('v');
        await clock.advance(SHORT + 150);
        expect(await kv.get('short')).toBeUndefined();
        expect(await kv.get('long')).toBe('v');
      });

      it('set gives an existing key the new TTL', async () => {
        const kv = await fresh();
        await kv.set('k', 'old', LONG);
        await kv.set('k', 'new', SHORT);
        await clock.advance(SHORT + 150);
        expect(await kv.get('k')).toBeUndefined();
      });
    });

    describe('ttl and expire', () => {
      it('ttl answers the remaining lifetime, 0 when absent', async () => {
        const kv = await fresh();
        await kv.set('k', 'v', 60_000);
        const left = await kv.ttl('k');
        expect(left).toBeGreaterThan(50_000);
        expect(left).toBeLessThanOrEqual(60_000);
        expect(await kv.ttl('absent')).toBe(0);
      });

      it('ttl answers 0 after expiry', async () => {
        const kv = await fresh();
        await kv.set('k', 'v', SHORT);
        await clock.advance(SHORT + 150);
        expect(await kv.ttl('k')).toBe(0);
      });

      it('expire renews a lifetime and keeps the value', async () => {
        const kv = await fresh();
        await kv.set('k', 'v', SHORT);
        expect(await kv.expire('k', LONG)).toBe(true);
        await clock.advance(SHORT + 150);
        expect(await kv.get('k')).toBe('v');
        expect(await kv.ttl('k')).toBeGreaterThan(SHORT);
      });

      it('expire can shorten a lifetime', async () => {
        const kv = await fresh();
        await kv.set('k', 'v', LONG);
        expect(await kv.expire('k', SHORT)).toBe(true);
        await clock.advance(SHORT + 150);
        expect(await kv.get('k')).toBeUndefined();
      });

      it('getAndExpire answers the value and renews its lifetime', async () => {
        const kv = await fresh();
        await kv.set('k', 'v', SHORT);
        expect(await kv.getAndExpire('k', LONG)).toBe('v');
        await clock.advance(SHORT + 150);
        expect(await kv.get('k')).toBe('v');
        expect(await kv.ttl('k')).toBeGreaterThan(SHORT);
      });

      it('getAndExpire can shorten a lifetime', async () => {
        const kv = await fresh();
        await kv.set('k', 'v', LONG);
        expect(await kv.getAndExpire('k', SHORT)).toBe('v');
        await clock.advance(SHORT + 150);
        expect(await kv.get('k')).toBeUndefined();
      });

      it('getAndExpire answers undefined for an absent or expired key and does not create it', async () => {
        const kv = await fresh();
        expect(await kv.getAndExpire('absent', LONG)).toBeUndefined();
        expect(await kv.get('absent')).toBeUndefined();
        await kv.set('k', 'v', SHORT);
        await clock.advance(SHORT + 150);
        expect(await kv.getAndExpire('k', LONG)).toBeUndefined();
        expect(await kv.get('k')).toBeUndefined();
      });

      it('expire answers false for an absent or expired key and does not create it', async () => {
        const kv = await fresh();
        expect(await kv.expire('absent', LONG)).toBe(false);
        expect(await kv.get('absent')).toBeUndefined();
        await kv.set('k', 'v', SHORT);
        await clock.advance(SHORT + 150);
        expect(await kv.expire('k', LONG)).toBe(false);
        expect(await kv.get('k')).toBeUndefined();
      });
    });

    describe('compareAndSet', () => {
      it('writes when the key is absent and absence was expected', async () => {
        const kv = await fresh();
        expect(await kv.compareAndSet('k', undefined, 'first', LONG)).toBe(true);
        expect(await kv.get('k')).toBe('first');
      });

      it('does not write when absence was expected but the key exists', async () => {
        const kv = await fresh();
        await kv.set('k', 'there', LONG);
        expect(await kv.compareAndSet('k', undefined, 'other', LONG)).toBe(false);
        expect(await kv.get('k')).toBe('there');
      });

      it('writes when the value is the expected one', async () => {
        const kv = await fresh();
        await kv.set('k', 'v1', LONG);
        expect(await kv.compareAndSet('k', 'v1', 'v2', LONG)).toBe(true);
        expect(await kv.get('k')).toBe('v2');
      });

      it('does not write when the value differs, nor when a value was expected but the key is absent', async () => {
        const kv = await fresh();
        await kv.set('k', 'v1', LONG);
        expect(await kv.compareAndSet('k', 'v0', 'v2', LONG)).toBe(false);
        expect(await kv.compareAndSet('k', 'V1', 'v2', LONG)).toBe(false);
        expect(await kv.compareAndSet('k', '', 'v2', LONG)).toBe(false);
        expect(await kv.get('k')).toBe('v1');
        expect(await kv.compareAndSet('absent', 'v1', 'v2', LONG)).toBe(false);
        expect(await kv.get('absent')).toBeUndefined();
      });

      it('tells the empty string from absence', async () => {
        const kv = await fresh();
        await kv.set('k', '', LONG);
        expect(await kv.compareAndSet('k', undefined, 'x', LONG)).toBe(false);
        expect(await kv.compareAndSet('k', '', 'x', LONG)).toBe(true);
        expect(await kv.get('k')).toBe('x');
      });

      it('treats an expired key as absent and sets the new TTL', async () => {
        const kv = await fresh();
        await kv.set('k', 'old', SHORT);
        await clock.advance(SHORT + 150);
        expect(await kv.compareAndSet('k', 'old', 'x', LONG)).toBe(false);
        expect(await kv.compareAndSet('k', undefined, 'new', SHORT)).toBe(true);
        expect(await kv.get('k')).toBe('new');
        await clock.advance(SHORT + 150);
        expect(await kv.get('k')).toBeUndefined();
      });

      it('lets exactly one of many concurrent writers win', async () => {
        const kv = await fresh();
        await kv.set('k', 'v0', LONG);
        const results = await Promise.all(Array.from({ length: 25 }, (_, i) => kv.compareAndSet('k', 'v0', `writer ${i}`, LONG)));
        const winners = results.flatMap((won, i) => (won ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(await kv.get('k')).toBe(`writer ${winners[0]}`);
      });

      it('lets exactly one of many concurrent creators win', async () => {
        const kv = await fresh();
        const results = await Promise.all(Array.from({ length: 25 }, (_, i) => kv.compareAndSet('k', undefined, `creator ${i}`, LONG)));
        const winners = results.flatMap((won, i) => (won ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(await kv.get('k')).toBe(`creator ${winners[0]}`);
      });
    });

    describe('take', () => {
      it('answers the value once and removes it', async () => {
        const kv = await fresh();
        await kv.set('once', 'secret-state', LONG);
        expect(await kv.take('once')).toBe('secret-state');
        expect(await kv.take('once')).toBeUndefined();
        expect(await kv.get('once')).toBeUndefined();
      });

      it('answers undefined for an absent or expired key', async () => {
        const kv = await fresh();
        expect(await kv.take('absent')).toBeUndefined();
        await kv.set('k', 'v', SHORT);
        await clock.advance(SHORT + 150);
        expect(await kv.take('k')).toBeUndefined();
      });

      it('gives a value to exactly one of many concurrent takers', async () => {
        const kv = await fresh();
        await kv.set('once', 'state', LONG);
        const results = await Promise.all(Array.from({ length: 25 }, () => kv.take('once')));
        expect(results.filter((value) => value === 'state')).toHaveLength(1);
        expect(results.filter((value) => value === undefined)).toHaveLength(24);
      });
    });

    describe('delete', () => {
      it('answers whether the key existed', async () => {
        const kv = await fresh();
        await kv.set('k', 'v', LONG);
        expect(await kv.delete('k')).toBe(true);
        expect(await kv.get('k')).toBeUndefined();
        expect(await kv.delete('k')).toBe(false);
        expect(await kv.delete('never')).toBe(false);
      });

      it('answers false for an expired key', async () => {
        const kv = await fresh();
        await kv.set('k', 'v', SHORT);
        await clock.advance(SHORT + 150);
        expect(await kv.delete('k')).toBe(false);
      });
    });

    describe('increment', () => {
      it('counts from 1', async () => {
        const kv = await fresh();
        expect(await kv.increment('n', LONG)).toBe(1);
        expect(await kv.increment('n', LONG)).toBe(2);
        expect(await kv.increment('n', LONG)).toBe(3);
        expect(await kv.get('n')).toBe('3');
        expect(await kv.increment('other', LONG)).toBe(1);
      });

      it('keeps the TTL set when the counter was created', async () => {
        const kv = await fresh();
        expect(await kv.increment('n', 2 * SHORT)).toBe(1);
        await clock.advance(SHORT);
        expect(await kv.increment('n', 2 * SHORT)).toBe(2);
        expect(await kv.ttl('n')).toBeLessThanOrEqual(SHORT);
        await clock.advance(SHORT + 150);
        expect(await kv.get('n')).toBeUndefined();
        expect(await kv.increment('n', LONG)).toBe(1);
      });

      it('starts again at 1 after the counter expired', async () => {
        const kv = await fresh();
        await kv.increment('n', SHORT);
        await kv.increment('n', SHORT);
        await clock.advance(SHORT + 150);
        expect(await kv.increment('n', LONG)).toBe(1);
        expect(await kv.ttl('n')).toBeGreaterThan(SHORT);
      });

      it('adds a given step, also a negative one, which never creates a counter', async () => {
        const kv = await fresh();
        expect(await kv.increment('n', LONG, 3)).toBe(3);
        expect(await kv.increment('n', LONG, -1)).toBe(2);
        expect(await kv.increment('absent', LONG, -1)).toBe(0);
        expect(await kv.get('absent')).toBeUndefined();
        expect(await kv.get('n')).toBe('2');
      });

      it('counts every one of many concurrent increments', async () => {
        const kv = await fresh();
        const results = await Promise.all(Array.from({ length: 100 }, () => kv.increment('n', LONG)));
        expect([...results].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
        expect(await kv.get('n')).toBe('100');
      });
    });

    // Optional (lineUp, leaveLine, watchLines): skipped for a store without lines.
    describe('lines', () => {
      const lined = async (skip: () => void) => {
        const kv = await fresh();
        if (!kv.lineUp || !kv.leaveLine || !kv.watchLines) skip();
        return kv as Required<KeyValueStore>;
      };

      it('answers how many stand ahead, in the order members came; a member lining up again keeps its place', async ({ skip }) => {
        const kv = await lined(skip);
        expect(await kv.lineUp('line', 'a', LONG)).toBe(0);
        expect(await kv.lineUp('line', 'b', LONG)).toBe(1);
        expect(await kv.lineUp('line', 'c', LONG)).toBe(2);
        expect(await kv.lineUp('line', 'a', LONG)).toBe(0);
        expect(await kv.lineUp('line', 'c', LONG)).toBe(2);
        expect(await kv.lineUp('other line', 'c', LONG)).toBe(0);
      });

      it('moves those behind up when a member leaves; leaving twice, or a line one is not in, changes nothing', async ({ skip }) => {
        const kv = await lined(skip);
        for (const member of ['a', 'b', 'c']) await kv.lineUp('line', member, LONG);
        await kv.leaveLine('line', 'b');
        await kv.leaveLine('line', 'b');
        await kv.leaveLine('no line', 'a');
        expect(await kv.lineUp('line', 'c', LONG)).toBe(1);
        await kv.leaveLine('line', 'a');
        expect(await kv.lineUp('line', 'c', LONG)).toBe(0);
        expect(await kv.lineUp('line', 'a', LONG)).toBe(1); // back at the end
      });

      it('keeps lines apart from values under the same key', async ({ skip }) => {
        const kv = await lined(skip);
        await kv.set('k', 'value', LONG);
        expect(await kv.increment('n', LONG)).toBe(1);
        expect(await kv.lineUp('k', 'a', LONG)).toBe(0);
        expect(await kv.lineUp('n', 'a', LONG)).toBe(0);
        expect(await kv.get('k')).toBe('value');
        expect(await kv.increment('n', LONG)).toBe(2);
        await kv.delete('k');
        expect(await kv.lineUp('k', 'b', LONG)).toBe(1);
        await kv.leaveLine('k', 'a');
        expect(await kv.get('n')).toBe('2');
      });

      it('lets a member whose time passed leave by itself; lining up again renews the time', async ({ skip }) => {
        const kv = await lined(skip);
        await kv.lineUp('line', 'gone', SHORT);
        await kv.lineUp('line', 'renewed', SHORT);
        expect(await kv.lineUp('line', 'waiting', LONG)).toBe(2);
        expect(await kv.lineUp('line', 'renewed', LONG)).toBe(1);
        await clock.advance(SHORT + 150);
        expect(await kv.lineUp('line', 'waiting', LONG)).toBe(1);
        expect(await kv.lineUp('line', 'renewed', LONG)).toBe(0);
        expect(await kv.lineUp('line', 'gone', LONG)).toBe(2); // back at the end
      });

      it('gives each of many members lining up at once its own place', async ({ skip }) => {
        const kv = await lined(skip);
        const ahead = await Promise.all(Array.from({ length: 50 }, (_, i) => kv.lineUp('line', `member ${i}`, LONG)));
        expect([...ahead].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
        const again = await Promise.all(Array.from({ length: 50 }, (_, i) => kv.lineUp('line', `member ${i}`, LONG)));
        expect(again).toEqual(ahead);
      });

      it('tells its watchers the key of a line a member left, until they stop watching', async ({ skip }) => {
        const kv = await lined(skip);
        const heard: string[] = [];
        const stop = await kv.watchLines((key) => heard.push(key));
        await kv.lineUp('line', 'a', LONG);
        await kv.lineUp('other', 'a', LONG);
        await kv.leaveLine('line', 'b'); // not in it: nothing changed
        await kv.leaveLine('line', 'a');
        await kv.leaveLine('other', 'a');
        for (let waited = 0; heard.length < 2 && waited < 2000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(heard).toEqual(['line', 'other']);
        stop();
        await kv.lineUp('line', 'a', LONG);
        await kv.leaveLine('line', 'a');
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(heard).toEqual(['line', 'other']);
      });
    });
  });
}
