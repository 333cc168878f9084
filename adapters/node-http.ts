import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerNow, ApiError, bodilessRequest, headersView, lightAnswer, type LightAnswer, type MaybePromise, type Service } from '../src/index.js';
import { answerRefusal, checkHost, inParserForm } from './request-checks.js';

/**
 * Conversions between Node's `http` objects and web Request/Response, shared by the Node, Express and
 * Koa adapters. `req.url` is used as is: frameworks that mount middleware under a path (Express's
 * `app.use('/api', ...)`, koa-mount) rewrite it to the path below the mount point.
 */

/** Methods Node's parser passes on but a web `Request` cannot carry (`new Request` throws for them). */
const NO_WEB_METHOD = new Set(['CONNECT', 'TRACE', 'TRACK']);
/** An absolute-form request-target (`GET http://host/path`): its path and query follow the authority. */
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*(.*)$/is;

/**
 * The request-target's path and query: origin-form as sent, or the path and query of an
 * absolute-form target; `undefined` for anything else (`*`).
 */
function requestTarget(url: string | undefined): string | undefined {
  const raw = url ?? '/';
  if (raw.startsWith('/')) return raw;
  const rest = ABSOLUTE_FORM.exec(raw)?.[1];
  if (rest === undefined) return undefined;
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * The web URL of a Node request. The path is the request-target's and nothing else: the `Host`
 * header must be `host[:port]` (`400`), and a path the URL parser would change (dot segments,
 * backslashes, characters it escapes) is `400` too, since the service would route another path than
 * the one a host app's own checks on `req.url` saw.
 */
function webUrl(req: IncomingMessage): string {
  const target = requestTarget(req.url);
  if (target === undefined) throw new ApiError('400', 'the request-target must be a path');
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true;
  const protocol = secure ? 'https' : 'http';
  const host = req.headers.host;
  // the common case, already in the URL parser's form: joined, not parsed (test/adapters/node-request-url.test.ts)
  if ((host === undefined || inParserForm(host, secure)) && PLAIN_TARGET.test(target) && !DOT_SEGMENT.test(target)) return `${protocol}://${host ?? 'localhost'}${target}`;
  const url = parsedUrl(`${protocol}://${checkHost(host) ?? 'localhost'}${target}`);
  if (url === undefined || url.pathname !== target.split(/[?#]/, 1)[0]) {
    throw new ApiError('400', 'the request path must be in normal form: no dot segments, backslashes or unescaped characters');
  }
  return url.href;
}

/** A path and query the URL parser keeps as they are: unreserved and sub-delimiter characters, `:@/?%` (no `'`, which it escapes in a query). */
const PLAIN_TARGET = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@/?%]*$/;
/** A `.` or `..` segment in the path, plain or percent-encoded (the parser removes it). */
const DOT_SEGMENT = /^[^?]*?\/(?:\.|%2e){1,2}(?:[/?]|$)/i;

function parsedUrl(href: string): URL | undefined {
  try {
    return new URL(href);
  } catch {
    return undefined;
  }
}

/**
 * The web Request of a Node request. Throws an `ApiError` for a request that has none: a method a
 * web Request cannot carry (`405`), a malformed `Host` or request-target (`400`).
 */
export function toWebRequest(req: IncomingMessage, body?: BodyInit | null): Request {
  const { method, url, headers } = webParts(req, body);
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(url, {
    method,
    headers,
    body: hasBody ? (body !== undefined ? body : requestBody(req)) : undefined,
    // @ts-expect-error: Node's fetch needs duplex for streamed bodies; not yet in the DOM types
    duplex: hasBody ? 'half' : undefined,
  });
}

/** The method, URL and headers of a Node request's web form (see `toWebRequest`). */
function webParts(req: IncomingMessage, body: BodyInit | null | undefined): { method: string; url: string; headers: Headers } {
  const method = req.method ?? 'GET';
  if (NO_WEB_METHOD.has(method.toUpperCase())) throw new ApiError('405', `method ${method.slice(0, 20)} is not allowed`);
  const url = webUrl(req);
  const headers = new Headers();
  try {
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const item of value) headers.append(name, item);
      else headers.set(name, value);
    }
  } catch {
    throw new ApiError('400', 'a request header is not a valid HTTP header');
  }
  if (body !== undefined) {
    // A body handed over in place of the stream (kept or re-serialized by a body parser) has its own
    // length; the original framing headers no longer describe it.
    headers.delete('content-length');
    headers.delete('transfer-encoding');
  }
  return { method, url, headers };
}

