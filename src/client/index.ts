import { base64 } from '@scure/base';
import type { Envelope } from '../http/envelope.js';
import { clientPassValue } from '../auth/passwords.js';
import { generateRsaKeyPair, OAEP, pemBody, toPem } from '../secure/keys.js';
import { blockDecrypt, blockEncrypt } from '../secure/rsa.js';
import { OdbRestConflictError, OdbRestError, OdbRestNetworkError, OdbRestProtocolError, OdbRestUnauthenticatedRefusal, TwoFactorError } from './errors.js';
import { STATUS_CODES } from '../http/errors.js';
import { hybridKeyPair, hybridLoginBody, openHybridAnswer } from './hybrid-login.js';
import { SecureChannel } from './secure-channel.js';
import { subscribeEvents, type EventSubscription, type EventSubscriptionHandle, type SubscribeOptions } from './events.js';
import { isPinnedKey, pinnedKeyHashes } from './server-key-pin.js';
import { reportingFetch } from './upload-body.js';
import { verifyLoginSignature } from '../secure/login-signature.js';
import type { SymmetricCrypto } from '../secure/symmetric.js';
import type { AnswerOf, BodyOf, PathOf, QueryOf } from '../contract.js';
import type { Method } from '../http/router.js';
import type {
  AccountCalls,
  AdminCalls,
  SavedQueryCalls,
  FetchFunction,
  PasswordInput,
  BatchItem,
  BatchResult,
  ClassStructure,
  CreateCheck,
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
  Serialization,
  SerializationOption,
  SerializedObject,
  SerializedSet,
  ClassSummary,
  ReferencedByOptions,
  ServiceInfo,
  SessionKind,
  SessionLogin,
  TokenLogin,
  TwoFactorCalls,
  TwoFactorEnrolment,
  TwoFactorStatus,
  UpdateOptions,
  WriteOptions,
  WriteAction,
  LockStatus,
  SecurityEntry,
  Filter,
  QueryMembers,
  V2Calls,
  V2Selecting,
} from './types.js';

/** The `serialization` as sent: a `class` serialization's `classes` become members named by class. */
function serializationValue(serialization: Serialization): Record<string, unknown> {
  if (serialization.type === 'class' && serialization.classes) {
    const { classes, ...rest } = serialization;
    return { ...classes, ...rest };
  }
  return { ...serialization };
}
const serializationParam = (serialization: Serialization): string => JSON.stringify(serializationValue(serialization));

/**
 * The query object (PROTOCOL.md 6.2) of a listing's options: field conditions, query text as
 * `queryString`, and the members `oids`, `sortIndex`, `macro`, `macroLevel`, `folderPath`,
 * `folderType`; `undefined` when none is given.
 */
function queryObject(options: { query?: Filter | string } & QueryMembers): Record<string, unknown> | undefined {
  const { query, queryText, oids, sortIndex, macro, macroLevel, folderPath, folderType } = options;
  if (typeof query === 'string' && queryText !== undefined) throw new TypeError('give query text either as query or as queryText, not both');
  const members = { queryString: typeof query === 'string' ? query : queryText, oids, sortIndex, macro, macroLevel, folderPath, folderType };
  const given = Object.entries(members).filter(([, value]) => value !== undefined);
  if (query === undefined || typeof query === 'string') return given.length === 0 ? undefined : Object.fromEntries(given);
  return { ...query, ...Object.fromEntries(given) };
}

