/**
 * The client's transport: where a request goes, with which credential (a plain session, a token, or
 * the secure channel of PROTOCOL.md 4), its envelope unwrapped into `data` or thrown as an error, and
 * the last login repeated once when `relogin` is on and a session is refused. The route table says
 * nothing of this part; the typed calls over it (`call`) take their types from the table.
 */
import type { AnswerOf, BodyOf, PathOf, QueryOf } from '../contract.js';
import type { Envelope } from '../http/envelope.js';
import { STATUS_CODES } from '../http/errors.js';
import type { Method } from '../http/router.js';
import type { SymmetricCrypto } from '../secure/symmetric.js';
import { OdbRestConflictError, OdbRestError, OdbRestNetworkError, OdbRestProtocolError, OdbRestUnauthenticatedRefusal, TwoFactorError } from './errors.js';
import type { SecureChannel } from './secure-channel.js';
import type { FetchFunction, FileDownload, SavedCredential } from './types.js';

/**
 * A typed odbrest client for any runtime (web APIs only): every login variant, objects, macros, and
 * the secure transport, which it speaks itself once `loginSecure` succeeded.
 */
export interface ClientOptions {
  /** Where the service is mounted, e.g. `https://example.com/api`. */
  baseUrl: string;
  appKey: string;
  /** Database alias: one more path segment after `baseUrl`. */
  alias?: string;
  /** Default: the global `fetch`. */
  fetch?: FetchFunction;
  /**
   * The server key a secure or hybrid login must find: its public key as a PEM, or the SHA-256
   * fingerprint of its SPKI DER (64 hex digits or base64); a list accepts any of them (while a key is
   * changed). Any other key is refused before the credentials are encrypted and sent, and a login
   * answer is believed only when its `Login-Signature` verifies under that key (so whoever relays the
   * real key cannot answer the login itself). Without it, the client trusts the key the server
   * answers, which anyone on the path can swap.
   */
  serverKey?: string | readonly string[];
  /** AES-CTR and HMAC of the secure transport. Default: `defaultCrypto` (node:crypto where the runtime has it, else `portableCrypto`). */
  symmetricCrypto?: SymmetricCrypto;
  /**
   * Log in again by itself, with the last login's variant and credentials, when a request is refused
   * with `201` or `204` (the session expired or was lost), then send the request once more, as the
   * real clients do. Concurrent refusals share one login. Off by default; `logout` ends it.
   */
  relogin?: boolean;
}

export type Credential = { kind: 'session'; sessionId: string } | { kind: 'token'; token: string } | { kind: 'secure'; channel: SecureChannel };

/** The names of a path pattern's parameters: `'id'` of `'/v1/object/:id'`. */
type ParamsOf<P extends string> = P extends `${string}:${infer Name}/${infer Rest}` ? Name | ParamsOf<`/${Rest}`> : P extends `${string}:${infer Name}` ? Name : never;
/** The path parameters and query of a call of `M P`, as its declaration names them. */
export type Parts<M extends Method, P extends string> = { params?: Record<ParamsOf<P>, string>; query?: QueryOf<M, P> };

/** A table route's path: its pattern's parameters filled in, then the query's defined members. */
export function tablePath(pattern: string, params: Record<string, string> = {}, query: object = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
  return pattern.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? '')) + (search.size > 0 ? `?${search}` : '');
}

/** What a client sends its requests through: the credential it holds, and its last login for `relogin`. */
export type Transport = ReturnType<typeof transport>;

