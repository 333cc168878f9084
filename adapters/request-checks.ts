import { answerNow, ApiError, errorResponse, type MaybePromise, type RequestContext, type Service } from '../src/index.js';

/**
 * What every adapter checks before the service sees a request. Runtimes and frameworks build the
 * request's URL from the `Host` header and the request-target; some simply concatenate the two (Deno,
 * and our own Node conversion did), so `Host: x/v1/object/OTHER?` moved the routed path into the host
 * and a host app's path checks saw another path than the service routed. A `Host` that is anything
 * but `host[:port]` is refused here, so the path always comes from the request-target.
 */

/** RFC 9110 7.2 `Host`: a name (letters, digits, `-._~`), an IPv4 or a bracketed IPv6 literal; a port. */
const HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;

/**
 * A `Host` the URL parser keeps as it is: lower-case DNS labels ending in a letter-led one (so never
 * read as an IPv4 address), no punycode, or a canonical IPv4 address; a port without leading zeros.
 * It is valid without asking the parser (anything else is checked the slow way).
 */
const PLAIN_HOST =
  /^(?:(?:(?!xn--)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*(?!xn--)[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))(?::([1-9]\d{0,4}))?$/;
const ABSOLUTE = /^https?:\/\//;

/** Whether `host` is a valid `Host` the URL parser keeps as it is (see `PLAIN_HOST`); with `secure`, not with the scheme's default port either. */
export function inParserForm(host: string, secure?: boolean): boolean {
  const match = PLAIN_HOST.exec(host);
  if (!match) return false;
  const port = match[1];
  return port === undefined || (Number(port) <= 65535 && (secure === undefined || port !== (secure ? '443' : '80')));
}

/** The `Host` value when it is a valid `host[:port]`, `undefined` when there is none; `400` otherwise. */
export function checkHost(value: string | null | undefined): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (inParserForm(value)) return value;
  const match = HOST.exec(value);
  const port = match?.[1];
  if (!match || (port !== undefined && Number(port) > 65535) || !URL.canParse(`http://${value}/`)) {
    throw new ApiError('400', 'the Host header must be host or host:port');
  }
  return value;
}

/** The envelope answering an `ApiError` an adapter raised before the service was asked; anything else is rethrown. */
export function refusalOf(error: unknown): Response {
  if (error instanceof ApiError) return errorResponse(error);
  throw error;
}

/**
 * The service's answer to a request an adapter refused with `error` (an `ApiError`; anything else is
 * rethrown): answered through the service like any failure, so it carries an `X-Request-Id` and reaches
 * the request log, the metrics and `/v1/admin/requests` (issue 50, item 8). The service sees a stand-in
 * with the method (GET when a web Request cannot carry it) and the client's `X-Request-Id`, nothing
 * else of a request that could not be read.
 */
export function answerRefusal(service: Service, error: unknown, method: string | undefined, requestId: string | null | undefined, context: RequestContext): Promise<Response> {
  if (!(error instanceof ApiError)) throw error;
  const headers = new Headers();
  try {
    if (requestId) headers.set('x-request-id', requestId);
  } catch {
    // not a valid header value: the service makes an id of its own
  }
  let request: Request;
  try {
    request = new Request('http://localhost/', { method: method ?? 'GET', headers });
  } catch {
    request = new Request('http://localhost/', { headers });
  }
  return service.fetch(request, { ...context, refused: error });
}

/**
 * The request as the service must see it, for runtimes that hand over a web Request (Bun, Deno, Next):
 * the `Host` checked, and a URL that is absolute (Bun leaves it relative when no `Host` was sent).
 */
export function checkWebRequest(request: Request): Request {
  checkHost(request.headers.get('host'));
  // a web Request's URL is absolute, but for Bun's without a Host
  if (ABSOLUTE.test(request.url) || URL.canParse(request.url)) return request;
  return new Request(new URL(request.url, 'http://localhost'), request);
}

/**
 * The `400` envelope for a runtime's request whose `Host` is not `host[:port]`, else `undefined`. A
 * host app that routes by `request.url` beside the service calls it first: on Deno such a `Host`
 * changes the URL's path (see examples/deno).
 */
export function refuseMalformedHost(request: Request): Response | undefined {
  try {
    checkHost(request.headers.get('host'));
    return undefined;
  } catch (error) {
    return refusalOf(error);
  }
}

/** `service.fetch` for a runtime's web Request, a malformed one answered with its envelope. */
export function fetchChecked(service: Service, request: Request, context: RequestContext): Promise<Response> {
  return Promise.resolve(answerChecked(service, request, context));
}

/**
 * `fetchChecked`'s answer without the promise where the service answers at once (see `answerNow`),
 * for runtimes whose server takes a `Response` as well as a promise of one (Bun, Deno): Bun writes
 * a `Response` handed back in the handler's own turn without waiting on a promise.
 */
export function answerChecked(service: Service, request: Request, context: RequestContext): MaybePromise<Response> {
  let checked: Request;
  try {
    checked = checkWebRequest(request);
  } catch (error) {
    return answerRefusal(service, error, request.method, request.headers.get('x-request-id'), context);
  }
  return answerNow(service, checked, context);
}