/** The Request the service gets: `toWebRequest`'s, or a `BodilessRequest` for a GET or HEAD. */
function serviceRequest(req: IncomingMessage, body: BodyInit | null | undefined): Request {
  const method = req.method;
  if (method !== 'GET' && method !== 'HEAD') return toWebRequest(req, body);
  // read from Node's own header record: no copy of the headers for a GET
  return bodilessRequest(method, webUrl(req), headersView(req.headers));
}

/** Bytes buffered ahead of the service's reads before the request is paused. */
const REQUEST_HIGH_WATER_BYTES = 64 * 1024;

/**
 * A Node request's body as a web stream, with back-pressure (the request pauses while the service is
 * not reading). Not `Readable.toWeb`: on Node 20 a stream it made that is cancelled (a file upload
 * refused with `413` before its end) still receives the socket's next chunk and throws "Controller is
 * already closed", an uncaught exception that ends the process. Cancelled, this one stops listening
 * and leaves the rest to Node, which discards it once the answer is sent.
 */
function requestBody(req: IncomingMessage): ReadableStream<Uint8Array> {
  let done = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.on('data', (chunk: Buffer) => {
          if (done) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.once('end', () => {
          if (!done) controller.close();
          done = true;
        });
        req.once('error', (error) => {
          if (!done) controller.error(error);
          done = true;
        });
      },
      pull() {
        req.resume();
      },
      cancel() {
        done = true;
        req.removeAllListeners('data');
        req.resume();
      },
    },
    { highWaterMark: REQUEST_HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
  );
}

/**
 * Whether the service has a route for a Node request's path (framework adapters leave the others to
 * the app). The method and `Host` do not decide; the service refuses a wrong one itself.
 */
export function servesNodeRequest(service: Service, req: IncomingMessage): boolean {
  const target = requestTarget(req.url);
  return target !== undefined && service.serves(`http://localhost${target}`);
}

/**
 * The service's answer to a Node request, with the socket's address for the failed-login limit. A
 * request without a web form is answered with its envelope here.
 */
export function serviceFetch(service: Service, req: IncomingMessage, body?: BodyInit | null): Promise<Response> {
  return Promise.resolve(serviceAnswer(service, req, body));
}

/** `serviceFetch`'s answer, without a promise where the service answers at once (see `answerNow`). */
function serviceAnswer(service: Service, req: IncomingMessage, body: BodyInit | null | undefined): MaybePromise<Response> {
  let request: Request;
  const context = { clientAddress: req.socket.remoteAddress, lightResponses: true };
  try {
    request = serviceRequest(req, body);
  } catch (error) {
    const requestId = req.headers['x-request-id'];
    return answerRefusal(service, error, req.method, typeof requestId === 'string' ? requestId : undefined, context);
  }
  return answerNow(service, request, context);
}

/**
 * Answers a Node request with the service and writes the answer back: in the same turn where the
 * service answers at once (the read path), else once it does. `failed` gets what went wrong writing.
 */
export function respond(service: Service, req: IncomingMessage, res: ServerResponse, body: BodyInit | null | undefined, failed: (error: unknown) => void): void {
  try {
    const answer = serviceAnswer(service, req, body);
    // a light answer passes for a Response too
    const written = answer instanceof Response ? writeAnswer(service, req, res, answer) : answer.then((response) => writeAnswer(service, req, res, response));
    written?.catch(failed);
  } catch (error) {
    failed(error);
  }
}

/** Writes the service's answer; a promise while a streamed body is written. */
function writeAnswer(service: Service, req: IncomingMessage, res: ServerResponse, response: Response): Promise<void> | undefined {
  // Answered before its body arrived (a 404, 405 or 401 reads none, a 413 stops reading): the rest
  // of the body sits in the stream the web Request took over, so the connection could not carry the
  // next request; close it, lingering.
  const lingering = bodyPending(req);
  if (lingering) closeLingering(req, res);
  // a draining instance lets each connection go with its answer, so shutting down waits for no idle keep-alive
  const close = lingering || service.draining;
  if (writeLight(res, response, close)) return undefined;
  if (close) res.setHeader('connection', 'close');
  return writeWebResponse(res, response);
}

