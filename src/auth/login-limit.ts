import { ApiError } from '../http/errors.js';
import { kvKeys } from '../storage/keys.js';
import type { KeyValueStore } from '../storage/types.js';

export interface LoginLimitOptions {
  /** Failed logins per user name within the window before further attempts are refused. Default 5. */
  perUser?: number;
  /** Failed logins per client address within the window. Default 20. */
  perAddress?: number;
  /** Window length in ms, counted from the first attempt. Default 15 minutes. */
  windowMs?: number;
}

/** A login attempt that holds its place in the counts until its password check ends. */
export interface Admission {
  /** The password matched: the user's count is cleared and the address gets its place back. */
  succeeded(): Promise<void>;
  /**
   * The attempt ends without a verdict (`341`: the password matched, the second factor is still to
   * come): its places are given back, and the failures counted so far stay, so an attempt without a
   * code never clears the count of wrong codes.
   */
  withdrawn(): Promise<void>;
}

/**
 * The failed-login limit (PROTOCOL.md 2.4) in the KeyValueStore, so all instances share it. An attempt
 * takes its place in the address's and the user's counts with one atomic increment each BEFORE its
 * password is hashed, so that however many arrive at once (on one instance or on several sharing
 * Redis), at most the limit's number are ever checked in a window; the rest get `303`. A failed check
 * keeps its place (it is a failure), a successful one gives it back.
 */
export class LoginLimiter {
  readonly #perUser: number;
  readonly #perAddress: number;
  readonly #windowMs: number;

  constructor(
    private readonly kv: KeyValueStore,
    options: LoginLimitOptions = {},
  ) {
    this.#perUser = options.perUser ?? 5;
    this.#perAddress = options.perAddress ?? 20;
    this.#windowMs = options.windowMs ?? 15 * 60_000;
  }

  /** Takes a place for a login of `user` from `address`, or throws `303` when either has none left. */
  async admit(user: string, address: string | undefined): Promise<Admission> {
    if (address !== undefined) await this.#take(kvKeys.failedLoginsOfAddress(address), this.#perAddress);
    const userKey = kvKeys.failedLoginsOfUser(user);
    await this.#take(userKey, this.#perUser);
    const addressBack = () => (address === undefined ? undefined : this.kv.increment(kvKeys.failedLoginsOfAddress(address), this.#windowMs, -1));
    return {
      succeeded: async () => {
        await Promise.all([this.kv.delete(userKey), addressBack()]);
      },
      withdrawn: async () => {
        await Promise.all([this.kv.increment(userKey, this.#windowMs, -1), addressBack()]);
      },
    };
  }

  /** Throws `303` while the address has no attempt left (checked before work that comes before the user name is known). */
  async checkAddress(address: string | undefined): Promise<void> {
    if (address === undefined) return;
    const key = kvKeys.failedLoginsOfAddress(address);
    if (Number((await this.kv.get(key)) ?? 0) >= this.#perAddress) throw await this.#refusal(key);
  }

  /** Counts a failure of the address alone (a login that could not even be decrypted). */
  async addressFailed(address: string | undefined): Promise<void> {
    if (address !== undefined) await this.kv.increment(kvKeys.failedLoginsOfAddress(address), this.#windowMs);
  }

  async #take(key: string, limit: number): Promise<void> {
    if ((await this.kv.increment(key, this.#windowMs)) > limit) throw await this.#refusal(key);
  }

  async #refusal(key: string): Promise<ApiError> {
    const seconds = Math.max(1, Math.ceil((await this.kv.ttl(key)) / 1000));
    return new ApiError('303', `too many failed logins, try again in ${seconds} seconds`, { headers: { 'retry-after': String(seconds) } });
  }
}
