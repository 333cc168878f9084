import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Service } from '../src/index.js';
import { Readable } from 'node:stream';

/**
 * Conversions between Node's `http` objects and web Request/Response, shared by the Node, Express and
 * Koa adapters. `req.url` is used as is: frameworks that mount middleware under a path (Express's
 * `app.use('/api', ...)`, koa-mount) rewrite it to the path below the mount point.
 */
export function toWebRequest(req: IncomingMessage, body?: BodyInit | null): Request {
  const host = req.headers.host ?? 'localhost';
  const protocol = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  if (body !== undefined) {
    // A body handed over in place of the stream (kept or re-serialized by a body parser) has its own
    // length; the original framing headers no longer describe it.
    headers.delete('content-length');
    headers.delete('transfer-encoding');
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(`${protocol}://${host}${req.url ?? '/'}`, {
    method,
    headers,
    body: hasBody ? (body !== undefined ? body : (Readable.toWeb(req) as ReadableStream<Uint8Array>)) : undefined,
    // @ts-expect-error: Node's fetch needs duplex for streamed bodies; not yet in the DOM types
    duplex: hasBody ? 'half' : undefined,
  });
}

/** The service's answer to a Node request, with the socket's address for the failed-login limit. */
export function serviceFetch(service: Service, req: IncomingMessage, body?: BodyInit | null): Promise<Response> {
  return service.fetch(toWebRequest(req, body), { clientAddress: req.socket.remoteAddress });
}

/** Answers a Node request with the service and writes the answer back. */
export async function respond(service: Service, req: IncomingMessage, res: ServerResponse, body?: BodyInit | null): Promise<void> {
  await writeWebResponse(res, await serviceFetch(service, req, body));
}

/** Writes a web Response to a Node response, streaming the body and respecting back-pressure. */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (!response.body) {
    res.end();
    return;
  }
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (!res.write(chunk)) await drainOrClose(res);
    // the client went away: leaving the loop cancels the body's stream
    if (res.destroyed) return;
  }
  res.end();
}

/** Resolves once `res` takes more data, or once it closed (a closed response never drains). */
function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * The body to give the service when a framework body parser may already have run. In order: the raw
 * bytes a parser kept (`rawBody`); `undefined`, meaning "stream it", while nobody has read the stream;
 * the parsed value serialized again; `null` when the stream was consumed and nothing was kept (waiting
 * on it would hang forever).
 */
export function bodyAfterParsers(req: IncomingMessage, rawBody: unknown, parsed: unknown): BodyInit | null | undefined {
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody as BodyInit;
  if (!req.readableDidRead && !req.readableEnded) return undefined;
  if (parsed === undefined || parsed === null) return null;
  if (typeof parsed === 'string' || parsed instanceof Uint8Array) return parsed as BodyInit;
  if (/^application\/x-www-form-urlencoded/i.test(req.headers['content-type'] ?? '')) return formBody(parsed);
  return JSON.stringify(parsed);
}

function formBody(parsed: unknown): URLSearchParams {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
    for (const item of Array.isArray(value) ? value : [value]) form.append(name, String(item));
  }
  return form;
}
