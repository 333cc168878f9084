/** A failure the service answered with an envelope: `internalStatus` is its code (PROTOCOL.md 1.4). */
export class OdbRestError extends Error {
  readonly internalStatus: string;
  /** The HTTP status of the answer. */
  readonly httpStatus: number;
  /** Seconds from `Retry-After` (codes 303 and 503), when sent. */
  readonly retryAfter: number | undefined;

  constructor(internalStatus: string, httpStatus: number, message: string, retryAfter?: number) {
    super(message);
    this.name = 'OdbRestError';
    this.internalStatus = internalStatus;
    this.httpStatus = httpStatus;
    this.retryAfter = retryAfter;
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
