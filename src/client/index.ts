import { base64 } from '@scure/base';
import type { Envelope } from '../http/envelope.js';
import { clientPassValue } from '../auth/passwords.js';
import { generateRsaKeyPair, OAEP, pemBody, toPem } from '../secure/keys.js';
import { blockDecrypt, blockEncrypt } from '../secure/rsa.js';
import { OdbRestConflictError, OdbRestError, OdbRestNetworkError, OdbRestProtocolError, OdbRestUnauthenticatedRefusal, TwoFactorError } from './errors.js';
import { STATUS_CODES } from '../http/errors.js';
import { hybridKeyPair, hybridLoginBody, openHybridAnswer } from './hybrid-login.js';
import { SecureChannel, type FetchFunction } from './secure-channel.js';
import { subscribeEvents, type EventSubscription, type EventSubscriptionHandle, type SubscribeOptions } from './events.js';
import { isPinnedKey, pinnedKeyHashes } from './server-key-pin.js';
import type { SymmetricCrypto } from '../secure/symmetric.js';
import type {
  BatchItem,
  BatchResult,
  DownloadOptions,
  ExternalLoginOptions,
  ExternalLoginResult,
  FileDownload,
  UploadOptions,
  ListOptions,
  LoginCredentials,
  ObjectFields,
  SavedCredential,
  SecureLogin,
  SerializedObject,
  SerializedSet,
  ServiceInfo,
  SessionKind,
  SessionLogin,
  TokenLogin,
  TwoFactorCalls,
  TwoFactorEnrolment,
  TwoFactorStatus,
  UpdateOptions,
} from './types.js';

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
   * The server key a secure login must find: its public key as a PEM, or the SHA-256 fingerprint of
   * its SPKI DER (64 hex digits or base64); a list accepts any of them (while a key is changed). Any
   * other key is refused before the credentials are encrypted and sent. Without it, the client
   * trusts the key `GET /v2/login/secure/key` answers, which anyone on the path can swap.
   */
  serverKey?: string | readonly string[];
  /** AES-CTR and HMAC of the secure transport. Default: `portableCrypto`; on Node, Bun or Deno `nodeCrypto` from `odbrest/node` is faster. */
  symmetricCrypto?: SymmetricCrypto;
  /**
   * Log in again by itself, with the last login's variant and credentials, when a request is refused
   * with `201` or `204` (the session expired or was lost), then send the request once more, as the
   * real clients do. Concurrent refusals share one login. Off by default; `logout` ends it.
   */
  relogin?: boolean;
}

export interface SecureLoginOptions {
  /** The client's RSA-OAEP (SHA-1) key pair; default a new 2048-bit pair per login. */
  keyPair?: CryptoKeyPair;
}

export interface HybridLoginOptions {
  /** The client's RSA-OAEP (SHA-256) key pair for the sealed answer; default a new 2048-bit pair per login. */
  keyPair?: CryptoKeyPair;
  /** Send no public key: the answer comes as plain JSON. Default false (sealed, as the real clients ask). */
  plainAnswer?: boolean;
}

/**
 * Every login throws `TwoFactorError` when the service asks for a second factor: `need` says what to
 * do (`code`: ask for one and log in again with `twoFactorToken`; `enrolment`: set it up through
 * `twoFactor`, with the set-up session the client then holds, and log in again).
 */
