/**
 * The stages a route's requests pass, composed once per route when the table is built (as Hono's
 * `compose` and Fastify's per-route hooks are): only the stages the route's declaration asks for.
 *
 *   app key -> batch item refusal -> qb64 query -> credential -> session consistency -> input
 *     -> administrators' group (`admin`) -> handler
 *
 * The secure transport and `/v1/multi` are stages of their own around this (core.ts): the transport
 * opens a request before it reaches here and seals the answer after; a batch runs each item through
 * `Dispatch`, handed to it explicitly.
 */
import { requireAdmin } from './auth/admins.js';
import { authorize, type SecureSessions } from './auth/credentials.js';
import type { AssembledContext } from './service-context.js';
import type { Answer } from './http/envelope.js';
import { ApiError, clip } from './http/errors.js';
import { decodeQb64, type ApiRequest } from './http/request.js';
import type { Route } from './http/router.js';
import { routeInput } from './http/validate.js';
import { andThen, type MaybePromise } from './maybe.js';

/** A route's compiled stages: answers a request whose body has been read; may throw (the dispatch turns errors into envelopes). */
export type RouteRun = (request: ApiRequest) => MaybePromise<Answer>;

/** Routes a request as the service routes any (a `/v1/multi` item): never throws, every failure is an envelope. */
export type Dispatch = (request: ApiRequest) => MaybePromise<Answer>;

export function compileRoute(route: Route, ctx: AssembledContext, secure: SecureSessions): RouteRun {
  const takesInput = route.params !== undefined || route.query !== undefined || (route.body !== undefined && !route.rawBody);
  const inputOf = takesInput
    ? (request: ApiRequest) => routeInput(route, request)
    : (request: ApiRequest) => ({ params: request.params, query: undefined, body: undefined });
  const { admin } = route;
  const adminOnly = admin === true ? () => true : admin;
  const handle: RouteRun = adminOnly
    ? (request) => {
        const input = inputOf(request);
        return adminOnly(input, request) ? requireAdmin(ctx, request.session!).then(() => route.handler(request, input)) : route.handler(request, input);
      }
    : (request) => route.handler(request, inputOf(request));
  const guarded: RouteRun =
    route.auth === 'none'
      ? handle
      : (request) =>
          andThen(authorize(ctx, secure, request, route), (session) => {
            request.session = session;
            // a store that reads session positions (issue 37) records the session's writes; others answer at once
            return ctx.sessions.consistent(ctx.store, session, () => handle(request));
          });
  const checksAppKey = route.appKey !== false;
  const batchable = route.auth !== 'none' && route.batch !== false;
  return (request) => {
    if (checksAppKey) ctx.checkAppKey(request.headers);
    if (request.batchItem && !batchable) {
      throw new ApiError('400', `${clip(request.method)} ${clip(request.path)} is not allowed in /v1/multi (logins, logout and batches are not)`);
    }
    decodeQb64(request);
    return guarded(request);
  };
}
