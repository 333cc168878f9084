import { ApiError } from '../http/errors.js';
import { kvKeys } from '../storage/keys.js';
import type { KeyValueStore } from '../storage/types.js';

export interface LoginLimitOptions {
  /** Failed logins per user name within the window before further attempts are refused. Default 5. */
  perUser?: number;
  /** Failed logins per client address within the window. Default 20. */
  perAddress?: number;
  /** Window length in ms, counted from the first failure. Default 15 minutes. */
  windowMs?: number;
  /**
   * How long an attempt that finds every remaining place held by attempts still being checked waits
   * for them before it is answered `503` (with a short `Retry-After`). Default 10 s.
   */
  maxWaitMs?: number;
}

/** A login attempt that holds its place in the counts until its check ends; exactly one of the three ends it. */
export interface Admission {
  /** The password matched: the user's failures are cleared and both places given back. */
  succeeded(): Promise<void>;
  /** A wrong password (`302`) or second-factor code (`342`): counted as a failure of the user and the address. */
  failed(): Promise<void>;
  /**
   * The attempt ends without a verdict (`341`: the password matched, the second factor is still to
   * come; or an error before the check): its places are given back, the failures counted so far stay.
   */
  withdrawn(): Promise<void>;
  /**
   * A place in the user's second-factor count (PROTOCOL.md 2.4), taken before a code is checked:
   * `303` when wrong codes used up the limit. Only `verified` clears that count.
   */
  secondFactor(): Promise<CodeCheck>;
}

/** A second-factor code being checked. */
export interface CodeCheck {
  /** The code was right: the second-factor count is cleared. */
  verified(): Promise<void>;
  /** The code was wrong: counted (the caller also calls the admission's `failed`). */
  failed(): Promise<void>;
  /** Nothing was checked. */
  withdrawn(): Promise<void>;
}

/** Without lines in the store: the first pause before an attempt looks again, doubled each time up to the longest. */
const FIRST_PAUSE_MS = 20;
const LONGEST_PAUSE_MS = 400;
/**
 * A waiter in a line looks again after this long when no notice woke it (a notice lost while a
 * connection was down, a member whose time ran out, failures whose window passed); before the store
 * watches lines for this instance, or in a store that cannot, after the shorter time.
 */
const LOOK_AGAIN_MS = 250;
const LOOK_AGAIN_UNWATCHED_MS = 50;
/** A waiter's time in a line after its last look, past its own deadline (should its instance stop, the line forgets it then). */
const LINE_GRACE_MS = 5_000;

/** A count of failures with the attempts being checked beside it (two keys of the KeyValueStore), and the line of its waiters. */
interface Counter {
  failures: string;
  checking: string;
  limit: number;
}

/** An attempt's place in one counter; `leave` gives it back (once). */
interface Place {
  counter: Counter;
  leave(): Promise<void>;
}

type LinedStore = KeyValueStore & Required<Pick<KeyValueStore, 'lineUp' | 'leaveLine'>>;

/** One waiting attempt of this instance: woken by a notice, or when its pause ends. */
class Waiter {
  #woken = false;
  #wake: (() => void) | undefined;

  wake(): void {
    if (this.#wake) this.#wake();
    else this.#woken = true; // while it looks: it looks again at once
  }

  pause(ms: number): Promise<void> {
    if (this.#woken) {
      this.#woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#wake!(), ms);
      this.#wake = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
    });
  }
}

