import { ApiError } from '../http/errors.js';
import type { KeyValueStore } from '../storage/types.js';

export interface LoginLimitOptions {
  /** Failed logins per user name within the window before further attempts are refused. Default 5. */
  perUser?: number;
  /** Failed logins per client address within the window. Default 20. */
  perAddress?: number;
  /** Window length in ms, counted from the first failure. Default 15 minutes. */
  windowMs?: number;
}

/** Failed-login counting (PROTOCOL.md 2.4) in the KeyValueStore, so all instances share it. */
export class LoginLimiter {
  readonly #perUser: number;
  readonly #perAddress: number;
  readonly #windowMs: number;

  constructor(private readonly kv: KeyValueStore, options: LoginLimitOptions = {}) {
    this.#perUser = options.perUser ?? 5;
    this.#perAddress = options.perAddress ?? 20;
    this.#windowMs = options.windowMs ?? 15 * 60_000;
  }

  #keys(user: string, address: string | undefined): Array<[string, number]> {
    const keys: Array<[string, number]> = [[`fail:user:${user.toLowerCase()}`, this.#perUser]];
    if (address) keys.push([`fail:addr:${address}`, this.#perAddress]);
    return keys;
  }

  /** Throws `303` while the user or the address is over its limit. */
  async check(user: string, address: string | undefined): Promise<void> {
    const keys = this.#keys(user, address);
    // Both counts at once: one store round trip instead of two on a networked store.
    const counts = await Promise.all(keys.map(([key]) => this.kv.get(key)));
    const over = keys.find(([, limit], i) => Number(counts[i] ?? 0) >= limit);
    if (!over) return;
    const seconds = Math.max(1, Math.ceil((await this.kv.ttl(over[0])) / 1000));
    throw new ApiError('303', `too many failed logins, try again in ${seconds} seconds`, {
      headers: { 'retry-after': String(seconds) },
    });
  }

  async recordFailure(user: string, address: string | undefined): Promise<void> {
    await Promise.all(this.#keys(user, address).map(([key]) => this.kv.increment(key, this.#windowMs)));
  }

  /** A successful login clears the user's count (the address count runs out with its window). */
  async recordSuccess(user: string): Promise<void> {
    await this.kv.delete(`fail:user:${user.toLowerCase()}`);
  }
}
