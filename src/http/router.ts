import { IttyRouter } from 'itty-router';
import type { GenericSchema, ObjectEntries, ObjectSchema } from 'valibot';
import type { Answer } from './envelope.js';
import { ApiError, clip, type StatusCode } from './errors.js';
import type { ApiRequest } from './request.js';
import type { MaybePromise } from '../maybe.js';

/**
 * Who may call a route: `none` (anyone with an app key), `session` (any logged-in session, also the
 * macro-only sessions of code 307), `objects` (logged-in sessions with at least one application).
 */
export type RouteAuth = 'none' | 'session' | 'objects';

/** A route's answer when it is not the JSON envelope (a redirect, file bytes, an encrypted login answer). */
export interface RawAnswer {
  status: number;
  /** Omitted for answers without a body (redirects, `304`). */
  contentType?: string;
  description: string;
  /** Response headers the answer carries, by name: what each says. */
  headers?: Readonly<Record<string, string>>;
  /** The answer is the error envelope of this code, at this HTTP status (a file route's `416`). */
  error?: StatusCode;
  /** A JSON answer's example for the OpenAPI document (its schema must accept it). */
  example?: unknown;
}

/** The query parameters a route reads: each entry a string schema (`parseQueryParams` in validate.ts). */
export type QuerySchema = ObjectSchema<ObjectEntries, undefined>;

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** itty-router pattern relative to the service root, e.g. `/v1/object/:id`. */
  path: string;
  auth: RouteAuth;
  /**
   * One line on what the route does. This and `body`, `bodyTypes`, `query`, `answer` and `rawAnswer`
   * are what the OpenAPI document (`GET /openapi.json`) says of the route.
   */
  summary: string;
  /** The JSON body, as the valibot schema the handler parses it with (`v.optional(...)` when it may be absent). */
  body?: GenericSchema;
  /** Media types of a body that is not JSON (uploads, form callbacks). */
  bodyTypes?: readonly string[];
  /** The query parameters, as the valibot schema the handler parses them with. */
  query?: QuerySchema;
  /** What `data` of the success envelope holds, in words. */
  answer?: string;
  /**
   * What `data` of the success envelope holds, as a valibot schema: the OpenAPI document's schema of
   * the answer (converted with `@valibot/to-json-schema`; the shared ones of openapi/schemas.ts become
   * `$ref`s). The test suite validates the demo's real answers against it.
   */
  answerSchema?: GenericSchema;
  /**
   * The `internalStatus` codes the route answers besides those every route of its kind may (the app
   * key's, the credential's, a body's: openapi/document.ts `errorCodes`), for the OpenAPI document.
   */
  errors?: readonly StatusCode[];
  /** The answers that are not the JSON envelope (beside it, when `answerSchema` is given too). */
  rawAnswer?: RawAnswer | readonly RawAnswer[];
  /**
   * Real examples of the JSON body and of the success answer's `data` (the demo's), for the OpenAPI
   * document; without them it derives each from the schema (its `examples`, else placeholders).
   */
  examples?: { body?: unknown; answer?: unknown };
  /** The OpenAPI tag the route is listed under; by default the group its path belongs to (openapi/document.ts `TAGS`). */
  tag?: string;
  /** What each path parameter is, by name, when its name does not say it. */
  params?: Readonly<Record<string, string>>;
  /** False for routes a browser or provider reaches without an `appkey` header (OAuth callbacks). */
  appKey?: boolean;
  /**
   * False for routes that are not allowed as `/v1/multi` items (logout, the batch itself). Routes
   * without a credential check (`auth: 'none'`: logins, keys, callbacks) never are.
   */
  batch?: boolean;
  /** Open also to the session a `340` answer gives, which may call nothing else (PROTOCOL.md 2.6). */
  twoFactorSetup?: boolean;
  /**
   * The route reads the body itself, as a stream (`request.body`): the service neither reads it as
   * text nor applies `maxBodyBytes` (file uploads, PROTOCOL.md 6.6).
   */
  rawBody?: boolean;
  /** Answers without a promise where everything it needs is at hand (the read path, PROTOCOL.md 6.1). */
  handler: (request: ApiRequest) => MaybePromise<Answer>;
}