/**
 * The failed-login limit (PROTOCOL.md 2.4) in the KeyValueStore, so all instances share it. Each user,
 * each address and each user's second factor has a count of the failures in the window, and the
 * attempts being checked now. An attempt takes a place BEFORE its password is hashed, and goes on
 * only while the failures plus the attempts being checked stay within the limit, so that however
 * many arrive at once (on one instance or on several sharing Redis), the failures can never pass the
 * limit. A failure is added to the failures before it gives its place back, so the sum never drops early.
 *
 * In a store with lines (`lineUp`), attempts stand in a line per count in the order they came; the
 * line is the count of attempts being checked: an attempt goes on when the members ahead of it plus
 * the failures are fewer than the limit (members ahead of it still waiting hold their places before
 * it), and leaves the line when its check ends, which wakes the waiters (a notice from the store,
 * also of other instances' lines). So waiters are served in turn, and a newcomer never passes them.
 * Places are taken one count after the other (address, user, second factor), always in that order.
 * In a store without lines, the attempts being checked are a counter, and a waiter looks again after
 * growing pauses (correct, but a newcomer may take a place before waiters that paused).
 *
 * An attempt that finds the remaining places held waits for them (they may succeed and give their
 * places back) rather than counting them as failures; only when the failures themselves reach the
 * limit is the answer `303`, and a wait longer than `maxWaitMs` is `503` with a short `Retry-After`.
 */
export class LoginLimiter {
  readonly #perUser: number;
  readonly #perAddress: number;
  readonly #windowMs: number;
  readonly #maxWaitMs: number;
  /** This instance's waiters per line, in the order they came. */
  readonly #waiting = new Map<string, { limit: number; waiters: Set<Waiter> }>();
  /** Watching the store's lines: set once the first waiter had to wait. */
  #watch: Promise<void> | undefined;
  #stopWatching: (() => void) | undefined;

  constructor(
    private readonly kv: KeyValueStore,
    options: LoginLimitOptions = {},
  ) {
    this.#perUser = options.perUser ?? 5;
    this.#perAddress = options.perAddress ?? 20;
    this.#windowMs = options.windowMs ?? 15 * 60_000;
    this.#maxWaitMs = options.maxWaitMs ?? 10_000;
  }

