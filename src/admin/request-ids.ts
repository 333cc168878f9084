import type { InstanceMetrics } from './metrics.js';
import { withHeader } from '../http/light-response.js';
import type { Exchange } from '../http/exchange.js';
import { andThen, type MaybePromise } from '../maybe.js';
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

/** `answer` with every answer carrying its `X-Request-Id`, counted by `metrics` (when kept) once its headers are there. */
export function identifiedAnswers<C>(answer: (request: Request, context: C | undefined, exchange: Exchange) => MaybePromise<Response>, metrics: InstanceMetrics | undefined) {
  const ids = new RequestIds();
  return (request: Request, context: C | undefined, exchange: Exchange): MaybePromise<Response> => {
    const id = (exchange.requestId = ids.of(request));
    return andThen(answer(request, context, exchange), (response) => {
      const answered = exchange.identified ? response : withHeader(response, 'x-request-id', id);
      if (metrics) metrics.record(request, answered.status, exchange);
      return answered;
    });
  };
}
