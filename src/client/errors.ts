import { brandClass } from '../brand.js';
import type { InternalStatus } from './types.js';

/**
 * Every error class of the client is branded (src/brand.ts): `instanceof` also holds for an error
 * made by another copy of odbrest/client (its CommonJS build beside its ESM one, or two versions).
 */

/** A failure the service answered with an envelope: `internalStatus` is its code (PROTOCOL.md 1.4). */
export class OdbRestError extends Error {
  readonly internalStatus: InternalStatus;
  /** The HTTP status of the answer. */
  readonly httpStatus: number;
  /** Seconds from `Retry-After` (codes 303 and 503), when sent. */
  readonly retryAfter: number | undefined;
  /** The failure envelope's `data` when it says more than `{}` (a declaration's `409`: `{Violations, Examples}`, PROTOCOL.md 6.12). */
  readonly data: Record<string, unknown> | undefined;

  constructor(internalStatus: InternalStatus, httpStatus: number, message: string, retryAfter?: number, data?: Record<string, unknown>) {
    super(message);
    this.name = 'OdbRestError';
    this.internalStatus = internalStatus;
    this.httpStatus = httpStatus;
    this.retryAfter = retryAfter;
    this.data = data;
  }
}

/** `409`: the object changed since the client read it (its `~StoreTime` differs); read it again and retry. */
export class OdbRestConflictError extends OdbRestError {
  constructor(httpStatus: number, message: string, data?: Record<string, unknown>) {
    super('409', httpStatus, message, undefined, data);
    this.name = 'OdbRestConflictError';
  }
}

/**
 * An answer the client refuses: not an envelope, or (secure transport) unencrypted where it must be
 * encrypted, signed wrongly, numbered for another request, or not decryptable. Never retried blindly.
 */
export class OdbRestProtocolError extends Error {
  readonly httpStatus: number;

  constructor(message: string, httpStatus: number) {
    super(message);
    this.name = 'OdbRestProtocolError';
    this.httpStatus = httpStatus;
  }
}

/**
 * A refusal of a secure request that came back unencrypted and unsigned, as PROTOCOL.md 4 allows
 * for refusals of the message itself: `205` (rejected), `201`/`204` (no live session), `413` (body too
 * large), `503` (storage unavailable before the message was accepted). Nothing authenticates it: an
 * attacker on the path could have sent it, so its claims (message, `Retry-After`) are not the
 * server's word and no data is taken from it. Retrying, or logging in again for `201`/`204`, is safe.
 */
export class OdbRestUnauthenticatedRefusal extends Error {
  /** The code the answer claims. */
  readonly internalStatus: InternalStatus;
  readonly httpStatus: number;
  /** The `statusMessage` the answer claims (possibly forged; not part of `message`). */
  readonly claimedMessage: string;

  constructor(internalStatus: InternalStatus, httpStatus: number, claimedMessage: string) {
    super(
      `unauthenticated refusal ${internalStatus} (HTTP ${httpStatus}): the answer was neither encrypted nor signed, ` +
        'so it may have been forged by anyone on the path',
    );
    this.name = 'OdbRestUnauthenticatedRefusal';
    this.internalStatus = internalStatus;
    this.httpStatus = httpStatus;
    this.claimedMessage = claimedMessage;
  }
}

/** What a two-factor refusal asks of the app (PROTOCOL.md 2.6). */
export type TwoFactorNeed =
  /** `340`: an application requires two-factor login and the user has none: enrol (`client.twoFactor`), then log in again. */
  | 'enrolment'
  /** `341`: ask the user for the code of their authenticator (or a backup code) and log in again with `twoFactorToken`. */
  | 'code'
  /** `342`: the code was wrong, expired or already used (it counts as a failed login); ask again. */
  | 'new-code';

const NEEDS: Record<string, TwoFactorNeed> = { '340': 'enrolment', '341': 'code', '342': 'new-code' };

/**
 * A login refused for its second factor (`340`, `341`, `342`). After `340` the client already uses the
 * session the service gave for the set-up, which may only call `client.twoFactor` and `logout`.
 */
export class TwoFactorError extends OdbRestError {
  readonly need: TwoFactorNeed;
  /** `340` only: the session for the two-factor set-up. */
  readonly setupSessionId: string | undefined;

  constructor(internalStatus: InternalStatus, httpStatus: number, message: string, setupSessionId?: string) {
    super(internalStatus, httpStatus, message);
    this.name = 'TwoFactorError';
    this.need = NEEDS[internalStatus]!;
    this.setupSessionId = setupSessionId;
  }

  static isCode(internalStatus: string): boolean {
    return Object.hasOwn(NEEDS, internalStatus);
  }
}

/**
 * The service could not be reached: the fetch itself failed (connection refused or reset, DNS, TLS,
 * an abort or timeout of a `fetch` the app passed). No answer came, so nothing says whether the
 * request took effect. `cause` is what `fetch` threw; the message names the method and the address
 * without its query, and never a header or body (where credentials travel).
 */
export class OdbRestNetworkError extends Error {
  readonly method: string;
  /** The address asked for: origin and path, without user info or query. */
  readonly url: string;

  constructor(method: string, url: string, cause: unknown) {
    const address = new URL(url);
    const where = address.origin + address.pathname;
    super(`${method} ${where}: the service could not be reached (${failureReason(cause)})`, { cause });
    this.name = 'OdbRestNetworkError';
    this.method = method;
    this.url = where;
  }
}

/** A short, secret-free reason: the system error code (`ECONNREFUSED`, `ENOTFOUND`, ...) or the error's name. */
function failureReason(cause: unknown): string {
  const seen: unknown[] = [];
  for (let error = cause; typeof error === 'object' && error !== null && !seen.includes(error); error = (error as { cause?: unknown }).cause) {
    seen.push(error);
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) return code;
  }
  const name = (cause as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && /^\w{1,40}$/.test(name) ? name : 'fetch failed';
}

brandClass(OdbRestError, 'client.OdbRestError');
brandClass(OdbRestConflictError, 'client.OdbRestConflictError');
brandClass(OdbRestProtocolError, 'client.OdbRestProtocolError');
brandClass(OdbRestUnauthenticatedRefusal, 'client.OdbRestUnauthenticatedRefusal');
brandClass(TwoFactorError, 'client.TwoFactorError');
brandClass(OdbRestNetworkError, 'client.OdbRestNetworkError');
