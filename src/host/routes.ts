/**
 * Host routes (PROTOCOL.md 6.10): the application routes a host serves with the service's machinery.
 * Each becomes an ordinary `Route` of the route table, so it gets what every built-in route gets
 * from the dispatch: the app key, a credential of any login kind (unless `public`), the envelope,
 * the secure transport, `/v1/multi` items, the request log, the body limit and the OpenAPI entry.
 * The handler sees the macro context (session, user, store, request) and its parsed input; the
 * objects it returns are serialized as any answer's are, for the session's access rules.
 */
import * as v from 'valibot';
import type { ObjectsContext } from '../objects/context.js';
import { okReply } from '../http/envelope.js';
import { ApiError, type StatusCode } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { RouteTable, type QuerySchema, type Route, type RouteInput } from '../http/router.js';
import { HOST_TAG } from '../openapi/tags.js';
import type { MacroContext } from '../macros/registry.js';

type Output<S> = S extends v.GenericSchema ? v.InferOutput<S> : undefined;

/** A route the host serves (the `routes` option). `defineRoute` types the handler's input from the schemas. */
export interface HostRoute<
  B extends v.GenericSchema | undefined = v.GenericSchema | undefined,
  Q extends QuerySchema | undefined = QuerySchema | undefined,
> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Relative to the service root, `:name` for a parameter: `v1/folders/type/:type` (a leading `/` is allowed). */
  path: string;
  /** The JSON body as a valibot schema (`v.optional(...)` when it may be absent); without one a body is `400`. */
  body?: B;
  /** The query parameters as an object of string schemas; without one, the query is not read. */
  query?: Q;
  /** Reachable with the app key alone, no credential (then not as a `/v1/multi` item). Default false. */
  public?: boolean;
  /** One line for the OpenAPI document. */
  summary?: string;
  /** What the handler returns, as a valibot schema: `data` in the OpenAPI document. */
  answer?: v.GenericSchema;
  /** A real body and answer (`data`) for the OpenAPI document's examples; by default derived from the schemas. */
  examples?: { body?: unknown; answer?: unknown };
  /** The `internalStatus` codes the handler throws itself (for the OpenAPI document), e.g. `['404']`. */
  errors?: readonly StatusCode[];
  /**
   * Answers the request: its return value is the envelope's `data` (stored objects in it are
   * serialized for the session); throw an `ApiError` to fail with a code. Any other exception is a bare `500`.
   */
  handler(context: MacroContext, params: Record<string, string>, body: Output<B>, query: Output<Q>): unknown;
}

/** A host route with its handler's `body` and `query` typed from its schemas. */
export function defineRoute<B extends v.GenericSchema | undefined = undefined, Q extends QuerySchema | undefined = undefined>(route: HostRoute<B, Q>): HostRoute<B, Q> {
  return route;
}

const PATH = /^\/?(?:[A-Za-z0-9_.~-]+|:[A-Za-z_]\w*)(?:\/(?:[A-Za-z0-9_.~-]+|:[A-Za-z_]\w*))*$/;
const METHODS = new Set(['GET', 'POST', 'PATCH', 'DELETE']);

/** A path that fits `route.path` (each `:param` a sample segment). */
const samplePath = (path: string) => path.replace(/:\w+/g, 'x');

/**
 * The host's routes as `Route`s. Throws at start-up for a route that is not well formed, two that
 * answer the same request, or one that shadows a built-in route (either would answer the other's requests).
 */
export function hostRoutes(ctx: ObjectsContext, routes: readonly HostRoute<any, any>[] | undefined, builtIn: readonly Route[]): Route[] {
  if (routes === undefined) return [];
  if (!Array.isArray(routes)) throw new Error('routes must be an array of {method, path, handler}');
  const made: Route[] = [];
  routes.forEach((host, i) => {
    const where = `routes[${i}]`;
    if (typeof host !== 'object' || host === null) throw new Error(`${where} must be an object {method, path, handler}`);
    if (!METHODS.has(host.method)) throw new Error(`${where}.method must be one of GET, POST, PATCH, DELETE`);
    if (typeof host.path !== 'string' || !PATH.test(host.path)) throw new Error(`${where}.path must be a path such as "v1/folders/type/:type" (segments of letters, digits, _ . ~ -, or :name)`);
    if (typeof host.handler !== 'function') throw new Error(`${where}.handler must be a function`);
    const path = host.path.startsWith('/') ? host.path : `/${host.path}`;
    const route = toRoute(ctx, host, path);
    const label = `${where} ${host.method} ${host.path}`;
    const own = new RouteTable().add([route]);
    for (const other of [...builtIn, ...made]) {
      if (other.method !== route.method) continue;
      if (own.answers(other.method, samplePath(other.path)) || new RouteTable().add([other]).answers(route.method, samplePath(path))) {
        throw new Error(`${label} shadows ${builtIn.includes(other) ? 'the built-in route' : 'the host route'} ${other.method} ${other.path}`);
      }
    }
    made.push(route);
  });
  return made;
}

function toRoute(ctx: ObjectsContext, host: HostRoute<any, any>, path: string): Route {
  const { body, query } = host;
  return {
    method: host.method,
    path,
    auth: host.public ? 'none' : 'objects',
    summary: host.summary ?? `${host.method} ${path} (a host route)`,
    ...(body ? { body } : {}),
    ...(query ? { query } : {}),
    ...(host.answer ? { answerSchema: host.answer } : {}),
    ...(host.examples ? { examples: host.examples } : {}),
    tag: HOST_TAG,
    errors: [...(body === undefined && host.method !== 'GET' ? ['400' as const] : []), ...(host.errors ?? [])],
    handler: async (request: ApiRequest, input: RouteInput<Record<string, string>, unknown, unknown>) => {
      // a GET's or DELETE's body is ignored (PROTOCOL.md 1.1); any other is 400 unless the route takes one
      if (body === undefined && request.bodyText.trim() !== '' && request.method !== 'GET' && request.method !== 'DELETE') {
        throw new ApiError('400', `${request.method} ${path} takes no body`);
      }
      const data = await host.handler(ctx.macroContext(request), { ...input.params }, input.body, input.query);
      return okReply(data === undefined ? {} : await ctx.serializer.embedded(data, ctx.guard(request)));
    },
  };
}