export interface OdbRestClient {
  /** Plain login; later requests send `sessionId`. */
  login(credentials: LoginCredentials): Promise<SessionLogin>;
  /** Hybrid login (what the product's clients do): the login sealed to the server key, a plain session after. */
  loginHybrid(credentials: LoginCredentials, options?: HybridLoginOptions): Promise<SessionLogin>;
  /** Token login; later requests send `Authorization: Bearer <jwt>`. */
  loginToken(credentials: LoginCredentials): Promise<TokenLogin>;
  /** Secure login; later requests go through the encrypted, signed transport. */
  loginSecure(credentials: LoginCredentials, options?: SecureLoginOptions): Promise<SecureLogin>;
  /** Custom login of a non-database user (`/v1/auth/df`, e.g. a contact person); later requests send `sessionId`. */
  loginCustom(credentials: LoginCredentials): Promise<SessionLogin>;
  /**
   * Continues a saved plain session or token (`credential` of an earlier client) without a new login:
   * checks it once with `_CheckSession` and then uses it. An expired, logged-out or unknown one throws
   * `OdbRestError` (`201`, or `205` for a secure session's token) and the client keeps no credential.
   * A secure login cannot be resumed (its key never leaves the client that logged in): log in again.
   * `relogin` does not apply to a resumed session (the client holds no password).
   */
  resume(saved: SavedCredential): Promise<void>;
  /**
   * The current plain session or token, to save and pass to `resume` later; `undefined` before a
   * login, after `logout`, and for a secure login. A secret: whoever holds it is the user until the
   * session ends. Keep it where the app keeps secrets (`sessionStorage`, a keychain), never in logs
   * or URLs. It is not enumerable, so `JSON.stringify(client)` leaves it out.
   */
  readonly credential: SavedCredential | undefined;
  /**
   * The address that starts an external login with `provider` (its configured name, e.g. `Google`):
   * a browser navigates to it (the app key is in its query, as a navigation sends no headers), signs
   * in at the provider and ends at the service's callback, which answers an envelope.
   */
  externalLoginUrl(provider: string, options?: ExternalLoginOptions): string;
  /**
   * Reads the callback's answer (its `Response`, or the envelope's text): a linked identity gives a
   * session, which the client then holds; a new identity gives a `dfUuid` for `linkExternalLogin`. A
   * refused callback throws `OdbRestError` (`320`-`323`).
   */
  completeExternalLogin(answer: Response | string): Promise<ExternalLoginResult>;
  /** `/v1/extLogin`: links the new identity of `dfUuid` to this database user (checked as `login` does) and logs in. */
  linkExternalLogin(dfUuid: string, credentials: LoginCredentials): Promise<SessionLogin>;
  getObject<T extends SerializedObject = SerializedObject>(objectId: string): Promise<T>;
  listObjects<T extends SerializedObject = SerializedObject>(className: string, options?: ListOptions): Promise<SerializedSet<T>>;
  /** Creates an object of `className`; answers it as stored. */
  createObject<T extends SerializedObject = SerializedObject>(className: string, fields: ObjectFields): Promise<T>;
  /** Changes the fields given (`null` stores null); with `storeTime`, only if the object is still that version (else `OdbRestConflictError`). */
  updateObject<T extends SerializedObject = SerializedObject>(objectId: string, fields: ObjectFields, options?: UpdateOptions): Promise<T>;
  deleteObject(objectId: string): Promise<void>;
  execute<T = unknown>(macroName: string, params?: Record<string, unknown>): Promise<T>;
  /** Uploads a file in the three steps of PROTOCOL.md 6.6 (any login kind); answers the file object. */
  uploadFile<T extends SerializedObject = SerializedObject>(data: Blob | Uint8Array<ArrayBuffer>, options?: UploadOptions): Promise<T>;
  /** Downloads a file's bytes (any login kind), streamed; a failure envelope is thrown as `OdbRestError`. */
  downloadFile(objectId: string, options?: DownloadOptions): Promise<FileDownload>;
  /** Runs up to 100 requests in one `/v1/multi` round trip, in order; each answers its own status and envelope. */
  multi(items: readonly BatchItem[]): Promise<BatchResult[]>;
  /**
   * Change events (PROTOCOL.md 8) of up to 20 subscriptions: iterate the answer (`for await`) or pass
   * `onEvent`. It reconnects with backoff and `Last-Event-ID`; on a secure session each event is
   * verified and decrypted (an unsigned one ends it with an `OdbRestProtocolError`).
   */
  subscribe(subscriptions: EventSubscription[], options?: SubscribeOptions): EventSubscriptionHandle;
  /** Whether the current session still lives (`_CheckSession`); false on `201`/`204`, never logging in again. */
  checkSession(): Promise<boolean>;
  /** `_CheckService`, sent without any header: fails with `503` while a store of the service is down. */
  checkService(): Promise<ServiceInfo>;
  /** Ends the current session (any variant) and forgets its credential. */
  logout(): Promise<void>;
  /** `/v1/2fa/*` for the logged-in user (also with the set-up session of a `340`). */
  readonly twoFactor: TwoFactorCalls;
  /** Gives back the licence seats of these applications (`/v1/license/release`); the session no longer holds them. */
  releaseLicences(appNames: string[] | string): Promise<void>;
  /** The kind of the current login, if any. */
  readonly sessionKind: SessionKind | undefined;
}