export function transport(options: ClientOptions, rawFetch: FetchFunction = options.fetch ?? ((input, init) => fetch(input, init))) {
  const fetchFn = reachingFetch(rawFetch);
  const root = options.baseUrl.replace(/\/+$/, '') + (options.alias ? `/${encodeURIComponent(options.alias)}` : '');
  const rootPath = new URL(root).pathname.replace(/\/+$/, '');
  let relogging: Promise<unknown> | undefined;
  /** The path and query of `url` as the service sees them (what the secure transport signs). */
  const target = (url: URL) => url.pathname.slice(rootPath.length) + url.search;
  /** Headers with the app key and the credential `using` (a secure one goes through its channel instead). */
  function headersOf(using: Credential | undefined, extra: Record<string, string> = {}): Headers {
    const headers = new Headers({ appkey: options.appKey, ...extra });
    if (using?.kind === 'session') headers.set('sessionId', using.sessionId);
    if (using?.kind === 'token') headers.set('authorization', `Bearer ${using.token}`);
    return headers;
  }

  const t = {
    options,
    root,
    rawFetch,
    fetch: fetchFn,
    /** The credential requests use now. */
    credential: undefined as Credential | undefined,
    /** The last login, repeated when `relogin` is on and a session is refused. */
    lastLogin: undefined as (() => Promise<unknown>) | undefined,

    /** Sends one request; returns `data` of a success envelope, throws `OdbRestError` for a failure envelope. */
    async send<T>(method: string, path: string, body: unknown, using: Credential | undefined, bare = false): Promise<T> {
      const url = new URL(root + path);
      const json = body === undefined ? undefined : JSON.stringify(body);
      if (using?.kind === 'secure') {
        // The signed target is the path and query as the URL parser normalized them, as the server sees them.
        const answer = await using.channel.exchange(fetchFn, method, url.href, target(url), headersOf(undefined), json);
        if (!answer.encrypted) throw unencryptedAnswer(answer.status, answer.text);
        return unwrap<T>(answer.status, answer.headers, answer.text);
      }
      const headers = bare ? new Headers() : headersOf(using);
      if (json !== undefined) headers.set('content-type', 'application/json');
      const response = await fetchFn(url.href, { method, headers, body: json });
      return unwrap<T>(response.status, response.headers, await response.text());
    },

    /** Sends a file (raw body) or fetches one; an envelope answer is unwrapped (a failure thrown). */
    async sendFile(method: string, path: string, file: Blob | undefined, extra: Record<string, string>, sending = fetchFn): Promise<FileDownload | unknown> {
      const using = t.credential;
      const url = new URL(root + path);
      if (using?.kind === 'secure') {
        const answer = await using.channel.exchangeFile(sending, method, url.href, target(url), headersOf(undefined, extra), file);
        if (answer.stream) return { status: answer.status, headers: answer.headers, stream: answer.stream };
        if (!answer.encrypted) throw unencryptedAnswer(answer.status, answer.text);
        return unwrap(answer.status, answer.headers, answer.text);
      }
      const headers = headersOf(using, extra);
      if (file) headers.set('content-type', file.type || 'application/octet-stream');
      const response = await sending(url.href, { method, headers, body: file });
      const type = response.headers.get('content-type') ?? '';
      if (method === 'GET' && response.ok && !type.startsWith('application/json')) {
        return { status: response.status, headers: response.headers, stream: response.body ?? new Blob([]).stream() };
      }
      if (response.status === 304) return { status: 304, headers: response.headers, stream: new Blob([]).stream() };
      return unwrap(response.status, response.headers, await response.text());
    },

    /** Opens the event stream (PROTOCOL.md 8) with the current credential: its response, and the secure channel that decrypts its events. */
    async openEvents(query: string, lastEventId: string | undefined, signal: AbortSignal): Promise<{ response: Response; channel?: SecureChannel }> {
      const using = t.credential;
      const url = new URL(`${root}/v1/events?${query}`);
      const extra: Record<string, string> = { accept: 'text/event-stream' };
      if (lastEventId !== undefined) extra['last-event-id'] = lastEventId;
      if (using?.kind === 'secure') {
        const answer = await using.channel.openEvents(fetchFn, url.href, target(url), headersOf(undefined, extra), signal);
        if (answer.stream) return { response: answer.stream, channel: using.channel };
        if (!answer.encrypted) throw unencryptedAnswer(answer.status, answer.text);
        return unwrap(answer.status, answer.headers, answer.text);
      }
      const response = await fetchFn(url.href, { method: 'GET', headers: headersOf(using, extra), signal });
      if (response.status === 200 && response.headers.get('content-type')?.startsWith('text/event-stream')) return { response };
      return unwrap(response.status, response.headers, await response.text());
    },

    /** A login, remembered for `relogin`. */
    remember<A extends unknown[], R>(login: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
      return (...args) => {
        if (options.relogin) t.lastLogin = () => t.loggingIn(() => login(...args));
        return t.loggingIn(() => login(...args));
      };
    },

    /** Runs a login; after a `340` the client holds the set-up session it gave. */
    async loggingIn<T>(login: () => Promise<T>): Promise<T> {
      try {
        return await login();
      } catch (error) {
        if (error instanceof TwoFactorError && error.setupSessionId !== undefined) t.credential = { kind: 'session', sessionId: error.setupSessionId };
        throw error;
      }
    },

    /** Logs in again for a request refused with `used`, once for all requests refused meanwhile. */
    relogin(used: Credential | undefined): Promise<unknown> {
      if (relogging) return relogging;
      if (t.credential !== used) return Promise.resolve(); // a login since this request was sent
      relogging = t.lastLogin!().finally(() => (relogging = undefined));
      return relogging;
    },

    /** A request with the current credential (none when `auth` is false), logging in again on `201`/`204` when asked to. */
    async request<T>(method: string, path: string, body?: unknown, auth = true): Promise<T> {
      const used = auth ? t.credential : undefined;
      try {
        return await t.send<T>(method, path, body, used);
      } catch (error) {
        // on a secure session a 201/204 comes unencrypted (it may have been forged): logging in again is still safe
        const refused = error instanceof OdbRestError || error instanceof OdbRestUnauthenticatedRefusal;
        const expired = refused && (error.internalStatus === '201' || error.internalStatus === '204');
        if (!auth || !expired || !t.lastLogin) throw error;
        await t.relogin(used);
        return t.send<T>(method, path, body, t.credential);
      }
    },

    /** `M P` of the route table, its path parameters filled in: query, body and answer typed by its declaration (contract.ts). */
    call<M extends Method, P extends PathOf<M>>(method: M, pattern: P, parts: Parts<M, P> & { body?: BodyOf<M, P> } = {}, auth = true): Promise<AnswerOf<M, P>> {
      return t.request(method, tablePath(pattern, parts.params, parts.query), parts.body, auth);
    },
  };
  return t;
}

