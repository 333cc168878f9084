import { andThen, type MaybePromise } from '../maybe.js';

/** Cross-origin requests from browsers (PROTOCOL.md 1.5). Off unless origins are listed. */
export interface CorsOptions {
  /** Origins whose pages may call the service, each as `scheme://host[:port]`, e.g. `https://app.example.com`. */
  origins: readonly string[];
  /** How long a browser may keep a preflight's answer, in seconds. Default 600. */
  maxAgeSeconds?: number;
}

const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE';
const ALLOW_HEADERS = 'appkey, sessionId, Authorization, Content-Type, Secure-Token, Secure-Counter, Secure-Signature';
const EXPOSE_HEADERS = 'Encrypted, Secure-Counter, Secure-Signature, Retry-After, Login-Signature';

/**
 * Answers preflights for listed origins itself (`204`, no `appkey`) and adds the CORS headers to every
 * answer to a listed origin. Credentials travel in headers, never cookies: `Allow-Credentials` is never
 * sent. An unlisted origin gets no CORS header; every answer says it varies by `Origin`, so a shared
 * cache never hands one origin's answer to another.
 */
export class Cors {
  readonly #origins: ReadonlySet<string> | undefined;
  readonly #maxAge: string;

  constructor(options?: CorsOptions) {
    if (options === undefined) {
      this.#maxAge = '';
      return;
    }
    for (const origin of options.origins) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(origin);
      } catch {}
      if (parsed?.origin !== origin || parsed.origin === 'null') {
        throw new Error(`cors.origins: ${JSON.stringify(origin)} is not an origin (scheme://host[:port], no path or trailing slash)`);
      }
    }
    const maxAge = options.maxAgeSeconds ?? 600;
    if (!Number.isSafeInteger(maxAge) || maxAge < 0) throw new Error('cors.maxAgeSeconds must be a whole number of seconds');
    this.#origins = new Set(options.origins);
    this.#maxAge = String(maxAge);
  }

  /** A preflight to a route (`serves`) is answered here; any other request by `answer`, with CORS headers added. */
  handle(request: Request, serves: () => boolean, answer: () => MaybePromise<Response>): MaybePromise<Response> {
    if (!this.#origins) return answer();
    const origin = request.headers.get('origin');
    const listed = origin !== null && this.#origins.has(origin);
    if (listed && request.method === 'OPTIONS' && request.headers.has('access-control-request-method') && serves()) {
      return new Response(null, {
        status: 204,
        headers: {
          'access-control-allow-origin': origin,
          'access-control-allow-methods': ALLOW_METHODS,
          'access-control-allow-headers': ALLOW_HEADERS,
          'access-control-max-age': this.#maxAge,
          vary: 'Origin',
        },
      });
    }
    const headers: Record<string, string> = listed ? { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSE_HEADERS } : {};
    return andThen(answer(), (response) => withHeaders(response, headers));
  }
}

/** `response` with `headers` set and `Origin` added to `Vary`; a copy when its headers are immutable. */
function withHeaders(response: Response, headers: Record<string, string>): Response {
  let target = response;
  try {
    target.headers.append('vary', 'Origin');
  } catch {
    target = new Response(response.body, { status: response.status, statusText: response.statusText, headers: response.headers });
    target.headers.append('vary', 'Origin');
  }
  for (const [name, value] of Object.entries(headers)) target.headers.set(name, value);
  return target;
}