type Credential = { kind: 'session'; sessionId: string } | { kind: 'token'; token: string } | { kind: 'secure'; channel: SecureChannel };

export function createClient(options: ClientOptions): OdbRestClient {
  const fetchFn = reachingFetch(options.fetch ?? ((input, init) => fetch(input, init)));
  const root = options.baseUrl.replace(/\/+$/, '') + (options.alias ? `/${encodeURIComponent(options.alias)}` : '');
  const rootPath = new URL(root).pathname.replace(/\/+$/, '');
  const pinnedKeys = options.serverKey === undefined ? undefined : pinnedKeyHashes(options.serverKey);
  let credential: Credential | undefined;

  /** Sends one request; returns `data` of a success envelope, throws `OdbRestError` for a failure envelope. */
  async function send<T>(method: string, path: string, body: unknown, using: Credential | undefined, bare = false): Promise<T> {
    const url = new URL(root + path);
    const headers = new Headers(bare ? {} : { appkey: options.appKey });
    const json = body === undefined ? undefined : JSON.stringify(body);
    if (using?.kind === 'secure') {
      // The signed target is the path and query as the URL parser normalized them, as the server sees them.
      const target = url.pathname.slice(rootPath.length) + url.search;
      const answer = await using.channel.exchange(fetchFn, method, url.href, target, headers, json);
      if (!answer.encrypted) throw unencryptedAnswer(answer.status, answer.text);
      return unwrap<T>(answer.status, answer.headers, answer.text);
    }
    if (using?.kind === 'session') headers.set('sessionId', using.sessionId);
    if (using?.kind === 'token') headers.set('authorization', `Bearer ${using.token}`);
    if (json !== undefined) headers.set('content-type', 'application/json');
    const response = await fetchFn(url.href, { method, headers, body: json });
    return unwrap<T>(response.status, response.headers, await response.text());
  }

  /** Sends a file (raw body) or fetches one; an envelope answer is unwrapped (a failure thrown). */
  async function sendFile(method: string, path: string, file: Blob | undefined, extra: Record<string, string>): Promise<FileDownload | unknown> {
    const using = credential;
    const url = new URL(root + path);
    const headers = new Headers({ appkey: options.appKey, ...extra });
    if (using?.kind === 'secure') {
      const answer = await using.channel.exchangeFile(fetchFn, method, url.href, url.pathname.slice(rootPath.length) + url.search, headers, file);
      if (answer.stream) return { status: answer.status, headers: answer.headers, stream: answer.stream };
      if (!answer.encrypted) throw unencryptedAnswer(answer.status, answer.text);
      return unwrap(answer.status, answer.headers, answer.text);
    }
    if (using?.kind === 'session') headers.set('sessionId', using.sessionId);
    if (using?.kind === 'token') headers.set('authorization', `Bearer ${using.token}`);
    if (file) headers.set('content-type', file.type || 'application/octet-stream');
    const response = await fetchFn(url.href, { method, headers, body: file });
    const type = response.headers.get('content-type') ?? '';
    if (method === 'GET' && response.ok && !type.startsWith('application/json')) {
      return { status: response.status, headers: response.headers, stream: response.body ?? new Blob([]).stream() };
    }
    if (response.status === 304) return { status: 304, headers: response.headers, stream: new Blob([]).stream() };
    return unwrap(response.status, response.headers, await response.text());
  }

  /** The last login, repeated when `relogin` is on and a session is refused. */
  let lastLogin: (() => Promise<unknown>) | undefined;
  let relogging: Promise<unknown> | undefined;
  const remember = <A extends unknown[], R>(login: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      if (options.relogin) lastLogin = () => loggingIn(() => login(...args));
      return loggingIn(() => login(...args));
    };
  /** Logs in again for a request refused with `used`, once for all requests refused meanwhile. */
  function relogin(used: Credential | undefined): Promise<unknown> {
    if (relogging) return relogging;
    if (credential !== used) return Promise.resolve(); // a login since this request was sent
    relogging = lastLogin!().finally(() => (relogging = undefined));
    return relogging;
  }

  /** A request with the current credential (none when `auth` is false), logging in again on `201`/`204` when asked to. */
  async function request<T>(method: string, path: string, body?: unknown, auth = true): Promise<T> {
    const used = auth ? credential : undefined;
    try {
      return await send<T>(method, path, body, used);
    } catch (error) {
      // on a secure session a 201/204 comes unencrypted (it may have been forged): logging in again is still safe
      const refused = error instanceof OdbRestError || error instanceof OdbRestUnauthenticatedRefusal;
      const expired = refused && (error.internalStatus === '201' || error.internalStatus === '204');
      if (!auth || !expired || !lastLogin) throw error;
      await relogin(used);
      return send<T>(method, path, body, credential);
    }
  }

  function loginBody(credentials: LoginCredentials) {
    const pass = credentials.pass ?? (credentials.password === undefined ? undefined : clientPassValue(credentials.password));
    if (pass === undefined) throw new TypeError('login needs password or pass');
    const body = { user: credentials.user, pass, appNames: credentials.appNames };
    return credentials.twoFactorToken === undefined ? body : { ...body, '2faToken': credentials.twoFactorToken };
  }

  /** Runs a login; after a `340` the client holds the set-up session it gave. */
  async function loggingIn<T>(login: () => Promise<T>): Promise<T> {
    try {
      return await login();
    } catch (error) {
      if (error instanceof TwoFactorError && error.setupSessionId !== undefined) credential = { kind: 'session', sessionId: error.setupSessionId };
      throw error;
    }
  }

  const twoFactorPath = (path: string, app: string) => `/v1/2fa/${path}?app=${encodeURIComponent(app)}`;
  const twoFactor: TwoFactorCalls = {
    status: (app) => request<TwoFactorStatus>('GET', twoFactorPath('secret', app)),
    enrol: (app) => request<TwoFactorEnrolment>('POST', twoFactorPath('secret', app)),
    confirm: async (app, token) => void (await request('PATCH', twoFactorPath('secret', app), { token })),
    remove: async (app, token) => void (await request('DELETE', twoFactorPath('secret', app), { token })),
    validate: async (app, token) => void (await request('POST', twoFactorPath('validate', app), { token })),
  };

  async function loginSecure(credentials: LoginCredentials, secureOptions: SecureLoginOptions = {}): Promise<SecureLogin> {
    const { key } = await request<{ key: string }>('GET', '/v2/login/secure/key', undefined, false);
    const serverDer = pemBody(key, ['PUBLIC KEY']);
    if (!serverDer) throw new OdbRestProtocolError('the server key is not an SPKI PEM', 200);
    if (pinnedKeys && !isPinnedKey(serverDer.der, pinnedKeys)) {
      throw new OdbRestProtocolError('secure login refused: the server key is not the pinned serverKey; the credentials were not sent', 200);
    }
    const serverKey = await crypto.subtle.importKey('spki', serverDer.der, OAEP, false, ['encrypt']);
    const keyPair = secureOptions.keyPair ?? (await generateRsaKeyPair(2048));
    const publicKey = toPem('PUBLIC KEY', new Uint8Array(await crypto.subtle.exportKey('spki', keyPair.publicKey)));
    const sealed = await blockEncrypt(serverKey, new TextEncoder().encode(JSON.stringify(loginBody(credentials))));

    const response = await fetchFn(`${root}/v2/login/secure`, {
      method: 'POST',
      headers: { appkey: options.appKey, 'content-type': 'application/json' },
      body: JSON.stringify({ credentials: base64.encode(sealed), publicKey }),
    });
    const text = await response.text();
    // Failures come back as plain JSON envelopes; success is base64 of the envelope sealed to our key.
    if (!response.ok || /json/i.test(response.headers.get('content-type') ?? '')) {
      unwrap(response.status, response.headers, text);
      throw new OdbRestProtocolError('secure login answered a plain envelope', response.status);
    }
    let opened: string;
    try {
      opened = new TextDecoder().decode(await blockDecrypt(keyPair.privateKey, base64.decode(text.trim()), Number.POSITIVE_INFINITY));
    } catch {
      throw new OdbRestProtocolError('secure login answer does not decrypt with the client key', response.status);
    }
    const data = unwrap<SecureLogin & { sessionId: string; symmetricKey: string }>(response.status, response.headers, opened);
    const { sessionId, symmetricKey, ...answer } = data;
    credential = { kind: 'secure', channel: new SecureChannel(sessionId, base64.decode(symmetricKey), options.symmetricCrypto) };
    return answer;
  }

  /** A login answered by a plain session (`/v1/login`, `/v1/auth/df`, `/v1/extLogin`). */
  async function sessionLogin(path: string, body: unknown): Promise<SessionLogin> {
    const data = await request<SessionLogin>('POST', path, body, false);
    credential = { kind: 'session', sessionId: data.sessionId };
    return data;
  }

  async function loginHybrid(credentials: LoginCredentials, hybrid: HybridLoginOptions = {}): Promise<SessionLogin> {
    const { key } = await request<{ key: string }>('GET', '/v2/login/key', undefined, false);
    const keyPair = hybrid.plainAnswer ? undefined : (hybrid.keyPair ?? (await hybridKeyPair()));
    const response = await fetchFn(`${root}/v2/login`, {
      method: 'POST',
      headers: { appkey: options.appKey, 'content-type': 'application/json' },
      body: await hybridLoginBody(key, JSON.stringify(loginBody(credentials)), keyPair?.publicKey),
    });
    const text = await response.text();
    // Read as the real clients do: JSON when it starts with `{` (failures, or no key sent), else `A|B`.
    const envelope = text.startsWith('{') || !keyPair ? text : JSON.stringify(await openHybridAnswer(keyPair.privateKey, text, response.status));
    const data = unwrap<SessionLogin>(response.status, response.headers, envelope);
    credential = { kind: 'session', sessionId: data.sessionId };
    return data;
  }

  const client: OdbRestClient = {
    login: remember((credentials: LoginCredentials) => sessionLogin('/v1/login', loginBody(credentials))),
    loginCustom: remember((credentials: LoginCredentials) => sessionLogin('/v1/auth/df', loginBody(credentials))),
    loginHybrid: remember(loginHybrid),
    loginToken: remember(async (credentials: LoginCredentials) => {
      const data = await request<TokenLogin>('POST', '/v2/login', loginBody(credentials), false);
      credential = { kind: 'token', token: data.token };
      return data;
    }),
    loginSecure: remember(loginSecure),
    async resume(saved) {
      const resumed = savedCredential(saved);
      await send('GET', '/_CheckSession', undefined, resumed);
      lastLogin = undefined;
      credential = resumed;
    },
    get credential() {
      if (credential?.kind === 'session') return { sessionId: credential.sessionId };
      if (credential?.kind === 'token') return { token: credential.token };
      return undefined;
    },
    externalLoginUrl(provider, external = {}) {
      const query = new URLSearchParams({ appkey: options.appKey });
      for (const name of [external.appNames ?? []].flat()) query.append('appNames', name);
      return `${root}/v1/auth/${encodeURIComponent(provider.toLowerCase())}?${query}`;
    },
    async completeExternalLogin(answer) {
      const text = typeof answer === 'string' ? answer : await answer.text();
      const status = typeof answer === 'string' ? envelopeHttpStatus(text) : answer.status;
      const data = unwrap<{ sessionId?: unknown; dfUuid?: unknown }>(status, typeof answer === 'string' ? new Headers() : answer.headers, text);
      if (typeof data?.sessionId === 'string') {
        lastLogin = undefined;
        credential = { kind: 'session', sessionId: data.sessionId };
        return { kind: 'session', login: data as SessionLogin };
      }
      if (typeof data?.dfUuid === 'string') return { kind: 'unlinked', dfUuid: data.dfUuid };
      throw new OdbRestProtocolError('the external login answer holds neither a sessionId nor a dfUuid', status);
    },
    async linkExternalLogin(dfUuid, credentials) {
      lastLogin = undefined; // the dfUuid is used up: there is nothing to repeat
      return loggingIn(() => sessionLogin('/v1/extLogin', { ...loginBody(credentials), dfUuid }));
    },
    twoFactor,
    releaseLicences: async (appNames) => void (await request('POST', '/v1/license/release', { appNames })),
    getObject: (objectId) => request('GET', `/v1/object/${encodeURIComponent(objectId)}`),
    listObjects(className, list = {}) {
      const query = new URLSearchParams();
      if (list.page !== undefined) query.set('page', String(list.page));
      if (list.perPage !== undefined) query.set('perPage', String(list.perPage));
      if (list.query !== undefined) query.set('query', JSON.stringify(list.query));
      if (list.orderBy !== undefined) query.set('orderBy', list.orderBy);
      if (list.reverseOrder !== undefined) query.set('reverseOrder', String(list.reverseOrder));
      const search = query.size > 0 ? `?${query}` : '';
      return request('GET', `/v1/objects/${encodeURIComponent(className)}${search}`);
    },
    createObject: (className, fields) => request('POST', `/v1/object/${encodeURIComponent(className)}`, fields),
    updateObject: (objectId, fields, update = {}) =>
      request('PATCH', `/v1/object/${encodeURIComponent(objectId)}`, update.storeTime === undefined ? fields : { ...fields, '~StoreTime': update.storeTime }),
    deleteObject: async (objectId) => void (await request('DELETE', `/v1/object/${encodeURIComponent(objectId)}`)),
    execute: (macroName, params) => request('POST', `/v1/execute/${encodeURIComponent(macroName)}`, params ?? undefined),
    multi: (items) => request('POST', '/v1/multi', items),
    subscribe: (subscriptions, subscribeOptions) =>
      subscribeEvents(
        {
          async connect(query, lastEventId, signal) {
            const using = credential;
            const url = new URL(`${root}/v1/events?${query}`);
            const headers = new Headers({ appkey: options.appKey, accept: 'text/event-stream' });
            if (lastEventId !== undefined) headers.set('last-event-id', lastEventId);
            if (using?.kind === 'secure') {
              const answer = await using.channel.openEvents(fetchFn, url.href, url.pathname.slice(rootPath.length) + url.search, headers, signal);
              if (answer.stream) return { response: answer.stream, channel: using.channel };
              if (!answer.encrypted) throw unencryptedAnswer(answer.status, answer.text);
              return unwrap(answer.status, answer.headers, answer.text);
            }
            if (using?.kind === 'session') headers.set('sessionId', using.sessionId);
            if (using?.kind === 'token') headers.set('authorization', `Bearer ${using.token}`);
            const response = await fetchFn(url.href, { method: 'GET', headers, signal });
            if (response.status === 200 && response.headers.get('content-type')?.startsWith('text/event-stream')) return { response };
            return unwrap(response.status, response.headers, await response.text());
          },
          async relogin() {
            if (!lastLogin) return false;
            await relogin(credential);
            return true;
          },
        },
        subscriptions,
        subscribeOptions,
      ),
    async uploadFile(data, upload = {}) {
      const blob = data instanceof Blob ? data : new Blob([data]);
      const name = upload.name ?? (typeof File !== 'undefined' && data instanceof File ? data.name : undefined);
      const query = new URLSearchParams({ contentType: upload.contentType ?? (blob.type || 'application/octet-stream') });
      if (name !== undefined) query.set('name', name);
      const { uploadId } = await request<{ uploadId: string }>('GET', '/v1/uploadFile');
      const path = `/v1/uploadFile/${encodeURIComponent(uploadId)}`;
      await sendFile('POST', `${path}?${query}`, blob, {});
      const replace = upload.replaceOID === undefined ? '' : `?replaceOID=${encodeURIComponent(upload.replaceOID)}`;
      return request('PATCH', path + replace);
    },
    async downloadFile(objectId, download = {}) {
      const extra: Record<string, string> = {};
      if (download.range !== undefined) extra.range = download.range;
      if (download.ifNoneMatch !== undefined) extra['if-none-match'] = download.ifNoneMatch;
      return (await sendFile('GET', `/v1/file/${encodeURIComponent(objectId)}`, undefined, extra)) as FileDownload;
    },
    async checkSession() {
      try {
        await send('GET', '/_CheckSession', undefined, credential);
        return true;
      } catch (error) {
        if (error instanceof OdbRestError && (error.internalStatus === '201' || error.internalStatus === '204')) return false;
        throw error;
      }
    },
    checkService: () => send('GET', '/_CheckService', undefined, undefined, true),
    async logout() {
      lastLogin = undefined;
      try {
        await send('POST', '/v1/logout', undefined, credential);
      } finally {
        credential = undefined;
      }
    },
    get sessionKind() {
      return credential?.kind;
    },
  };
  // a secret: left out of JSON.stringify(client), spreads and enumerations
  Object.defineProperty(client, 'credential', { enumerable: false });
  return client;
}