/** `fetch` whose failure (no answer at all) is an `OdbRestNetworkError`. */
export function reachingFetch(fetchFn: FetchFunction): FetchFunction {
  return async (input, init) => {
    try {
      return await fetchFn(input, init);
    } catch (error) {
      throw error instanceof OdbRestNetworkError ? error : new OdbRestNetworkError(init.method ?? 'GET', input, error);
    }
  };
}

/** A saved credential as `resume` takes it: exactly a non-empty `sessionId` or `token`. */
export function savedCredential(saved: SavedCredential): Credential {
  const { sessionId, token } = (saved ?? {}) as { sessionId?: unknown; token?: unknown };
  const members = typeof saved === 'object' && saved !== null ? Object.keys(saved) : [];
  if (members.length === 1 && typeof sessionId === 'string' && sessionId !== '') return { kind: 'session', sessionId };
  if (members.length === 1 && typeof token === 'string' && token !== '') return { kind: 'token', token };
  throw new TypeError(
    'resume takes { sessionId } or { token } as client.credential gave it; a secure login cannot be resumed (its key never leaves the client that logged in): log in again',
  );
}

/** The HTTP status the service gives an envelope's code, for an envelope read from text (an external login's callback page). */
export function envelopeHttpStatus(text: string): number {
  const code = parseEnvelope<unknown>(text)?.status?.internalStatus;
  return (typeof code === 'string' && (STATUS_CODES as Record<string, number>)[code]) || 200;
}

/**
 * The unencrypted answers a secure request may get (PROTOCOL.md 4), with their HTTP status: the
 * refusals of the message itself, which the server cannot encrypt.
 */
const UNENCRYPTED_REFUSALS = new Map([
  ['201', 401],
  ['204', 401],
  ['205', 401],
  ['413', 413],
  ['503', 503],
]);

/**
 * What an unencrypted answer to a secure request is: never data. One of the refusals the protocol
 * sends in the clear is an `OdbRestUnauthenticatedRefusal` (it may be forged); anything else, a
 * "success" or any other code, is a protocol error.
 */
export function unencryptedAnswer(httpStatus: number, text: string): Error {
  const status = parseEnvelope<unknown>(text)?.status;
  const code = status?.internalStatus;
  if (typeof code === 'string' && UNENCRYPTED_REFUSALS.get(code) === httpStatus) {
    return new OdbRestUnauthenticatedRefusal(code, httpStatus, String(status?.statusMessage ?? ''));
  }
  return new OdbRestProtocolError(`secure response refused: an answer (HTTP ${httpStatus}) was not encrypted and is not a transport refusal`, httpStatus);
}

function parseEnvelope<T>(text: string): Partial<Envelope<T>> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Partial<Envelope<T>>) : undefined;
  } catch {
    return undefined;
  }
}

/** `data` of a success envelope; a failure envelope is thrown as `OdbRestError`. */
export function unwrap<T>(httpStatus: number, headers: Headers, text: string): T {
  const parsed = parseEnvelope<T>(text);
  if (parsed === undefined) throw new OdbRestProtocolError(`answer is not a JSON envelope (HTTP ${httpStatus})`, httpStatus);
  const status = parsed.status;
  if (typeof status?.internalStatus !== 'string') throw new OdbRestProtocolError(`answer is not an envelope (HTTP ${httpStatus})`, httpStatus);
  if (TwoFactorError.isCode(status.internalStatus)) {
    const data = parsed.data as { sessionId?: unknown } | undefined;
    throw new TwoFactorError(status.internalStatus, httpStatus, status.statusMessage, typeof data?.sessionId === 'string' ? data.sessionId : undefined);
  }
  const data = typeof parsed.data === 'object' && parsed.data !== null && !Array.isArray(parsed.data) && Object.keys(parsed.data).length > 0 ? (parsed.data as Record<string, unknown>) : undefined;
  if (status.internalStatus === '409') throw new OdbRestConflictError(httpStatus, status.statusMessage, data);
  if (status.internalStatus !== '0') {
    const retryAfter = Number(headers.get('retry-after') ?? Number.NaN);
    throw new OdbRestError(status.internalStatus, httpStatus, status.statusMessage, Number.isFinite(retryAfter) ? retryAfter : undefined, data);
  }
  return parsed.data as T;
}
