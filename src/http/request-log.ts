import type { Exchange } from './exchange.js';
import { urlParts } from './request.js';
import { andThen, type MaybePromise } from '../maybe.js';

/** One request as the log sees it. Nothing in it comes from headers or bodies. */
export interface RequestLogEntry {
  /** When the answer's headers were there, epoch ms. */
  time: number;
  method: string;
  /** The path as sent, the query's values replaced by `***` (they may carry codes, states or tokens). */
  path: string;
  /** The route template that answered (`/v1/object/:id`); absent when none matched or the service answered before routing. */
  route?: string;
  /** HTTP status. */
  status: number;
  /** The envelope's `internalStatus`, or `-` for an answer that is not an envelope (a redirect, an encrypted login answer). */
  internalStatus: string;
  /** Milliseconds from the request's arrival to its answer's headers. */
  ms: number;
  /** The answer's `X-Request-Id` (PROTOCOL.md 6.12): the client's own when it sent a valid one. */
  requestId?: string;
  /** The session's user name, when the request had a session. */
  user?: string;
  /** The trace (32 hex digits) and span (16) of the request's server span, when an OpenTelemetry SDK records them. */
  traceId?: string;
  spanId?: string;
}

/**
 * Where the request log goes: a function receiving the line (`2026-11-27T19:30:00.000Z POST /v1/login
 * 200 0 3.1ms k2Jd9.1`) and its parts, or a logger object whose `info(parts, line)` is called, as
 * `pino` has it. `jsonRequestLog(write)` makes a function that writes pino's JSON lines instead.
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

/** The text line of an entry: time, method, path, status, internalStatus, duration, request id. */
function textLine(entry: RequestLogEntry): string {
  const id = entry.requestId === undefined ? '' : ` ${entry.requestId}`;
  return `${isoTime(entry.time)} ${entry.method} ${entry.path} ${entry.status} ${entry.internalStatus} ${entry.ms}ms${id}`;
}

/** The second whose ISO text (up to its `.`) was made last: lines of the same second reuse it. */
let isoSecond = NaN;
let isoPrefix = '';

/** `new Date(time).toISOString()`, the date and time of day made once per second. */
function isoTime(epochMs: number): string {
  const time = Math.floor(epochMs);
  const second = Math.floor(time / 1000);
  if (second !== isoSecond) {
    isoPrefix = new Date(second * 1000).toISOString().slice(0, 20);
    isoSecond = second;
  }
  return `${isoPrefix}${String(time - second * 1000).padStart(3, '0')}Z`;
}

/**
 * An entry as one JSON line in the field names of `pino` and `pino-http`: `level` (30, info), `time`
 * (epoch ms) and `msg` as pino writes them; `req` (`id`, `method`, `url`), `res` (`statusCode`) and
 * `responseTime` (ms) as pino-http's serializers, `reqId` as its request logger binds the id; `trace_id`
 * and `span_id` as OpenTelemetry's pino instrumentation adds them. `req.route`, `internalStatus` and
 * `user` are odbrest's own.
 */
export function jsonLogLine(entry: RequestLogEntry, bindings?: LogBindings): string {
  const req: Record<string, string> = { method: entry.method, url: entry.path };
  if (entry.requestId !== undefined) req.id = entry.requestId;
  if (entry.route !== undefined) req.route = entry.route;
  return JSON.stringify({
    level: 30,
    time: entry.time,
    pid: bindings?.pid,
    hostname: bindings?.hostname,
    reqId: entry.requestId,
    req,
    res: { statusCode: entry.status },
    internalStatus: entry.internalStatus,
    responseTime: entry.ms,
    user: entry.user,
    trace_id: entry.traceId,
    span_id: entry.spanId,
    msg: entry.status >= 500 ? 'request errored' : 'request completed',
  });
}

/** What pino binds to every line of a process: its id and the machine's name (the host gives them; the core reads no process). */
export interface LogBindings {
  pid?: number;
  hostname?: string;
}

/**
 * A request logger writing each request as one JSON line (`jsonLogLine`) to `write`:
 * `logger: jsonRequestLog(console.log)`; `bindings` (`{pid, hostname}`) are added to each line as pino does.
 */
export function jsonRequestLog(write: (line: string) => void, bindings?: LogBindings): RequestLogger {
  return (_line, entry) => write(jsonLogLine(entry, bindings));
}

/** An error as one pino line: level 50, `err` as pino's serializer gives it (`type`, `message`, `stack`), and the request's `reqId`. */
export function jsonErrorLine(error: unknown, requestId: string | undefined, time: number, bindings?: LogBindings): string {
  const err = error instanceof Error ? { type: error.name, message: error.message, stack: error.stack } : { type: typeof error, message: String(error) };
  return JSON.stringify({ level: 50, time, pid: bindings?.pid, hostname: bindings?.hostname, reqId: requestId, err, msg: err.message });
}

type Handler<C> = (request: Request, context: C | undefined, exchange: Exchange) => MaybePromise<Response>;

/** `handle` with one log entry per request (its time from `now`, the service's clock), or `handle` itself when there is no logger. */
export function logRequests<C>(logger: RequestLogger | undefined, now: () => number, handle: Handler<C>): Handler<C> {
  if (!logger) return handle;
  const write = typeof logger === 'function' ? logger : (line: string, entry: RequestLogEntry) => logger.info(entry, line);
  return (request, context, exchange) => andThen(handle(request, context, exchange), (response) => logged(request, response, exchange));
  function logged(request: Request, response: Response, exchange: Exchange): Response {
    try {
      const ms = Math.round((performance.now() - exchange.started) * 10) / 10;
      const entry: RequestLogEntry = { time: now(), method: request.method.slice(0, 20), path: loggedPath(request.url), status: response.status, internalStatus: exchange.internalStatus ?? '-', ms };
      if (exchange.route !== undefined) entry.route = exchange.route;
      if (exchange.requestId !== undefined) entry.requestId = exchange.requestId;
      if (exchange.session !== undefined) entry.user = exchange.session.user;
      if (exchange.traceId !== undefined) entry.traceId = exchange.traceId;
      if (exchange.spanId !== undefined) entry.spanId = exchange.spanId;
      write(textLine(entry), entry);
    } catch {
      // a failing logger never costs the client its answer
    }
    return response;
  }
}