/** A v2 item as sent: `query` stays text unless field conditions or other members ask for the query object. */
function v2Item<T extends V2Selecting>(item: T): Record<string, unknown> {
  const { query, queryText, oids, sortIndex, macro, macroLevel, folderPath, folderType, serialization, ...rest } = item;
  const sent: Record<string, unknown> = { ...rest };
  const members = { queryText, oids, sortIndex, macro, macroLevel, folderPath, folderType };
  const plainText = Object.values(members).every((value) => value === undefined) && typeof query !== 'object';
  const selected = plainText ? query : queryObject({ query, ...members });
  if (selected !== undefined) sent.query = selected;
  if (serialization !== undefined) sent.serialization = serializationValue(serialization);
  return sent;
}

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
  /**
   * Whether a secure login can be made from here: WebCrypto is present and the service answers its
   * key (`GET /v2/login/secure/key`; where `serverKey` pins keys, the pinned one). Never throws.
   */
  secureLoginAvailable(): Promise<boolean>;
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
  /** An object; `serialization` shapes it (`{type: 'oid'}`, a field list, ...); the same option on the calls below. */
  getObject<T extends SerializedObject = SerializedObject>(objectId: string, options?: SerializationOption): Promise<T>;
  listObjects<T extends SerializedObject = SerializedObject>(className: string, options?: ListOptions): Promise<SerializedSet<T>>;
  /** `GET /v1/classes`: the classes this session may read (declared, named in the access rules, or holding objects), by name, with counts. */
  classes(): Promise<SerializedSet<ClassSummary>>;
  /** `GET /v1/object/{id}/referencedBy`: a page of the objects, of any class, that reference this one and that this session may read. */
  referencedBy<T extends SerializedObject = SerializedObject>(objectId: string, options?: ReferencedByOptions): Promise<SerializedSet<T>>;
  /** Creates an object of `className`; answers it as stored. */
  createObject<T extends SerializedObject = SerializedObject>(className: string, fields: ObjectFields, options?: WriteOptions): Promise<T>;
  /**
   * `POST /v1/model/classes/{className}/check`: checks up to 1,000 objects as `createObject` would
   * (the declaration, the create rule, references), writing nothing; each refusal with its index.
   */
  checkObjects(className: string, objects: ObjectFields[]): Promise<CreateCheck>;
  /** Changes the fields given (`null` stores null); with `storeTime`, only if the object is still that version (else `OdbRestConflictError`). */
  updateObject<T extends SerializedObject = SerializedObject>(objectId: string, fields: ObjectFields, options?: UpdateOptions): Promise<T>;
  /** Deletes an object; `moveToRecycler` puts it in this user's recycle bin instead. */
  deleteObject(objectId: string, options?: { moveToRecycler?: boolean }): Promise<void>;
  /** `PATCH /v1/objects/{className}`: changes `fields` on every object `query` selects (at most 1,000; all or nothing). */
  updateObjects<T extends SerializedObject = SerializedObject>(className: string, fields: ObjectFields, options?: { query?: Filter }): Promise<SerializedSet<T>>;
  /** `POST /v1/action/{className}`: runs `actions` on every object of the selection's page; answers the selection. */
  runActions<T extends SerializedObject = SerializedObject>(className: string, actions: WriteAction[], options?: { query?: Filter; page?: number; perPage?: number }): Promise<SerializedSet<T>>;
  /** This user's recycled objects, each with `~DeletedAt`. */
  recycleBin<T extends SerializedObject = SerializedObject>(): Promise<SerializedSet<T & { '~DeletedAt': string }>>;
  /** Puts a recycled object back; answers it. */
  restoreObject<T extends SerializedObject = SerializedObject>(objectId: string): Promise<T>;
  /** Deletes this user's recycled objects for good. */
  emptyRecycleBin(): Promise<void>;
  /** Whether another session holds a lock on the object. */
  lockStatus(objectId: string): Promise<LockStatus>;
  /** Takes or renews this session's lock (1 to 240 minutes, default 15); `OdbRestError` 423 when another session holds it. */
  lockObject(objectId: string, minutes?: number): Promise<LockStatus>;
  unlockObject(objectId: string): Promise<LockStatus>;
  /** Per-object security entries, merged per name (`replace: true` replaces them; `[]` with it removes them). */
  setObjectSecurity(objectId: string, security: SecurityEntry[], options?: { replace?: boolean }): Promise<void>;
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
  /** Password change and reset, sessions, user administration and passkeys (PROTOCOL.md 2.8). */
  readonly accounts: AccountCalls;
  /** Classes declared at run time, the instance's metrics and recent requests (PROTOCOL.md 6.12; `users.admins` only). */
  readonly admin: AdminCalls;
  /** The logged-in user's saved queries (PROTOCOL.md 6.12). */
  readonly savedQueries: SavedQueryCalls;
  /** The kind of the current login, if any. */
  readonly sessionKind: SessionKind | undefined;
  /** `GET /v1/model/structure`: the declared classes (or those named) the session may read. */
  modelStructure(classes?: readonly string[]): Promise<SerializedSet<ClassStructure>>;
  /** The v2 group (object data by query, id and parent; the model; app config, theme, views; files). */
  readonly v2: V2Calls;
}

