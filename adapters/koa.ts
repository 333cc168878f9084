import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { lightAnswer, type Service } from '../src/index.js';
import { bodyAfterParsers, eachHeader, serviceFetch, servesNodeRequest } from './node-http.js';

/** The parts of Koa's context this adapter uses (Koa itself is not imported). */
interface KoaContext {
  req: IncomingMessage;
  request: { body?: unknown; rawBody?: unknown };
  status: number;
  body: unknown;
  set(name: string, value: string): void;
}
type Next = () => Promise<unknown>;

/**
 * Koa 3 middleware: `app.use(odbrest(service))` with the service's `basePath` (e.g. `/api`), or under
 * koa-mount, which rewrites `ctx.url` to the path below the mount point. Requests the service has no
 * route for go on to the next middleware, untouched. Before or after `@koa/bodyparser`, the body the
 * service reads is the one the client sent: `ctx.request.rawBody` when the parser kept it.
 */
export function odbrest(service: Service): (ctx: KoaContext, next: Next) => Promise<unknown> {
  return async (ctx, next) => {
    if (!servesNodeRequest(service, ctx.req)) return next();
    const body = bodyAfterParsers(ctx.req, ctx.request.rawBody, ctx.request.body);
    const response = await serviceFetch(service, ctx.req, body);
    // answered before its body arrived: the connection cannot carry the next request (see respond in node-http.ts)
    if (!ctx.req.complete) ctx.set('connection', 'close');
    // Order matters: Koa turns a null body into 204 unless the status is set afterwards (a 302
    // redirect), and drops Content-Length when a body is set after the headers.
    const light = lightAnswer(response);
    if (light) {
      // the service's JSON answer, as its text (see writeWebResponse in node-http.ts)
      ctx.status = light.status;
      eachHeader(light.headers, (name, value) => ctx.set(name, value));
      ctx.body = typeof light.text === 'string' ? light.text : Buffer.from(light.text.buffer, light.text.byteOffset, light.text.byteLength);
      return undefined;
    }
    if (!response.body) ctx.body = null;
    ctx.status = response.status;
    response.headers.forEach((value, name) => ctx.set(name, value));
    if (response.body) ctx.body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
    return undefined;
  };
}
