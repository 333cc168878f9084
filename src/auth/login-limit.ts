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
 * keeps its place (it is a failure), a successful one gives it back, and a refused attempt takes none
 * (it was never checked), so refusals never extend a block.
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
    const addressKey = address === undefined ? undefined : kvKeys.failedLoginsOfAddress(address);
    const userKey = kvKeys.failedLoginsOfUser(user);
    if (addressKey) await this.#take(addressKey, this.#perAddress);
    try {
      await this.#take(userKey, this.#perUser);
    } catch (error) {
      if (addressKey) await this.#giveBack(addressKey);
      throw error;
    }
    return {
      // a success clears the user's failures and gives the address its place back
      succeeded: async () => void (await Promise.all([this.kv.delete(userKey), addressKey && this.#giveBack(addressKey)])),
      // neither a success nor a failure: both places back, the user's failures kept
      withdrawn: async () => void (await Promise.all([this.#giveBack(userKey), addressKey && this.#giveBack(addressKey)])),
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

  /** One place in the count at `key`, or `303` (and no place taken) when all `limit` are taken. */
  async #take(key: string, limit: number): Promise<void> {
    if ((await this.kv.increment(key, this.#windowMs)) <= limit) return;
    const refusal = await this.#refusal(key);
    await this.#giveBack(key);
    throw refusal;
  }

  async #giveBack(key: string): Promise<void> {
    await this.kv.increment(key, this.#windowMs, -1);
  }

  async #refusal(key: string): Promise<ApiError> {
    const seconds = Math.max(1, Math.ceil((await this.kv.ttl(key)) / 1000));
    return new ApiError('303', `too many failed logins, try again in ${seconds} seconds`, { headers: { 'retry-after': String(seconds) } });
  }
}