/** `pass` as the service takes it: the MD5 form of a password, or `pass` as given. */
function passOf(input: PasswordInput | { password?: string; pass?: string }): string {
  if ('pass' in input && input.pass !== undefined) return input.pass;
  if ('password' in input && input.password !== undefined) return clientPassValue(input.password);
  throw new TypeError('give password or pass');
}

/** A new password: sent in plain form, so that the service's policy can check it (`pass` in the MD5 form cannot be checked). */
function newPassOf(input: PasswordInput | { password?: string; pass?: string }): string {
  if ('password' in input && input.password !== undefined) return input.password;
  return passOf(input);
}

type Credential = { kind: 'session'; sessionId: string } | { kind: 'token'; token: string } | { kind: 'secure'; channel: SecureChannel };

export function createClient(options: ClientOptions): OdbRestClient {
  const rawFetch: FetchFunction = options.fetch ?? ((input, init) => fetch(input, init));
  const fetchFn = reachingFetch(rawFetch);
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
  async function sendFile(method: string, path: string, file: Blob | undefined, extra: Record<string, string>, sending = fetchFn): Promise<FileDownload | unknown> {
    const using = credential;
    const url = new URL(root + path);
    const headers = new Headers({ appkey: options.appKey, ...extra });
    if (using?.kind === 'secure') {
      const answer = await using.channel.exchangeFile(sending, method, url.href, url.pathname.slice(rootPath.length) + url.search, headers, file);
      if (answer.stream) return { status: answer.status, headers: answer.headers, stream: answer.stream };
      if (!answer.encrypted) throw unencryptedAnswer(answer.status, answer.text);
      return unwrap(answer.status, answer.headers, answer.text);
    }
    if (using?.kind === 'session') headers.set('sessionId', using.sessionId);
    if (using?.kind === 'token') headers.set('authorization', `Bearer ${using.token}`);
    if (file) headers.set('content-type', file.type || 'application/octet-stream');
    const response = await sending(url.href, { method, headers, body: file });
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

  /** `M P` of the route table, its path parameters filled in: query, body and answer typed by its declaration (contract.ts). */
  function call<M extends Method, P extends PathOf<M>>(method: M, pattern: P, parts: { params?: Record<string, string>; query?: QueryOf<M, P>; body?: BodyOf<M, P> } = {}, auth = true): Promise<AnswerOf<M, P>> {
    return request(method, tablePath(pattern, parts.params, parts.query), parts.body, auth);
  }

  function loginBody(credentials: LoginCredentials): BodyOf<'POST', '/v1/login'> {
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

  const twoFactorPath = (path: string, app: string) => `${path}?app=${encodeURIComponent(app)}`;
  const twoFactor: TwoFactorCalls = {
    status: (app) => request<TwoFactorStatus>('GET', twoFactorPath('/v1/2fa/secret', app)),
    enrol: (app) => request<TwoFactorEnrolment>('POST', twoFactorPath('/v1/2fa/secret', app)),
    confirm: async (app, token) => void (await request('PATCH', twoFactorPath('/v1/2fa/secret', app), { token })),
    remove: async (app, token) => void (await request('DELETE', twoFactorPath('/v1/2fa/secret', app), { token })),
    validate: async (app, token) => void (await request('POST', twoFactorPath('/v1/2fa/validate', app), { token })),
  };

  /** The server key a login fetched, as SPKI DER, after the pin check (refused before any credential is sent). */
  async function loginServerKey(path: string, kind: string): Promise<Uint8Array> {
    const { key } = await request<{ key: string }>('GET', path, undefined, false);
    const serverDer = pemBody(key, ['PUBLIC KEY']);
    if (!serverDer) throw new OdbRestProtocolError('the server key is not an SPKI PEM', 200);
    if (pinnedKeys && !isPinnedKey(serverDer.der, pinnedKeys)) {
      throw new OdbRestProtocolError(`${kind} login refused: the server key is not the pinned serverKey; the credentials were not sent`, 200);
    }
    return serverDer.der;
  }

  /**
   * A pinned client believes a login answer only when its `Login-Signature` verifies under the pinned
   * key (PROTOCOL.md 3.3): otherwise someone who relayed the real key could answer with its own.
   */
  async function checkLoginSignature(serverDer: Uint8Array, publicKey: string, response: Response, body: Uint8Array, kind: string): Promise<void> {
    if (!pinnedKeys) return;
    if (!(await verifyLoginSignature(serverDer, publicKey, body, response.headers.get('login-signature')))) {
      throw new OdbRestProtocolError(`${kind} login refused: the answer's Login-Signature is missing or does not verify under the pinned serverKey`, response.status);
    }
  }

  async function loginSecure(credentials: LoginCredentials, secureOptions: SecureLoginOptions = {}): Promise<SecureLogin> {
    const serverDer = await loginServerKey('/v2/login/secure/key', 'secure');
    const serverKey = await crypto.subtle.importKey('spki', serverDer as Uint8Array<ArrayBuffer>, OAEP, false, ['encrypt']);
    const keyPair = secureOptions.keyPair ?? (await generateRsaKeyPair(2048));
    const publicKey = toPem('PUBLIC KEY', new Uint8Array(await crypto.subtle.exportKey('spki', keyPair.publicKey)));
    const sealed = await blockEncrypt(serverKey, new TextEncoder().encode(JSON.stringify(loginBody(credentials))));

    const response = await fetchFn(`${root}/v2/login/secure`, {
      method: 'POST',
      headers: { appkey: options.appKey, 'content-type': 'application/json' },
      body: JSON.stringify({ credentials: base64.encode(sealed), publicKey }),
    });
    const bytes = new Uint8Array(await response.arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    // Failures come back as plain JSON envelopes; success is base64 of the envelope sealed to our key.
    if (!response.ok || /json/i.test(response.headers.get('content-type') ?? '')) {
      unwrap(response.status, response.headers, text);
      throw new OdbRestProtocolError('secure login answered a plain envelope', response.status);
    }
    await checkLoginSignature(serverDer, publicKey, response, bytes, 'secure');
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
  async function sessionLogin(path: '/v1/login' | '/v1/auth/df' | '/v1/extLogin' | '/v1/passkey/login', body: unknown): Promise<SessionLogin> {
    const data: AnswerOf<'POST', '/v1/login'> = await request('POST', path, body, false);
    credential = { kind: 'session', sessionId: data.sessionId };
    return data as SessionLogin;
  }

  async function loginHybrid(credentials: LoginCredentials, hybrid: HybridLoginOptions = {}): Promise<SessionLogin> {
    // a pinned client needs an answer it can verify: only one sealed to its key is signed
    if (pinnedKeys && hybrid.plainAnswer) throw new TypeError('a client pinned to serverKey cannot take the plain hybrid answer (plainAnswer): it is not signed');
    const serverDer = await loginServerKey('/v2/login/key', 'hybrid');
    const keyPair = hybrid.plainAnswer ? undefined : (hybrid.keyPair ?? (await hybridKeyPair()));
    const sent = await hybridLoginBody(serverDer, JSON.stringify(loginBody(credentials)), keyPair?.publicKey);
    const response = await fetchFn(`${root}/v2/login`, {
      method: 'POST',
      headers: { appkey: options.appKey, 'content-type': 'application/json' },
      body: sent.body,
    });
    const bytes = new Uint8Array(await response.arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    // Read as the real clients do: JSON when it starts with `{` (failures, or no key sent), else `A|B`.
    if (text.startsWith('{') && pinnedKeys) {
      unwrap(response.status, response.headers, text); // a failure throws its own error; a plain success is not signed
      throw new OdbRestProtocolError('hybrid login refused: the answer was not sealed to the client key and signed', response.status);
    }
    if (!text.startsWith('{') && keyPair) await checkLoginSignature(serverDer, sent.publicKey!, response, bytes, 'hybrid');
    const envelope = text.startsWith('{') || !keyPair ? text : JSON.stringify(await openHybridAnswer(keyPair.privateKey, text, response.status));
    const data = unwrap<SessionLogin>(response.status, response.headers, envelope);
    credential = { kind: 'session', sessionId: data.sessionId };
    return data;
  }

  const userQuery = (user?: string) => (user === undefined ? '' : `?user=${encodeURIComponent(user)}`);
  const admin: AdminCalls = {
    declareClass: (className, declaration) => call('PUT', '/v1/model/classes/:className', { params: { className }, body: declaration }),
    removeClassDeclaration: async (className) => void (await call('DELETE', '/v1/model/classes/:className', { params: { className } })),
    metrics: (minutes) => request('GET', `/v1/admin/metrics${minutes === undefined ? '' : `?minutes=${minutes}`}`),
    requests: (page = {}) => request('GET', `/v1/admin/requests${searchOf(pageParams(page))}`),
  };
  const savedPath = (name: string) => `/v1/savedQueries/${encodeURIComponent(name)}`;
  const savedQueries: SavedQueryCalls = {
    list: async () => (await request<{ '~Elements': Awaited<ReturnType<SavedQueryCalls['list']>> }>('GET', '/v1/savedQueries'))['~Elements'],
    save: (name, query) => request('PUT', savedPath(name), query),
    remove: async (name) => void (await call('DELETE', '/v1/savedQueries/:name', { params: { name } })),
  };
  const accounts: AccountCalls = {
    changePassword: async (current, next) => void (await call('POST', '/v1/user/password', { body: { pass: passOf(current), newPass: newPassOf(next) } })),
    requestPasswordReset: async (user) => void (await call('POST', '/v1/user/password/reset', { body: { user } }, false)),
    confirmPasswordReset: async (token, next) => void (await call('POST', '/v1/user/password/reset/confirm', { body: { token, newPass: newPassOf(next) } }, false)),
    sessions: async (user) => (await request<{ '~Elements': Awaited<ReturnType<AccountCalls['sessions']>> }>('GET', `/v1/sessions${userQuery(user)}`))['~Elements'],
    endSession: async (handle) => void (await call('DELETE', '/v1/sessions/:handle', { params: { handle } })),
    endOtherSessions: async (user) => (await request<{ ended: number }>('DELETE', `/v1/sessions${userQuery(user)}`)).ended,
    users: (page = {}) => request('GET', `/v1/users${searchOf(pageParams(page))}`),
    createUser: ({ password, pass, ...user }) => request('POST', '/v1/user', { ...user, pass: newPassOf({ password, pass }) }),
    updateUser: (name, { password, pass, ...change }) =>
      request('PATCH', `/v1/user/${encodeURIComponent(name)}`, password === undefined && pass === undefined ? change : { ...change, pass: newPassOf({ password, pass }) }),
    passkeyRegistrationOptions: () => request('POST', '/v1/passkey/register/options'),
    registerPasskey: (response, name) => request('POST', '/v1/passkey/register', name === undefined ? { response } : { response, name }),
    passkeyLoginOptions: (user) => request('POST', '/v1/passkey/login/options', user === undefined ? {} : { user }, false),
    loginWithPasskey: async (response, appNames) => {
      lastLogin = undefined; // a passkey response is used once: there is nothing to repeat
      return loggingIn(() => sessionLogin('/v1/passkey/login', { response, appNames }));
    },
    passkeys: async () => (await request<{ '~Elements': Awaited<ReturnType<AccountCalls['passkeys']>> }>('GET', '/v1/passkeys'))['~Elements'],
    removePasskey: async (id) => void (await request('DELETE', `/v1/passkeys/${encodeURIComponent(id)}`)),
  };

  const client: OdbRestClient = {
    accounts,
    admin,
    savedQueries,
    login: remember((credentials: LoginCredentials) => sessionLogin('/v1/login', loginBody(credentials) satisfies BodyOf<'POST', '/v1/login'>)),
    loginCustom: remember((credentials: LoginCredentials) => sessionLogin('/v1/auth/df', loginBody(credentials))),
    loginHybrid: remember(loginHybrid),
    loginToken: remember(async (credentials: LoginCredentials) => {
      const data = await request<TokenLogin>('POST', '/v2/login', loginBody(credentials), false);
      credential = { kind: 'token', token: data.token };
      return data;
    }),
    loginSecure: remember(loginSecure),
    async secureLoginAvailable() {
      if (!globalThis.crypto?.subtle) return false;
      return loginServerKey('/v2/login/secure/key', 'secure').then(
        () => true,
        () => false,
      );
    },
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
    getObject: <T,>(objectId: string, get: SerializationOption = {}) =>
      call('GET', '/v1/object/:id', { params: { id: objectId }, query: { serialization: get.serialization === undefined ? undefined : serializationParam(get.serialization) } }) as Promise<T>,
    listObjects<T,>(className: string, list: ListOptions = {}) {
      const selected = queryObject(list);
      const { page, perPage, serialization } = list;
      return call('GET', '/v1/objects/:className', {
        params: { className },
        query: {
          page: page === undefined ? undefined : String(page),
          perPage: perPage === undefined ? undefined : String(perPage),
          serialization: serialization === undefined ? undefined : serializationParam(serialization),
          query: selected === undefined ? undefined : JSON.stringify(selected),
          orderBy: list.orderBy,
          reverseOrder: list.reverseOrder === undefined ? undefined : list.reverseOrder ? 'true' : 'false',
        },
      }) as Promise<T>;
    },
    classes: () => call('GET', '/v1/classes'),
    referencedBy: (objectId, page = {}) => request('GET', `/v1/object/${encodeURIComponent(objectId)}/referencedBy${searchOf(pageParams(page))}`),
    createObject: (className, fields, write = {}) => request('POST', `/v1/object/${encodeURIComponent(className)}${writeSearch(write)}`, fields),
    checkObjects: (className, objects) => request('POST', `/v1/model/classes/${encodeURIComponent(className)}/check`, { Objects: objects }),
    updateObject: (objectId, fields, update = {}) =>
      request('PATCH', `/v1/object/${encodeURIComponent(objectId)}${writeSearch(update)}`, update.storeTime === undefined ? fields : { ...fields, '~StoreTime': update.storeTime }),
    deleteObject: async (objectId, remove = {}) =>
      void (await request('DELETE', `/v1/object/${encodeURIComponent(objectId)}${remove.moveToRecycler === undefined ? '' : `?moveToRecycler=${remove.moveToRecycler}`}`)),
    updateObjects: (className, fields, bulk = {}) =>
      request('PATCH', `/v1/objects/${encodeURIComponent(className)}${bulk.query === undefined ? '' : `?query=${encodeURIComponent(JSON.stringify(bulk.query))}`}`, fields),
    runActions(className, actions, selection = {}) {
      const query = new URLSearchParams({ actions: JSON.stringify(actions) });
      if (selection.query !== undefined) query.set('query', JSON.stringify(selection.query));
      if (selection.page !== undefined) query.set('page', String(selection.page));
      if (selection.perPage !== undefined) query.set('perPage', String(selection.perPage));
      return request('POST', `/v1/action/${encodeURIComponent(className)}?${query}`);
    },
    recycleBin: () => request('GET', '/v1/recycleBin'),
    restoreObject: (objectId) => request('POST', `/v1/recycleBin/${encodeURIComponent(objectId)}/restore`),
    emptyRecycleBin: async () => void (await request('PATCH', '/v1/personal/emptyRecycleBin')),
    lockStatus: (objectId) => request('GET', `/v1/lock/object/${encodeURIComponent(objectId)}`),
    lockObject: (objectId, minutes) => request('POST', `/v1/lock/object/${encodeURIComponent(objectId)}`, minutes === undefined ? undefined : { minutes }),
    unlockObject: (objectId) => request('DELETE', `/v1/lock/object/${encodeURIComponent(objectId)}`),
    setObjectSecurity: async (objectId, security, options = {}) =>
      void (await request('POST', `/v1/setObjectSecurity/${encodeURIComponent(objectId)}`, options.replace === undefined ? { security } : { security, replace: options.replace })),
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
      const sending = upload.onProgress ? reachingFetch(reportingFetch(rawFetch, upload.onProgress, blob.size)) : fetchFn;
      await sendFile('POST', `${path}?${query}`, blob, {}, sending);
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
    modelStructure: (classes) => request('GET', `/v1/model/structure${classes === undefined ? '' : `?classes=${encodeURIComponent(classes.join(','))}`}`),
    v2: {
      byQuery: (items) => request('POST', '/v2/objectdata/byQuery', items.map(v2Item)),
      byId: (items) => request('POST', '/v2/objectdata/byid', items.map(({ serialization, ...item }) => (serialization === undefined ? item : { ...item, serialization: serializationValue(serialization) }))),
      byParentObject: (items) => request('POST', '/v2/objectdata/byParentObject', items.map(v2Item)),
      modelStructure: (items) => request('POST', '/v2/model/structure', items),
      versionInfo: () => request('GET', '/v2/versionInfo'),
      appConfig: () => request('GET', '/v2/appConfig'),
      appTheme: () => request('GET', '/v2/appTheme'),
      viewLoad: (items) => request('POST', '/v2/view/load', items),
      viewAction: (body) => request('POST', '/v2/view/action', body),
      async downloadFile(objectId, download = {}) {
        const extra: Record<string, string> = {};
        if (download.range !== undefined) extra.range = download.range;
        if (download.ifNoneMatch !== undefined) extra['if-none-match'] = download.ifNoneMatch;
        const variant = new URLSearchParams(download.variant ?? {});
        const path = `/v2/file/${encodeURIComponent(objectId)}${variant.size > 0 ? `?${variant}` : ''}`;
        return (await sendFile('GET', path, undefined, extra)) as FileDownload;
      },
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
  const data = typeof parsed.data === 'object' && parsed.data !== null && !Array.isArray(parsed.data) && Object.keys(parsed.data).length > 0 ? (parsed.data as Record<string, unknown>) : undefined;
  if (status.internalStatus === '409') throw new OdbRestConflictError(httpStatus, status.statusMessage, data);
  if (status.internalStatus !== '0') {
    const retryAfter = Number(headers.get('retry-after') ?? Number.NaN);
    throw new OdbRestError(status.internalStatus, httpStatus, status.statusMessage, Number.isFinite(retryAfter) ? retryAfter : undefined, data);
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
export { OPERATIONS, type OperationId } from './operations.js';
export type { ChangeEvent, ConnectionState, EventSubscription, EventSubscriptionHandle, SubscribeOptions } from './events.js';
export { defaultCrypto, portableCrypto, type SymmetricCrypto } from '../secure/symmetric.js';
export type * from './types.js';

/** A page and its serialization as query parameters (listings, `referencedBy`). */
function pageParams(options: { page?: number; perPage?: number } & SerializationOption): URLSearchParams {
  const query = new URLSearchParams();
  if (options.page !== undefined) query.set('page', String(options.page));
  if (options.perPage !== undefined) query.set('perPage', String(options.perPage));
  if (options.serialization !== undefined) query.set('serialization', serializationParam(options.serialization));
  return query;
}

const searchOf = (query: URLSearchParams): string => (query.size > 0 ? `?${query}` : '');

/** A table route's path: its pattern's parameters filled in, then the query's defined members. */
function tablePath(pattern: string, params: Record<string, string> = {}, query: object = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
  return pattern.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? '')) + searchOf(search);
}

/** The query of a write's parameters (PROTOCOL.md 6.3), empty when none is set. */
function writeSearch(options: WriteOptions): string {
  const query = new URLSearchParams();
  if (options.storeMode !== undefined) query.set('storeMode', options.storeMode === 'replace' ? '10' : '0');
  if (options.actions !== undefined) query.set('actions', JSON.stringify(options.actions));
  if (options.rightsControlKey !== undefined) query.set('rightsControlKey', options.rightsControlKey);
  if (options.serialization !== undefined) query.set('serialization', serializationParam(options.serialization));
  return searchOf(query);
}
