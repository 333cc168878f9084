import { base64urlnopad } from '@scure/base';
import type { Session } from '../auth/sessions.js';
import { isJsonContentType, parseJson } from './body.js';
import { ApiError } from './errors.js';
import type { Exchange } from './exchange.js';

/** What an adapter knows about the connection. */
export interface RequestContext {
  /** The peer address of the TCP connection (not a forwarded header). */
  clientAddress?: string;
  /**
   * The adapter writes the answer itself and reads a JSON answer's text with `lightAnswer` (Node's
   * adapters do): the service may answer with a `Response` that becomes a web one only when used as one.
   */
  lightResponses?: boolean;
  /**
   * The adapter's own refusal of a request it could not convert (a malformed `Host` or request-target:
   * an `ApiError`). The service answers it as it answers any failure, with an `X-Request-Id`, in the
   * request log, the metrics and `/v1/admin/requests`; the request is then a stand-in (see
   * `refusedRequest` in adapters/request-checks.ts) carrying only the method and `X-Request-Id`.
   */
  refused?: Error;
}

/**
 * A request as the routes see it: the path relative to the service root (base path and alias
 * removed), the body already read within the size limit, and (for secure transport) already decrypted.
 */
export interface ApiRequest {
  method: string;
  /** Path relative to the service root, e.g. `/v1/object/A1B2C3D4`. */
  path: string;
  /** Path and query exactly as sent, relative to the service root (signed by the secure transport). */
  target: string;
  searchParams: URLSearchParams;
  headers: Headers;
  /** The original web request (its body is already consumed). */
  raw: Request;
  /** Client address: the connection's, or the first `X-Forwarded-For` entry when `trustProxy` is set. */
  clientAddress: string | undefined;
  /** The adapter writes answers itself (`RequestContext.lightResponses`): a text or byte answer may be a light `Response`. */
  lightResponses?: boolean;
  /** Body text ('' for none). */
  bodyText: string;
  /**
   * The unread body of a `rawBody` route: the request's stream, or under the secure transport its
   * decrypted bytes. `null` or absent for none (a `/v1/multi` item has none).
   */
  body?: ReadableStream<Uint8Array> | null;
  /** Set when the body arrived through the secure transport (content type already checked there). */
  secure: boolean;
  /** The authenticated session, once the route's credential check has run. */
  session?: Session;
  /** Route parameters, URL-decoded. */
  params: Record<string, string>;
  /** Set for a `/v1/multi` item: routes not allowed as items refuse it (`400`). */
  batchItem?: boolean;
  /** What the request log, metrics and telemetry learn of the request (absent for a `/v1/multi` item: its outer request's is told). */
  exchange?: Exchange;
}

/**
 * A value worked out once per request and shared by everything that answers it (the access guard,
 * the parsed serialization): kept on the request itself, where a WeakMap entry per request would
 * cost the collector more than the work it saves.
 */
export class RequestMemo<T> {
  readonly #key = Symbol('memo');

  get(request: ApiRequest): T | undefined {
    return (request as unknown as Record<symbol, T | undefined>)[this.#key];
  }

  set(request: ApiRequest, value: T): T {
    (request as unknown as Record<symbol, T>)[this.#key] = value;
    return value;
  }
}

/** The JSON body: `undefined` when empty; `415` for a body that is not declared as JSON. */
export function readJson(request: ApiRequest): unknown {
  if (request.bodyText.trim() === '') return undefined;
  if (!request.secure && !isJsonContentType(request.headers.get('content-type'))) {
    throw new ApiError('415', 'Content-Type must be application/json');
  }
  return parseJson(request.bodyText);
}

/** The JSON body, which must be an object. */
export function readJsonObject(request: ApiRequest, what = 'request body'): Record<string, unknown> {
  return asJsonObject(readJson(request), what);
}

/** `value` if it is a JSON object (not an array, not null), else `400` naming `what`. */
export function asJsonObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError('400', `${what} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

/**
 * The routes' view of a web request whose path lies under the service root (`path` is relative to
 * it). The client address is the connection's, or the first `X-Forwarded-For` entry when the host
 * trusts its proxy.
 */
export function toApiRequest(request: Request, search: string, path: string, context: RequestContext, trustProxy: boolean, exchange?: Exchange): ApiRequest {
  const forwarded = trustProxy ? request.headers.get('x-forwarded-for')?.split(',')[0]?.trim() : undefined;
  return {
    method: request.method.toUpperCase(),
    path,
    target: path + searchAsSent(request.url),
    searchParams: new URLSearchParams(search),
    headers: request.headers,
    raw: request,
    clientAddress: forwarded || context.clientAddress,
    lightResponses: context.lightResponses === true,
    bodyText: '',
    body: request.body,
    secure: false,
    params: {},
    exchange,
  };
}

/**
 * The path and query of a request's URL (`search` with its `?`, or `''`), read off the string: a
 * request's `url` is already in the URL parser's form (a web `Request` serializes it; the Node
 * adapter checks it), so parsing it again would answer the same at several times the cost. A
 * fragment is left out, as `URL` leaves it out of both.
 */
export function urlParts(href: string): { pathname: string; search: string } {
  const authority = href.indexOf('//');
  const start = authority < 0 ? -1 : href.indexOf('/', authority + 2);
  if (start < 0) return { pathname: '/', search: '' };
  const hash = href.indexOf('#', start);
  const end = hash < 0 ? href.length : hash;
  const query = href.indexOf('?', start);
  if (query < 0 || query > end) return { pathname: href.slice(start, end), search: '' };
  return { pathname: href.slice(start, query), search: query + 1 < end ? href.slice(query, end) : '' };
}

/** The query of a URL as sent, `?` included: a bare `?` stays (the URL parser's `search` drops it). */
export function searchAsSent(href: string): string {
  const start = href.indexOf('?');
  return start < 0 ? '' : href.slice(start);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A query that is exactly `qb64=<value>` (PROTOCOL.md 1.1) is replaced by the query it encodes: base64url
 * or standard base64, with or without `=` padding, its characters possibly percent-encoded (`%3D%3D`);
 * a bad encoding is `400`. `target` keeps the query as sent (the secure transport signed that).
 */
export function decodeQb64(request: ApiRequest): void {
  const encoded = /^\?qb64=([^&]*)$/.exec(request.target.slice(request.path.length))?.[1];
  if (encoded === undefined) return;
  let query: string;
  try {
    // any character may come percent-encoded; what it decodes to must still be of either alphabet
    const text = encoded.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const { body, padding } = /^(?<body>[A-Za-z0-9_+/-]*)(?<padding>={0,2})$/.exec(text)?.groups ?? {};
    if (body === undefined || (padding && (body.length + padding.length) % 4 !== 0)) throw new Error('not base64');
    query = utf8.decode(base64urlnopad.decode(body.replace(/\+/g, '-').replace(/\//g, '_')));
  } catch {
    throw new ApiError('400', 'qb64 must be the base64 or base64url encoding (padded or not) of a UTF-8 query string');
  }
  request.searchParams = new URLSearchParams(query);
}
