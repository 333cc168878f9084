import { sha256 } from '@noble/hashes/sha2.js';
import { base64urlnopad } from '@scure/base';
import { randomToken } from '../storage/ids.js';
import { kvKeys } from '../storage/keys.js';
import type { KeyValueStore } from '../storage/types.js';

/** How long a reset token is valid (PROTOCOL.md 2.8). */
export const RESET_TOKEN_MS = 15 * 60_000;
/** A token is 256 bits, base64url without padding: 43 characters. */
const TOKEN_FORM = /^[A-Za-z0-9_-]{43}$/;
/** The principal slot an unknown user's request writes, so that it costs what a known user's does. */
const NOBODY = '~nobody';

const encoder = new TextEncoder();
const hashOf = (token: string) => base64urlnopad.encode(sha256(encoder.encode(token)));

interface StoredReset {
  /** The principal, or null for a request naming no user (made only so that it takes the same time). */
  p: string | null;
  /** Epoch ms when it ends. */
  e: number;
}

/** A reset token found by `peek`, not yet used. */
export interface PendingReset {
  principalId: string;
  hash: string;
}

/**
 * Password reset tokens in the key-value store (PROTOCOL.md 2.8): 256 bits from the CSPRNG, kept
 * only as their SHA-256 (a fast hash suffices for a random 256-bit value), valid 15 minutes, used at
 * most once (`take` is atomic, so of any number of confirmations at once exactly one gets it), and
 * the newest of a user voids the older ones.
 */
export class PasswordResets {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly now: () => number,
  ) {}

  /** A new token for `principalId`, or for nobody: both cost the same two writes. */
  async issue(principalId: string | undefined): Promise<{ token: string; expiresAt: number }> {
    const token = randomToken(32);
    const hash = hashOf(token);
    const expiresAt = this.now() + RESET_TOKEN_MS;
    const stored: StoredReset = { p: principalId ?? null, e: expiresAt };
    await Promise.all([
      this.kv.set(kvKeys.passwordReset(hash), JSON.stringify(stored), RESET_TOKEN_MS),
      this.kv.set(kvKeys.passwordResetOf(principalId ?? NOBODY), hash, RESET_TOKEN_MS),
    ]);
    return { token, expiresAt };
  }

  /** The user a token would reset, without using it; `undefined` for a token unknown, used, voided or expired. */
  async peek(token: string): Promise<PendingReset | undefined> {
    if (!TOKEN_FORM.test(token)) return undefined;
    const hash = hashOf(token);
    return this.#valid(hash, await this.kv.get(kvKeys.passwordReset(hash)));
  }

  /** Uses the token: true for exactly one caller while it is valid. */
  async take(pending: PendingReset): Promise<boolean> {
    return (await this.#valid(pending.hash, await this.kv.take(kvKeys.passwordReset(pending.hash)))) !== undefined;
  }

  async #valid(hash: string, raw: string | undefined): Promise<PendingReset | undefined> {
    if (raw === undefined) return undefined;
    const stored = JSON.parse(raw) as StoredReset;
    if (stored.p === null || stored.e <= this.now()) return undefined;
    // a newer token of the user voids this one
    if ((await this.kv.get(kvKeys.passwordResetOf(stored.p))) !== hash) return undefined;
    return { principalId: stored.p, hash };
  }
}
