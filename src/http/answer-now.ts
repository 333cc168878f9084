/**
 * `answerNow`: a service's answer without the promise `Service.fetch` wraps it in, where the route
 * has it at once (the read path). A module of its own: it names the request context, which the
 * light answers' module must not (src/http/request.ts imports that one).
 */
import type { MaybePromise } from '../maybe.js';
import type { RequestContext } from './request.js';

const ANSWER_NOW: unique symbol = Symbol.for('odbrest.answerNow') as never;

/** A service's answer without the promise `fetch` wraps it in (see `answerNow`). */
type AnswerNow = (request: Request, context?: RequestContext) => MaybePromise<Response>;

/** Gives `service` the answer `answerNow` uses (`createService` does). */
export function withAnswerNow<T extends object>(service: T, answer: AnswerNow): T {
  return Object.defineProperty(service, ANSWER_NOW, { value: answer });
}

/**
 * The service's answer to a request, the `Response` itself where the route answers at once (the read
 * path with its data at hand) and a promise otherwise: `service.fetch` without the promise turn it
 * costs when the answer is at hand. For adapters that write answers themselves (Node's). Never throws.
 */
export function answerNow(service: { fetch(request: Request, context?: RequestContext): Promise<Response> }, request: Request, context?: RequestContext): MaybePromise<Response> {
  const now = (service as Partial<Record<typeof ANSWER_NOW, AnswerNow>>)[ANSWER_NOW];
  return now ? now(request, context) : service.fetch(request, context);
}
