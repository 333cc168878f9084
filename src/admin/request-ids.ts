import { randomToken } from '../storage/ids.js';

/** A client's own request id is kept when it is at most 64 of these characters (PROTOCOL.md 6.12). */
const VALID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The `X-Request-Id` of each answer: the client's own when valid, else this instance's random prefix
 * and a counter (unique across instances and restarts without a random draw per request).
 */
export class RequestIds {
  readonly #prefix = randomToken(9);
  #count = 0;

  of(request: Request): string {
    const given = request.headers.get('x-request-id');
    return given !== null && VALID.test(given) ? given : `${this.#prefix}.${(++this.#count).toString(36)}`;
  }
}
