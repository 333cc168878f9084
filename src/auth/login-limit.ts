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

const FIRST_PAUSE_MS = 20;
const LONGEST_PAUSE_MS = 400;

/** A count of failures with the attempts being checked beside it (two keys of the KeyValueStore). */
interface Counter {
  failures: string;
  checking: string;
  limit: number;
}

/**
 * The failed-login limit (PROTOCOL.md 2.4) in the KeyValueStore, so all instances share it. Each user,
 * each address and each user's second factor has two counters: the failures in the window, and the
 * attempts being checked now. An attempt takes a place BEFORE its password is hashed: it adds itself
 * to the attempts being checked and goes on only while failures plus attempts being checked stay
 * within the limit, so that however many arrive at once (on one instance or on several sharing
 * Redis), the failures can never pass the limit. A failure is added to the failures before it leaves
 * the attempts being checked, so the sum never drops early.
 *
 * An attempt that finds the remaining places held by attempts still being checked waits for them
 * (they may succeed and give their places back) rather than counting them as failures; only when
 * the failures themselves reach the limit is the answer `303`, and a wait longer than `maxWaitMs` is
 * `503` with a short `Retry-After`.
 */
export class LoginLimiter {
  readonly #perUser: number;
  readonly #perAddress: number;
  readonly #windowMs: number;
  readonly #maxWaitMs: number;

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
    await this.#takeAll(addressCounter ? [addressCounter, userCounter] : [userCounter]);
    const both = (step: (counter: Counter) => Promise<unknown>) => Promise.all([step(userCounter), addressCounter && step(addressCounter)]).then(() => undefined);
    let ended = false;
    const once = (end: () => Promise<void>) => async () => {
      if (ended) return;
      ended = true;
      await end();
    };
    return {
      succeeded: once(async () => {
        await this.kv.delete(userCounter.failures);
        await both((counter) => this.#leaveChecking(counter));
      }),
      failed: once(() => both((counter) => this.#fail(counter))),
      withdrawn: once(() => both((counter) => this.#leaveChecking(counter))),
      secondFactor: async () => {
        const codes = this.#counter(kvKeys.failedCodesOfUser(user), this.#perUser);
        await this.#takeAll([codes]);
        let done = false;
        const end = (step: () => Promise<unknown>) => async () => {
          if (done) return;
          done = true;
          await step();
        };
        return {
          verified: end(async () => {
            await this.kv.delete(codes.failures);
            await this.#leaveChecking(codes);
          }),
          failed: end(() => this.#fail(codes)),
          withdrawn: end(() => this.#leaveChecking(codes)),
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

  #counter(failures: string, limit: number): Counter {
    return { failures, checking: `${failures}:checking`, limit };
  }

  /**
   * A place in each counter, all or none. `303` as soon as the failures alone fill one of them;
   * while places are held by attempts still being checked, it waits (pausing longer each time, and
   * looking before it joins again, so that many waiters do not keep the counts full by looking) until
   * all have room, or the wait passes `maxWaitMs` (`503`).
   */
  async #takeAll(counters: readonly Counter[]): Promise<void> {
    const deadline = Date.now() + this.#maxWaitMs;
    for (let pause = FIRST_PAUSE_MS, first = true; ; pause = Math.min(LONGEST_PAUSE_MS, pause * 2), first = false) {
      if (first || (await this.#roomIn(counters))) {
        const taken: Counter[] = [];
        const giveBack = () => Promise.all(taken.map((counter) => this.#leaveChecking(counter)));
        try {
          for (const counter of counters) {
            if (!(await this.#take(counter))) break;
            taken.push(counter);
          }
        } catch (error) {
          await giveBack();
          throw error;
        }
        if (taken.length === counters.length) return;
        await giveBack();
      }
      if (Date.now() + pause > deadline) {
        throw new ApiError('503', 'too many logins of this user or address are being checked at this moment; try again in a second', { headers: { 'retry-after': '1' } });
      }
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

  async #fail(counter: Counter): Promise<void> {
    await this.kv.increment(counter.failures, this.#windowMs); // first, so the sum never drops in between
    await this.#leaveChecking(counter);
  }

  async #leaveChecking(counter: Counter): Promise<void> {
    await this.kv.increment(counter.checking, this.#windowMs, -1);
  }

  async #refusal(counter: Counter): Promise<ApiError> {
    const seconds = Math.max(1, Math.ceil((await this.kv.ttl(counter.failures)) / 1000));
    return new ApiError('303', `too many failed logins, try again in ${seconds} seconds`, { headers: { 'retry-after': String(seconds) } });
  }
}