  /** Takes a place for a login of `user` from `address`, or throws `303` (`503` after a wait too long). */
  async admit(user: string, address: string | undefined): Promise<Admission> {
    const addressCounter = address === undefined ? undefined : this.#counter(kvKeys.failedLoginsOfAddress(address), this.#perAddress);
    const userCounter = this.#counter(kvKeys.failedLoginsOfUser(user), this.#perUser);
    const places = await this.#takeAll(addressCounter ? [addressCounter, userCounter] : [userCounter]);
    let ended = false;
    const once = (end: () => Promise<unknown>) => async () => {
      if (ended) return;
      ended = true;
      await end();
    };
    return {
      succeeded: once(async () => {
        await this.kv.delete(userCounter.failures);
        await Promise.all(places.map((place) => place.leave()));
      }),
      failed: once(() => Promise.all(places.map((place) => this.#fail(place)))),
      withdrawn: once(() => Promise.all(places.map((place) => place.leave()))),
      secondFactor: async () => {
        const [codes] = await this.#takeAll([this.#counter(kvKeys.failedCodesOfUser(user), this.#perUser)]);
        let done = false;
        const end = (step: () => Promise<unknown>) => async () => {
          if (done) return;
          done = true;
          await step();
        };
        return {
          verified: end(async () => {
            await this.kv.delete(codes!.counter.failures);
            await codes!.leave();
          }),
          failed: end(() => this.#fail(codes!)),
          withdrawn: end(() => codes!.leave()),
        };
      },
    };
  }

  /** Throws `303` while the address has no attempt left (checked before work that comes before the user name is known). */
  async checkAddress(address: string | undefined): Promise<void> {
    if (address === undefined) return;
    const counter = this.#counter(kvKeys.failedLoginsOfAddress(address), this.#perAddress);
    if (Number((await this.kv.get(counter.failures)) ?? 0) >= this.#perAddress) throw await this.#refusal(counter);
  }

  /** Counts a failure of the address alone (a login that could not even be decrypted). */
  async addressFailed(address: string | undefined): Promise<void> {
    if (address !== undefined) await this.kv.increment(kvKeys.failedLoginsOfAddress(address), this.#windowMs);
  }

  /** Stops watching the store's lines (the service closes). */
  close(): void {
    this.#stopWatching?.();
    this.#stopWatching = undefined;
  }

  #counter(failures: string, limit: number): Counter {
    return { failures, checking: `${failures}:checking`, limit };
  }

  /** A place in each counter, all or none: in their lines when the store has lines, else by counting. */
  #takeAll(counters: readonly Counter[]): Promise<Place[]> {
    const kv = this.kv;
    if (kv.lineUp && kv.leaveLine) return this.#inLines(kv as LinedStore, counters);
    return this.#counted(counters);
  }

  /** A place in each counter's line, one after the other, with the same member and deadline; on a refusal, those taken are given back. */
  async #inLines(kv: LinedStore, counters: readonly Counter[]): Promise<Place[]> {
    const deadline = Date.now() + this.#maxWaitMs;
    const member = crypto.randomUUID();
    const places: Place[] = [];
    try {
      for (const counter of counters) places.push(await this.#inLine(kv, counter, counters, member, deadline));
      return places;
    } catch (error) {
      await Promise.all(places.map((place) => place.leave()));
      throw error;
    }
  }

  /**
   * Stands in the counter's line until the members ahead plus the failures (read after joining: a
   * failure counts in the failures before its attempt leaves the line) are fewer than the limit;
   * `303` as soon as the failures alone fill it or another of the attempt's `counters` (waiters for
   * an address learn at once that the user they wait for is locked), `503` past the deadline. The
   * place then lasts the failures' window (an attempt being checked never loses it), and is given
   * back by leaving.
   */
  async #inLine(kv: LinedStore, counter: Counter, counters: readonly Counter[], member: string, deadline: number): Promise<Place> {
    const line = counter.failures; // lines are apart from values: the line of the failures' key
    const waiter = this.#waitIn(counter);
    try {
      for (;;) {
        const ahead = await kv.lineUp(line, member, Math.max(0, deadline - Date.now()) + LINE_GRACE_MS);
        const failures = await Promise.all(counters.map(async (each) => Number((await kv.get(each.failures)) ?? 0)));
        const full = counters.find((each, i) => failures[i]! >= each.limit);
        if (full) throw await this.#refusal(full);
        if (ahead + failures[counters.indexOf(counter)]! < counter.limit) {
          const held = kv.lineUp(line, member, this.#windowMs).catch(() => undefined); // while the password is hashed
          let left: Promise<void> | undefined;
          return { counter, leave: () => (left ??= held.then(() => kv.leaveLine(line, member))) };
        }
        if (Date.now() >= deadline) throw this.#busy();
        this.#watch ??= this.#watchLines();
        await waiter.pause(Math.min(deadline - Date.now(), this.#stopWatching ? LOOK_AGAIN_MS : LOOK_AGAIN_UNWATCHED_MS));
      }
    } catch (error) {
      await kv.leaveLine(line, member).catch(() => undefined);
      throw error;
    } finally {
      this.#stopWaiting(counter, waiter);
    }
  }

  /** Registers a waiter of this instance in the counter's line (before it joins, so no notice is missed). */
  #waitIn(counter: Counter): Waiter {
    let line = this.#waiting.get(counter.failures);
    if (!line) this.#waiting.set(counter.failures, (line = { limit: counter.limit, waiters: new Set() }));
    const waiter = new Waiter();
    line.waiters.add(waiter);
    return waiter;
  }

  #stopWaiting(counter: Counter, waiter: Waiter): void {
    const line = this.#waiting.get(counter.failures);
    line?.waiters.delete(waiter);
    if (line?.waiters.size === 0) this.#waiting.delete(counter.failures);
  }

  /**
   * A member left the line `key`: this instance's first `limit` waiters in it look again (a later one
   * has at least `limit` members ahead of it, so it cannot go on yet; it moves up as those go on).
   */
  readonly #noticed = (key: string): void => {
    const line = this.#waiting.get(key);
    if (!line) return;
    let woken = 0;
    for (const waiter of line.waiters) {
      if (woken++ === line.limit) break;
      waiter.wake();
    }
  };

  /** Watches the store's lines (once; again at the next wait should it fail). Until then, waiters look again sooner. */
  async #watchLines(): Promise<void> {
    if (!this.kv.watchLines) return;
    try {
      this.#stopWatching = await this.kv.watchLines(this.#noticed);
    } catch {
      this.#watch = undefined;
    }
  }

  /**
   * Without lines: a place in each counter, all or none. `303` as soon as the failures alone fill one
   * of them; while places are held by attempts still being checked, it waits (pausing longer each
   * time, and looking before it joins again, so that many waiters do not keep the counts full by
   * looking) until all have room, or the wait passes `maxWaitMs` (`503`).
   */
  async #counted(counters: readonly Counter[]): Promise<Place[]> {
    const deadline = Date.now() + this.#maxWaitMs;
    for (let pause = FIRST_PAUSE_MS, first = true; ; pause = Math.min(LONGEST_PAUSE_MS, pause * 2), first = false) {
      if (first || (await this.#roomIn(counters))) {
        const taken: Place[] = [];
        const giveBack = () => Promise.all(taken.map((place) => place.leave()));
        try {
          for (const counter of counters) {
            if (!(await this.#take(counter))) break;
            let left: Promise<void> | undefined;
            taken.push({ counter, leave: () => (left ??= this.#leaveChecking(counter)) });
          }
        } catch (error) {
          await giveBack();
          throw error;
        }
        if (taken.length === counters.length) return taken;
        await giveBack();
      }
      if (Date.now() + pause > deadline) throw this.#busy();
      await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random() / 2)));
    }
  }

  /**
   * One place: the attempt joins those being checked and stays when the failures (read after it
   * joined) plus the attempts being checked are within the limit; otherwise it leaves again and
   * answers `false`, or throws `303` when the failures alone fill the limit.
   */
  async #take(counter: Counter): Promise<boolean> {
    const checking = await this.kv.increment(counter.checking, this.#windowMs);
    // the counter of attempts lives while attempts keep coming; the failures keep their own window
    const [failures] = await Promise.all([this.kv.get(counter.failures), this.kv.expire(counter.checking, this.#windowMs)]);
    const failed = Number(failures ?? 0);
    if (failed + checking <= counter.limit) return true;
    await this.#leaveChecking(counter);
    if (failed >= counter.limit) throw await this.#refusal(counter);
    return false;
  }

  /** Whether every counter seems to have a place (a look, without joining); `303` when the failures of one fill its limit. */
  async #roomIn(counters: readonly Counter[]): Promise<boolean> {
    const counts = await Promise.all(counters.map((counter) => Promise.all([this.kv.get(counter.failures), this.kv.get(counter.checking)])));
    const failures = counts.map(([failed]) => Number(failed ?? 0));
    const full = counters.find((counter, i) => failures[i]! >= counter.limit);
    if (full) throw await this.#refusal(full);
    return counters.every((counter, i) => failures[i]! + Number(counts[i]![1] ?? 0) < counter.limit);
  }

  async #leaveChecking(counter: Counter): Promise<void> {
    await this.kv.increment(counter.checking, this.#windowMs, -1);
  }

  async #fail(place: Place): Promise<void> {
    await this.kv.increment(place.counter.failures, this.#windowMs); // first, so the sum never drops in between
    await place.leave();
  }

  #busy(): ApiError {
    return new ApiError('503', 'too many logins of this user or address are being checked at this moment; try again in a second', { headers: { 'retry-after': '1' } });
  }

  async #refusal(counter: Counter): Promise<ApiError> {
    const seconds = Math.max(1, Math.ceil((await this.kv.ttl(counter.failures)) / 1000));
    return new ApiError('303', `too many failed logins, try again in ${seconds} seconds`, { headers: { 'retry-after': String(seconds) } });
  }
}
