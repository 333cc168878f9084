/** The web object a stand-in (see `standsFor`) makes on first use. Global, so that every copy of the module (ESM and CommonJS builds) agrees. */
const TO_WEB: unique symbol = Symbol.for('odbrest.toWeb') as never;
const ANSWER: unique symbol = Symbol.for('odbrest.lightAnswer') as never;
const SET_HEADER: unique symbol = Symbol.for('odbrest.setHeader') as never;
type StandIn = { [TO_WEB](): object };

import { ApiError } from './errors.js';

/**
 * Stand-ins for web Request, Response and Headers objects that adapters on Node's `http` use to skip making
 * the web ones where nobody needs them.
 */

/**
 * A `Response` whose body is a string the service already holds, made a web `Response` only when
 * something uses it as one. Making a web `Response` on Node costs more than the rest of a small GET
 * (its body becomes a web stream, its headers a `Headers`), and writing it back reads that stream
 * again; an adapter that writes answers itself (Node's) asks for this one (`RequestContext.lightResponses`)
 * and writes `lightAnswer(response).text` directly. It passes `instanceof Response`; `status`, `ok`,
 * `statusText` and `headers` are answered without a web `Response`, everything else (`body`, `text()`,
 * `clone()`, ...) from the web one, made once, so it behaves as the web one would. Runtimes that take
 * the `Response` to their own server (Bun, Deno) never get one.
 */
class LightResponse {
  readonly #text: string | Uint8Array<ArrayBuffer>;
  readonly #status: number;
  #init: Record<string, string>;
  #headers: Headers | undefined;
  #web: Response | undefined;

  constructor(text: string | Uint8Array<ArrayBuffer>, status: number, headers: Record<string, string>) {
    this.#text = text;
    this.#status = status;
    this.#init = headers;
  }

  get status(): number {
    return this.#status;
  }

  get ok(): boolean {
    return this.#status >= 200 && this.#status < 300;
  }

  get statusText(): string {
    return this.#web?.statusText ?? '';
  }