/**
 * Whether part of a request's body has not arrived yet. Not `!req.complete` alone: an answer written in
 * the request's own turn (the read path) comes before Node's parser marks even a bodiless request complete.
 */
function bodyPending(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** How long, and how many more of the request's bytes, a connection closed under an unread body is read on (see `closeLingering`). */
const LINGER = { ms: 5000, bytes: 16 * 1024 * 1024 };

/**
 * Closes the connection of a request answered before its body was read, without resetting it under the
 * answer: closed with bytes unread, the socket makes the kernel send a reset, which can overtake the
 * answer (the client sees a network error instead of, say, its `413`). So the answer goes out with
 * `connection: close` and the end of the stream; then the rest of the body is read and dropped until
 * it ends, for at most `LINGER.ms` and `LINGER.bytes` (as nginx's `lingering_close`, Go's
 * `closeWriteAndWait`), and only then is the socket destroyed. Beyond the bound the client may see
 * the reset: bounded work for a client that keeps sending. The caller writes `connection: close`.
 */
function closeLingering(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket as IncomingMessage['socket'] & { destroySoon?: () => void };
  // Node's server calls `destroySoon` once a `connection: close` answer is written: the end of the
  // stream, then `destroy` as soon as it is sent. Here the destroy waits for the body's end.
  if (typeof socket.destroySoon !== 'function') return;
  const destroy = () => socket.destroy();
  // once the answer is sent: a destroy before would drop it
  const destroyWhenSent = () => (socket.writableFinished ? destroy() : socket.once('finish', destroy));
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
    if (req.complete) return destroyWhenSent();
    let left = LINGER.bytes;
    const close = () => {
      clearTimeout(timer);
      req.off('data', count);
      destroyWhenSent();
    };
    const count = (chunk: Buffer) => {
      left -= chunk.byteLength;
      if (left < 0) close();
    };
    // the bound holds whatever the client does (one that reads no answer never lets it be sent)
    const timer = setTimeout(destroy, LINGER.ms);
    // the web stream's listener would keep what it reads: dropped instead
    req.removeAllListeners('data');
    req.on('data', count);
    req.once('end', close);
    socket.once('close', close);
    req.resume();
  };
}

/**
 * Writes a light answer (see `lightAnswer`) as its text: its status and headers in one `writeHead`
 * (with the length, so Node adds none of its own after its `Date`), then one `end`; false for any
 * other response. `close`: with `connection: close`, first, as `setHeader` placed it before.
 */
function writeLight(res: ServerResponse, response: Response, close = false): boolean {
  const light = lightAnswer(response);
  if (!light) return false;
  const text = light.text;
  // a flat list of names and values: Node writes it as given, without a header record of its own
  const headers: string[] = close ? ['connection', 'close'] : [];
  const own = light.headers;
  if (own instanceof Headers) own.forEach((value, name) => headers.push(name, value));
  else for (const name in own) headers.push(name, own[name]!);
  if (light.status !== 204 && light.status !== 304) headers.push('content-length', String(typeof text === 'string' ? Buffer.byteLength(text) : text.byteLength));
  res.writeHead(light.status, headers);
  res.end(text);
  return true;
}

/**
 * Writes a web Response to a Node response, streaming the body and respecting back-pressure. The
 * service's JSON answers (light responses) are written as their text, in one write with its length.
 */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  if (writeLight(res, response)) return;
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  // A client that goes away cancels the body at once: an event stream would otherwise wait for its
  // next event (or keep-alive) to find out, and then for a `close` that had already fired.
  const gone = () => void reader.cancel().catch(() => undefined);
  res.once('close', gone);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await drainOrClose(res);
      if (res.destroyed) return gone();
    }
    if (!res.destroyed) res.end();
  } finally {
    res.off('close', gone);
  }
}

/** Calls `set` with each of a light answer's headers. */
export function eachHeader(headers: LightAnswer['headers'], set: (name: string, value: string) => void): void {
  if (headers instanceof Headers) headers.forEach((value, name) => set(name, value));
  else for (const name in headers) set(name, headers[name]!);
}

/** Resolves once `res` takes more data, or once it closed (a closed response never drains). */
function drainOrClose(res: ServerResponse): Promise<void> {
  // a `close` that already fired does not fire again
  if (res.destroyed || res.closed) return Promise.resolve();
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
