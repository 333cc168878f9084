import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Service } from '../src/index.js';
import { bodyAfterParsers, respond, servesNodeRequest } from './node-http.js';

/**
 * Express's request as this adapter reads it: `body` set by `express.json()` and friends, and
 * `rawBody` if a parser's `verify` hook kept the bytes:
 * `express.json({ verify: (req, _res, buf) => { req.rawBody = buf } })`. Express itself is not imported.
 */
type ExpressRequest = IncomingMessage & { body?: unknown; rawBody?: unknown };
type Next = (error?: unknown) => void;
type Middleware = (req: ExpressRequest, res: ServerResponse, next: Next) => void;
type ErrorMiddleware = (error: unknown, req: ExpressRequest, res: ServerResponse, next: Next) => void;

/**
 * Express 5 middleware: `app.use('/api', odbrest(service))`, or `app.use(odbrest(service))` with the
 * service's `basePath`. The service sees the path below the mount point (`req.url`, which Express
 * rewrites for mounted middleware; never `req.params`). Requests the service has no route for are left
 * to the app (`next()`), untouched. It works before or after `express.json()`: see `bodyAfterParsers`.
 *
 * The second function in the pair catches the JSON parse errors of a body parser mounted before it, so
 * that a malformed body sent to the service is answered by the service (code `400` in an envelope)
 * instead of by Express's HTML error page.
 */
export function odbrest(service: Service): [Middleware, ErrorMiddleware] {
  const served = (req: ExpressRequest) => servesNodeRequest(service, req);

  const middleware: Middleware = (req, res, next) => {
    if (!served(req)) return next();
    respond(service, req, res, bodyAfterParsers(req, req.rawBody, req.body), next);
  };
  const afterParseError: ErrorMiddleware = (error, req, res, next) => {
    const failed = error as { type?: unknown; body?: unknown };
    if (failed?.type !== 'entity.parse.failed' || typeof failed.body !== 'string' || !served(req)) return next(error);
    respond(service, req, res, failed.body, next);
  };
  return [middleware, afterParseError];
}