  get headers(): Headers {
    if (this.#web) return this.#web.headers;
    return (this.#headers ??= new Headers(this.#init));
  }

  [TO_WEB](): Response {
    return (this.#web ??= new Response(this.#text, { status: this.#status, headers: this.#headers ?? this.#init }));
  }

  /** Adds a header without making `Headers` (or the web `Response`) when nothing has yet. */
  [SET_HEADER](name: string, value: string): void {
    if (this.#web || this.#headers) this.headers.set(name, value);
    else this.#init = { ...this.#init, [name]: value };
  }

  [ANSWER](): LightAnswer | undefined {
    if (this.#web) return undefined;
    return { status: this.#status, headers: this.#headers ?? this.#init, text: this.#text };
  }
}

/**
 * Makes `standIn`'s instances pass for instances of `web` (`instanceof`, every member): members
 * `standIn` does not define itself are answered by `this[TO_WEB]()`, the web object it stands for.
 */
function standsFor(standIn: { prototype: object }, web: { prototype: object }): void {
  Object.setPrototypeOf(standIn.prototype, web.prototype);
  const own = Object.getOwnPropertyDescriptors(standIn.prototype);
  for (const name of Reflect.ownKeys(web.prototype)) {
    if (name === 'constructor' || name in own) continue;
    const { value, get, enumerable } = Object.getOwnPropertyDescriptor(web.prototype, name)!;
    if (typeof value === 'function') {
      const method = function (this: StandIn, ...args: unknown[]) {
        return value.apply(this[TO_WEB](), args);
      };
      Object.defineProperty(standIn.prototype, name, { value: method, enumerable, writable: true, configurable: true });
    } else if (get) {
      const getter = function (this: StandIn) {
        return get.call(this[TO_WEB]());
      };
      Object.defineProperty(standIn.prototype, name, { get: getter, enumerable, configurable: true });
    }
  }
}

standsFor(LightResponse, Response);

/** What an adapter writes for a light response: the status, the headers (a record until someone read them as `Headers`) and the body. */
export interface LightAnswer {
  status: number;
  headers: Headers | Record<string, string>;
  /** The body: the service's JSON text, or bytes (the secure transport's sealed answers). */
  text: string | Uint8Array<ArrayBuffer>;
}

/**
 * The answer an adapter can write without reading a web body: the status, headers and text of a
 * light response nothing has used as a web `Response` yet; `undefined` for any other `Response`.
 */
export function lightAnswer(response: Response): LightAnswer | undefined {
  return (response as Partial<Record<typeof ANSWER, () => LightAnswer | undefined>>)[ANSWER]?.();
}

/**
 * `response` with the header `name` set: a light response keeps it in its record, a web one in its
 * headers, and one whose headers are immutable (a `Response.redirect`, a fetched one) is copied.
 */
export function withHeader(response: Response, name: string, value: string): Response {
  const light = (response as Partial<Record<typeof SET_HEADER, (name: string, value: string) => void>>)[SET_HEADER];
  if (light) {
    light.call(response, name, value);
    return response;
  }
  try {
    response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.set(name, value);
    return copy;
  }
}

/**
 * A `Response` with a text body: a light one when the caller writes answers itself
 * (`RequestContext.lightResponses`), a web one otherwise.
 */
export function textResponse(text: string | Uint8Array<ArrayBuffer>, status: number, headers: Record<string, string>, light = false): Response {
  if (light) return new LightResponse(text, status, headers) as unknown as Response;
  // 200 left to the default: the init Bun's and Deno's servers write fastest, a body and a plain header record
  return status === 200 ? new Response(text, { headers }) : new Response(text, { status, headers });
}

/**
 * A Request for a bodiless GET or HEAD, for adapters that start from their runtime's own request
 * (Node's): its method, URL and headers as given, without making a web Request (on Node that costs
 * an abort signal, a copy of the headers and a parsed URL, a large part of a small GET). Anything else
 * a Request has (`signal`, `clone()`, ...) is answered by the web Request it stands for, made on first use.
 */
export function bodilessRequest(method: 'GET' | 'HEAD', url: string, headers: Headers): Request {
  return new BodilessRequest(method, url, headers) as unknown as Request;
}

class BodilessRequest {
  readonly #method: string;
  readonly #url: string;
  readonly #headers: Headers;
  #web: Request | undefined;
  constructor(method: string, url: string, headers: Headers) {
    this.#method = method;
    this.#url = url;
    this.#headers = headers;
  }
  get method(): string {
    return this.#method;
  }
  get url(): string {
    return this.#url;
  }
  get headers(): Headers {
    return this.#headers;
  }
  get body(): null {
    return null;
  }
  get bodyUsed(): boolean {
    return false;
  }
  [TO_WEB](): Request {
    return (this.#web ??= new Request(this.#url, { method: this.#method, headers: this.#headers }));
  }
}
standsFor(BodilessRequest, Request);

/** A Node request's header record (`IncomingMessage.headers`): lower-case names, repeated headers already joined but for `set-cookie`. */
export type RawHeaders = Record<string, string | string[] | undefined>;

/**
 * `Headers` read straight from a Node request's header record, made a web `Headers` only when
 * something uses them as one (iterates, copies or changes them): `get` and `has` answer from the
 * record (a copy per request costs as much as the rest of a small GET's routing). A value with a
 * character no HTTP parser lets through (a host's own code may have written it) is refused as the
 * copy would refuse it, `400`; surrounding blanks are dropped as `Headers` drops them.
 */
export function headersView(raw: RawHeaders): Headers {
  return new HeadersView(raw) as unknown as Headers;
}

class HeadersView {
  readonly #raw: RawHeaders;
  #web: Headers | undefined;
  constructor(raw: RawHeaders) {
    this.#raw = raw;
  }
  get(name: string): string | null {
    if (this.#web) return this.#web.get(name);
    const value = this.#raw[name.toLowerCase()];
    if (value === undefined) return null;
    return headerValue(typeof value === 'string' ? value : value.join(', '));
  }
  has(name: string): boolean {
    if (this.#web) return this.#web.has(name);
    return this.#raw[name.toLowerCase()] !== undefined;
  }
  [TO_WEB](): Headers {
    if (this.#web) return this.#web;
    const headers = new Headers();
    try {
      for (const [name, value] of Object.entries(this.#raw)) {
        if (value === undefined) continue;
        if (Array.isArray(value)) for (const item of value) headers.append(name, item);
        else headers.set(name, value);
      }
    } catch {
      throw new ApiError('400', 'a request header is not a valid HTTP header');
    }
    return (this.#web = headers);
  }
}
standsFor(HeadersView, Headers);

/** Characters `Headers` refuses in a value. */
const BAD_VALUE = /[\0\r\n]/;
const BLANK = /^[\t ]+|[\t ]+$/g;

function headerValue(text: string): string {
  if (BAD_VALUE.test(text)) throw new ApiError('400', 'a request header is not a valid HTTP header');
  const last = text.length - 1;
  if (last >= 0 && (text[0] === ' ' || text[0] === '\t' || text[last] === ' ' || text[last] === '\t')) return text.replace(BLANK, '');
  return text;
}
