import type { Answer } from './envelope.js';

/**
 * What answering one request found out, for those who report on it (the request log, the instance's
 * metrics, telemetry): one record per request, made when it arrives and filled in as it is answered,
 * handed along with the request (never looked up by it).
 */
export interface Exchange {
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  /** The `X-Request-Id` the answer carries (PROTOCOL.md 6.12). */
  requestId?: string;
  /** Whether the answer was made with its `X-Request-Id` already (else it is added to the Response). */
  identified?: boolean;
  /** The template of the route that answered (`/v1/object/:id`); absent when none matched. */
  route?: string;
  /** The envelope's `internalStatus`; absent for an answer that is not an envelope. */
  internalStatus?: string;
  /** The session the request was answered for, once its credential was checked. */
  session?: { id: string; user: string };
  /** The trace (32 hex digits) and span (16) of the request's server span, when an OpenTelemetry SDK records them. */
  traceId?: string;
  spanId?: string;
}

/**
 * Notes `answer` on the request's record, with the route that gave it and the session it was answered
 * for, where one is known (a refusal before routing keeps none); answers `answer`. An answer that is
 * not an envelope (an encrypted login answer) keeps the internalStatus noted before it.
 */
export function noteAnswer<A extends Answer>(exchange: Exchange | undefined, answer: A, route?: string, session?: Exchange['session']): A {
  if (!exchange) return answer;
  if (route !== undefined) exchange.route = route;
  if (session !== undefined) exchange.session = session;
  if ('internalStatus' in answer && answer.internalStatus !== undefined) exchange.internalStatus = answer.internalStatus;
  return answer;
}

/** A new record for a request arriving now. */
export function newExchange(): Exchange {
  return { started: performance.now(), requestId: undefined, identified: false, route: undefined, internalStatus: undefined, session: undefined, traceId: undefined, spanId: undefined };
}
