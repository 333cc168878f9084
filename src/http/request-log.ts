import type { Exchange } from './exchange.js';
import { urlParts } from './request.js';
import { andThen, type MaybePromise } from '../maybe.js';

/** One request as the log sees it. Nothing in it comes from headers or bodies. */
export interface RequestLogEntry {
  method: string;
  /** The path as sent, the query's values replaced by `***` (they may carry codes, states or tokens). */
  path: string;
  /** HTTP status. */
  status: number;
  /** The envelope's `internalStatus`, or `-` for an answer that is not an envelope (a redirect, an encrypted login answer). */
  internalStatus: string;
  /** Milliseconds from the request's arrival to its answer's headers. */
  ms: number;
  /** The answer's `X-Request-Id` (PROTOCOL.md 6.12): the client's own when it sent a valid one. */
  requestId?: string;
}

/**
 * Where the request log goes: a function receiving the line (`POST /v1/login 200 0 3.1ms`) and its
 * parts, or a logger object whose `info(parts, line)` is called, as `pino` has it.
 */
export type RequestLogger = ((line: string, entry: RequestLogEntry) => void) | { info(entry: RequestLogEntry, line: string): void };

const MAX_PATH = 200;
const NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,31}$/;

/** The path and query of `url` for the log: every query value, and any item that is not `name=value`, is `***`. */
export function loggedPath(url: string): string {
  const { pathname, search } = urlParts(url);
  const path = pathname.length > MAX_PATH ? `${pathname.slice(0, MAX_PATH)}...` : pathname;
  if (search.length <= 1) return path;
  const items = search.slice(1).split('&');
  const shown = items.slice(0, 20).map((item) => {
    const name = item.split('=', 1)[0]!;
    return item.includes('=') && NAME.test(name) ? `${name}=***` : '***';
  });
  return `${path}?${shown.join('&')}${items.length > 20 ? '&...' : ''}`;
}

type Handler<C> = (request: Request, context: C | undefined, exchange: Exchange) => MaybePromise<Response>;

/** `handle` with one log entry per request, or `handle` itself when there is no logger. */
export function logRequests<C>(logger: RequestLogger | undefined, handle: Handler<C>): Handler<C> {
  if (!logger) return handle;
  const write = typeof logger === 'function' ? logger : (line: string, entry: RequestLogEntry) => logger.info(entry, line);
  return (request, context, exchange) => andThen(handle(request, context, exchange), (response) => logged(request, response, exchange));
  function logged(request: Request, response: Response, exchange: Exchange): Response {
    try {
      const ms = Math.round((performance.now() - exchange.started) * 10) / 10;
      const { requestId } = exchange;
      const entry: RequestLogEntry = { method: request.method.slice(0, 20), path: loggedPath(request.url), status: response.status, internalStatus: exchange.internalStatus ?? '-', ms };
      if (requestId !== undefined) entry.requestId = requestId;
      write(`${entry.method} ${entry.path} ${entry.status} ${entry.internalStatus} ${ms}ms${requestId === undefined ? '' : ` ${requestId}`}`, entry);
    } catch {
      // a failing logger never costs the client its answer
    }
    return response;
  }
}