/**
 * The routing table: finds the route for a request, or throws `404`/`405`. Routes can be added any time.
 *
 * itty-router compiles the path patterns (its `:param` syntax and its tolerance of a trailing slash);
 * the matching itself is done here, synchronously against the already parsed path. Going through
 * `router.fetch` parsed the URL again, built a query object and awaited per route (1-3 us of the
 * ~35 us of CPU an authenticated object read took).
 */
export class RouteTable {
  readonly #compiler = IttyRouter();
  readonly #entries: Array<{ route: Route; pattern: RegExp; prefix: string }> = [];

  add(routes: readonly Route[]): this {
    for (const route of routes) {
      this.#compiler[route.method.toLowerCase() as 'get'](route.path, () => undefined);
      const pattern = this.#compiler.routes[this.#compiler.routes.length - 1]![1];
      // the literal start every path of the pattern has (before its first parameter or wildcard), tested before the pattern
      const prefix = route.path.split(/[:*]/, 1)[0]!.replace(/\/+$/, '');
      this.#entries.push({ route, pattern, prefix });
    }
    return this;
  }

  /** Whether any route's pattern fits `path`, whatever its method (`match` answers it, if only with `405`). */
  fits(path: string): boolean {
    return this.#entries.some(({ pattern }) => pattern.test(path));
  }

  /** Whether a route of this table answers `method path` (whatever the order of the table). */
  answers(method: string, path: string): boolean {
    return this.#entries.some(({ route, pattern }) => route.method === method && pattern.test(path));
  }

  /** Whether the route that answers this request reads its body as a stream (`Route.rawBody`). */
  takesRawBody(request: ApiRequest): boolean {
    try {
      return this.match(request).route.rawBody === true;
    } catch {
      return false; // the dispatch answers the 404 or 405
    }
  }

  /** The first route whose pattern and method fit; `405` with `Allow` when only the method does not. */
  match(request: ApiRequest): { route: Route; params: Record<string, string> } {
    let allowed: Set<string> | undefined;
    const path = request.path;
    for (const { route, pattern, prefix } of this.#entries) {
      if (!path.startsWith(prefix)) continue;
      const found = pattern.exec(path);
      if (!found) continue;
      if (route.method !== request.method) {
        (allowed ??= new Set()).add(route.method);
        continue;
      }
      return { route, params: decodeParams(found.groups) };
    }
    if (allowed) {
      const allow = [...allowed].join(', ');
      throw new ApiError('405', `method ${clip(request.method)} not allowed here; use ${allow}`, { headers: { allow } });
    }
    throw new ApiError('404', `no route ${clip(request.method)} ${clip(request.path)}`);
  }
}

/** Throws `400` when a `/v1/multi` item names a route that may not run in a batch (PROTOCOL.md 6.5). */
export function checkBatchItem(request: ApiRequest, route: Route): void {
  if (request.batchItem && (route.auth === 'none' || route.batch === false)) {
    throw new ApiError('400', `${clip(request.method)} ${clip(request.path)} is not allowed in /v1/multi (logins, logout and batches are not)`);
  }
}

function decodeParams(groups: Record<string, string | undefined> | undefined): Record<string, string> {
  const params: Record<string, string> = {};
  if (!groups) return params;
  for (const name of Object.keys(groups)) {
    const raw = groups[name];
    if (raw === undefined) continue;
    if (!raw.includes('%')) {
      params[name] = raw; // nothing to decode (most ids)
      continue;
    }
    try {
      params[name] = decodeURIComponent(raw);
    } catch {
      throw new ApiError('400', `path segment ${name} is not valid percent-encoding`);
    }
  }
  return params;
}
