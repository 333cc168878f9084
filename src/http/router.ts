import { IttyRouter } from 'itty-router';
import type { GenericSchema, InferOutput } from 'valibot';
import type { Answer, JsonReply } from './envelope.js';
import { ApiError, clip, type StatusCode } from './errors.js';
import type { ApiRequest } from './request.js';
import type { MaybePromise } from '../maybe.js';
import type { Method, ParamsSchema, QuerySchema, RouteSpec } from './route-spec.js';

export type { Method, ParamsSchema, QuerySchema } from './route-spec.js';

/**
 * Who may call a route: `none` (anyone with an app key), `session` (any logged-in session, also the
 * macro-only sessions of code 307), `objects` (logged-in sessions with at least one application).
 * A route's `admin` narrows `session` and `objects` to administrators.
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
type Output<S, Otherwise> = S extends GenericSchema ? InferOutput<S> : Otherwise;

/**
 * What a route's handler answers: with an `answerSchema`, a JSON reply whose data is of the schema's
 * output (a compile error otherwise), or a `Response` (its raw answers); without one, any answer.
 */
export type AnswerOf<A> = A extends GenericSchema ? JsonReply<InferOutput<A>> | Response : Answer;

/** What the dispatcher hands a route's handler: its path parameters, query and body, parsed and checked from the declaration. */
export interface RouteInput<P = Record<string, string>, Q = undefined, B = undefined> {
  params: P;
  query: Q;
  body: B;
}

/**
 * A route, declared once: what it answers, who may call it, the valibot schemas of its input and
 * answer, and its handler. The dispatcher checks the input against the schemas before the handler
 * runs (`400` naming the member, http/validate.ts), the OpenAPI document is made from the same
 * declaration, and the typed client is checked against it.
 */
export interface RouteDeclaration<
  P extends ParamsSchema | undefined = ParamsSchema | undefined,
  Q extends QuerySchema | undefined = QuerySchema | undefined,
  B extends GenericSchema | undefined = GenericSchema | undefined,
  A extends GenericSchema | undefined = GenericSchema | undefined,
  M extends Method = Method,
  Path extends string = string,
> extends RouteSpec<P, Q, B, A, M, Path> {
  auth: RouteAuth;
  /**
   * One line on what the route does. This and `params`, `body`, `bodyTypes`, `query`, `answer` and
   * `rawAnswer` are what the OpenAPI document (`GET /openapi.json`) says of the route.
   */
  summary: string;
  /** Media types of a body that is not JSON (uploads, form callbacks). */
  bodyTypes?: readonly string[];
  /** What `data` of the success envelope holds, in words. */
  answer?: string;
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
  /**
   * A check of the parsed input as a whole, where one part is valid only with another (a class
   * declaration for its path's class): throws `ApiError`. It runs with the schemas, before `admin`, so
   * a malformed request is `400` for anyone.
   */
  refine?: (input: RouteInput<Output<P, Record<string, string>>, Output<Q, undefined>, Output<B, undefined>>) => void;
  /**
   * The route is for administrators (PROTOCOL.md 2.8 and 6.12 *admin*: sessions of database users in
   * the `users.admins` group, others `403`): `true`, or for a route open to every session that some
   * inputs make an administrator's (`?user=` naming another user), whether this input does. The
   * dispatcher checks it after the credential and the input (a malformed request is `400` for anyone).
   */
  admin?: true | ((input: RouteInput<Output<P, Record<string, string>>, Output<Q, undefined>, Output<B, undefined>>, request: ApiRequest) => boolean);
  /** Answers without a promise where everything it needs is at hand (the read path, PROTOCOL.md 6.1). */
  handler: (request: ApiRequest, input: RouteInput<Output<P, Record<string, string>>, Output<Q, undefined>, Output<B, undefined>>) => MaybePromise<AnswerOf<A>>;
}

/** A declared route of the table, whatever its input types. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Route = RouteDeclaration<any, any, any, any>;

/**
 * Declares a route, typing its handler's input from its schemas and its answer from `answerSchema`.
 * The built-in routes spread their contract (route-spec.ts: method, path, schemas) into it, and the
 * typed client reads the contracts, never these declarations (src/contract.ts).
 */
export function route<
  const M extends Method,
  const Path extends string,
  P extends ParamsSchema | undefined = undefined,
  Q extends QuerySchema | undefined = undefined,
  B extends GenericSchema | undefined = undefined,
  A extends GenericSchema | undefined = undefined,
>(declaration: RouteDeclaration<P, Q, B, A, M, Path>): RouteDeclaration<P, Q, B, A, M, Path> {
  return declaration;
}