/** `fetch` whose failure (no answer at all) is an `OdbRestNetworkError`. */
function reachingFetch(fetchFn: FetchFunction): FetchFunction {
  return async (input, init) => {
    try {
      return await fetchFn(input, init);
    } catch (error) {
      throw error instanceof OdbRestNetworkError ? error : new OdbRestNetworkError(init.method ?? 'GET', input, error);
    }
  };
}

/** A saved credential as `resume` takes it: exactly a non-empty `sessionId` or `token`. */
function savedCredential(saved: SavedCredential): Credential {
  const { sessionId, token } = (saved ?? {}) as { sessionId?: unknown; token?: unknown };
  const members = typeof saved === 'object' && saved !== null ? Object.keys(saved) : [];
  if (members.length === 1 && typeof sessionId === 'string' && sessionId !== '') return { kind: 'session', sessionId };
  if (members.length === 1 && typeof token === 'string' && token !== '') return { kind: 'token', token };
  throw new TypeError(
    'resume takes { sessionId } or { token } as client.credential gave it; a secure login cannot be resumed (its key never leaves the client that logged in): log in again',
  );
}

/** The HTTP status the service gives an envelope's code, for an envelope read from text (an external login's callback page). */
function envelopeHttpStatus(text: string): number {
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
function unencryptedAnswer(httpStatus: number, text: string): Error {
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
function unwrap<T>(httpStatus: number, headers: Headers, text: string): T {
  const parsed = parseEnvelope<T>(text);
  if (parsed === undefined) throw new OdbRestProtocolError(`answer is not a JSON envelope (HTTP ${httpStatus})`, httpStatus);
  const status = parsed.status;
  if (typeof status?.internalStatus !== 'string') throw new OdbRestProtocolError(`answer is not an envelope (HTTP ${httpStatus})`, httpStatus);
  if (TwoFactorError.isCode(status.internalStatus)) {
    const data = parsed.data as { sessionId?: unknown } | undefined;
    throw new TwoFactorError(status.internalStatus, httpStatus, status.statusMessage, typeof data?.sessionId === 'string' ? data.sessionId : undefined);
  }
  if (status.internalStatus === '409') throw new OdbRestConflictError(httpStatus, status.statusMessage);
  if (status.internalStatus !== '0') {
    const retryAfter = Number(headers.get('retry-after') ?? Number.NaN);
    throw new OdbRestError(status.internalStatus, httpStatus, status.statusMessage, Number.isFinite(retryAfter) ? retryAfter : undefined);
  }
  return parsed.data as T;
}

export {
  OdbRestConflictError,
  OdbRestError,
  OdbRestNetworkError,
  OdbRestProtocolError,
  OdbRestUnauthenticatedRefusal,
  TwoFactorError,
  type TwoFactorNeed,
} from './errors.js';
export type { FetchFunction } from './secure-channel.js';
export type { ChangeEvent, EventSubscription, EventSubscriptionHandle, SubscribeOptions } from './events.js';
export { portableCrypto, type SymmetricCrypto } from '../secure/symmetric.js';
export type * from './types.js';