interface Entry<R> {
  route: Route;
  /** What the table's owner prepared for the route when it was added (the core: its compiled stages). */
  prepared: R;
  pattern: RegExp;
  /** Its place in the table: the first route (in table order) whose pattern and method fit answers. */
  index: number;
}

/** A match: the route, what was prepared for it, and its raw (URL-decoded) path parameters. */
export interface Matched<R = undefined> {
  route: Route;
  prepared: R;
  params: Record<string, string>;
}

/**
 * The routing table: finds the route for a request, or throws `404`/`405`. Routes can be added any time.
 *
 * itty-router compiles the path patterns (its `:param` syntax and its tolerance of a trailing slash);
 * the matching itself is done here, synchronously against the already parsed path. Routes are kept
 * in buckets by the first two segments of their path (`/v1/object`), so a request tests the few
 * patterns of its bucket and those with a parameter in their first two segments, never the whole table.
 */
export class RouteTable<R = undefined> {
  readonly #compiler = IttyRouter();
  readonly #buckets = new Map<string, Entry<R>[]>();
  /** Routes with a parameter or wildcard in their first two segments: tried for every path. */
  readonly #open: Entry<R>[] = [];
  readonly #prepare: (route: Route) => R;
  /** Each bucket with the open routes, in table order: worked out on first use, forgotten when a route is added. */
  readonly #merged = new Map<string, readonly Entry<R>[]>();
  #count = 0;

  /** `prepare` runs once per route as it is added; its result comes with every match of the route. */
  constructor(prepare?: (route: Route) => R) {
    this.#prepare = prepare ?? (() => undefined as R);
  }

  add(routes: readonly Route[]): this {
    for (const route of routes) {
      this.#compiler[route.method.toLowerCase() as 'get'](route.path, () => undefined);
      const pattern = this.#compiler.routes[this.#compiler.routes.length - 1]![1];
      const entry = { route, pattern, index: this.#count++, prepared: this.#prepare(route) };
      const key = bucketKey(route.path);
      this.#merged.clear();
      if (/[:*]/.test(key)) this.#open.push(entry);
      else {
        const bucket = this.#buckets.get(key);
        if (bucket) bucket.push(entry);
        else this.#buckets.set(key, [entry]);
      }
    }
    return this;
  }

  /** Every route, in table order. */
  get routes(): Route[] {
    return [...this.#buckets.values(), this.#open].flat().sort((a, b) => a.index - b.index).map((entry) => entry.route);
  }

  /** The routes whose patterns may fit `path`, in table order. */
  #candidates(path: string): readonly Entry<R>[] {
    const key = bucketKey(path);
    const bucket = this.#buckets.get(key);
    if (this.#open.length === 0) return bucket ?? [];
    if (!bucket) return this.#open;
    let merged = this.#merged.get(key);
    if (!merged) this.#merged.set(key, (merged = [...bucket, ...this.#open].sort((a, b) => a.index - b.index)));
    return merged;
  }

  /** Whether any route's pattern fits `path`, whatever its method (`match` answers it, if only with `405`). */
  fits(path: string): boolean {
    return this.#candidates(path).some(({ pattern }) => pattern.test(path));
  }

  /** Whether a route of this table answers `method path` (whatever the order of the table). */
  answers(method: string, path: string): boolean {
    return this.#candidates(path).some(({ route, pattern }) => route.method === method && pattern.test(path));
  }

  /** The first route whose pattern and method fit; `405` with `Allow` when only the method does not. */
  match(method: string, path: string): Matched<R> {
    let allowed: Set<string> | undefined;
    for (const { route, pattern, prepared } of this.#candidates(path)) {
      const found = pattern.exec(path);
      if (!found) continue;
      if (route.method !== method) {
        (allowed ??= new Set()).add(route.method);
        continue;
      }
      return { route, prepared, params: decodeParams(found.groups) };
    }
    if (allowed) {
      const allow = [...allowed].join(', ');
      throw new ApiError('405', `method ${clip(method)} not allowed here; use ${allow}`, { headers: { allow } });
    }
    throw new ApiError('404', `no route ${clip(method)} ${clip(path)}`);
  }
}

/** The first two segments of a path (`/v1/object/A1` -> `/v1/object`), a trailing slash ignored. */
function bucketKey(path: string): string {
  const second = path.indexOf('/', 1);
  if (second < 0) return path;
  const third = path.indexOf('/', second + 1);
  const key = third < 0 ? path : path.slice(0, third);
  return key.length > 1 && key.endsWith('/') ? key.slice(0, -1) : key;
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
