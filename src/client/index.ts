import { clientPassValue } from '../auth/passwords.js';
import { OdbRestError, OdbRestProtocolError } from './errors.js';
import { subscribeEvents, type EventSubscription, type EventSubscriptionHandle, type SubscribeOptions } from './events.js';
import { loginBody, sealedLogins, type HybridLoginOptions, type SecureLoginOptions } from './logins.js';
import { envelopeHttpStatus, reachingFetch, savedCredential, tablePath, transport, unwrap, type ClientOptions, type Parts } from './transport.js';
import { reportingFetch } from './upload-body.js';
import type { BodyOf, PathOf, QueryOf } from '../contract.js';
import type {
  AccountCalls,
  AdminCalls,
  SavedQueryCalls,
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
  UpdateOptions,
  WriteOptions,
  WriteAction,
  LockStatus,
  SecurityEntry,
  Filter,
  QueryMembers,
  V2Calls,
  V2IdItem,
  V2ParentItem,
  V2QueryItem,
  V2Selecting,
  V2ViewItem,
  PasskeyEntry,
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

export function createClient(options: ClientOptions): OdbRestClient {
  const t = transport(options);
  const { serverKey, secure, hybrid } = sealedLogins(t);
  const { call, remember } = t;

  const twoFactor: TwoFactorCalls = {
    status: (app) => call('GET', '/v1/2fa/secret', { query: { app } }),
    enrol: (app) => call('POST', '/v1/2fa/secret', { query: { app } }),
    confirm: async (app, token) => void (await call('PATCH', '/v1/2fa/secret', { query: { app }, body: { token } })),
    remove: async (app, token) => void (await call('DELETE', '/v1/2fa/secret', { query: { app }, body: { token } })),
    validate: async (app, token) => void (await call('POST', '/v1/2fa/validate', { query: { app }, body: { token } })),
  };

  /** A login answered by a plain session (`/v1/login`, `/v1/auth/df`, `/v1/extLogin`, `/v1/passkey/login`, the external login's callback): the client holds it. */
  async function sessionLogin(login: unknown): Promise<SessionLogin> {
    const data = (await login) as SessionLogin;
    t.credential = { kind: 'session', sessionId: data.sessionId };
    return data;
  }

  const admin: AdminCalls = {
    declareClass: (className, declaration) => call('PUT', '/v1/model/classes/:className', { params: { className }, body: declaration }) as Promise<ClassStructure>,
    removeClassDeclaration: async (className) => void (await call('DELETE', '/v1/model/classes/:className', { params: { className } })),
    metrics: (minutes) => call('GET', '/v1/admin/metrics', { query: { minutes: asText(minutes) } }),
    requests: ({ page, perPage } = {}) => call('GET', '/v1/admin/requests', { query: { page: asText(page), perPage: asText(perPage) } }),
  };
  const savedQueries: SavedQueryCalls = {
    list: async () => (await call('GET', '/v1/savedQueries'))['~Elements'],
    save: (name, query) => call('PUT', '/v1/savedQueries/:name', { params: { name }, body: query }),
    remove: async (name) => void (await call('DELETE', '/v1/savedQueries/:name', { params: { name } })),
  };
  const accounts: AccountCalls = {
    changePassword: async (current, next) => void (await call('POST', '/v1/user/password', { body: { pass: passOf(current), newPass: newPassOf(next) } })),
    requestPasswordReset: async (user) => void (await call('POST', '/v1/user/password/reset', { body: { user } }, false)),
    confirmPasswordReset: async (token, next) => void (await call('POST', '/v1/user/password/reset/confirm', { body: { token, newPass: newPassOf(next) } }, false)),
    sessions: async (user) => (await call('GET', '/v1/sessions', { query: { user } }))['~Elements'],
    endSession: async (handle) => void (await call('DELETE', '/v1/sessions/:handle', { params: { handle } })),
    endOtherSessions: async (user) => (await call('DELETE', '/v1/sessions', { query: { user } })).ended,
    users: ({ page, perPage } = {}) => call('GET', '/v1/users', { query: { page: asText(page), perPage: asText(perPage) } }),
    createUser: ({ password, pass, ...user }) => call('POST', '/v1/user', { body: { ...user, pass: newPassOf({ password, pass }) } }),
    updateUser: (name, { password, pass, ...change }) =>
      call('PATCH', '/v1/user/:name', { params: { name }, body: password === undefined && pass === undefined ? change : { ...change, pass: newPassOf({ password, pass }) } }),
    passkeyRegistrationOptions: () => call('POST', '/v1/passkey/register/options') as Promise<Record<string, unknown>>,
    registerPasskey: (given, name) => {
      const response = given as BodyOf<'POST', '/v1/passkey/register'>['response']; // what startRegistration answered, checked by the service
      return call('POST', '/v1/passkey/register', { body: name === undefined ? { response } : { response, name } }) as Promise<PasskeyEntry>;
    },
    passkeyLoginOptions: (user) => call('POST', '/v1/passkey/login/options', { body: user === undefined ? {} : { user } }, false) as Promise<Record<string, unknown>>,
    loginWithPasskey: async (response, appNames) => {
      t.lastLogin = undefined; // a passkey response is used once: there is nothing to repeat
      return t.loggingIn(() => sessionLogin(call('POST', '/v1/passkey/login', { body: { response: response as BodyOf<'POST', '/v1/passkey/login'>['response'], appNames } }, false)));
    },
    passkeys: async () => ((await call('GET', '/v1/passkeys')) as SerializedSet<PasskeyEntry>)['~Elements'],
    removePasskey: async (id) => void (await call('DELETE', '/v1/passkeys/:id', { params: { id } })),
  };

  const client: OdbRestClient = {
    accounts,
    admin,
    savedQueries,
    login: remember((credentials: LoginCredentials) => sessionLogin(call('POST', '/v1/login', { body: loginBody(credentials) }, false))),
    loginCustom: remember((credentials: LoginCredentials) => sessionLogin(call('POST', '/v1/auth/df', { body: loginBody(credentials) }, false))),
    loginHybrid: remember(hybrid),
    loginToken: remember(async (credentials: LoginCredentials) => {
      const data = (await call('POST', '/v2/login', { body: loginBody(credentials) }, false)) as TokenLogin;
      t.credential = { kind: 'token', token: data.token };
      return data;
    }),
    loginSecure: remember(secure),
    async secureLoginAvailable() {
      if (!globalThis.crypto?.subtle) return false;
      return serverKey('/v2/login/secure/key', 'secure').then(
        () => true,
        () => false,
      );
    },
    async resume(saved) {
      const resumed = savedCredential(saved);
      await t.send('GET', '/_CheckSession', undefined, resumed);
      t.lastLogin = undefined;
      t.credential = resumed;
    },
    get credential() {
      const held = t.credential;
      return held?.kind === 'session' ? { sessionId: held.sessionId } : held?.kind === 'token' ? { token: held.token } : undefined;
    },
    externalLoginUrl(provider, external = {}) {
      const query = new URLSearchParams({ appkey: options.appKey });
      for (const name of [external.appNames ?? []].flat()) query.append('appNames', name);
      return `${t.root}/v1/auth/${encodeURIComponent(provider.toLowerCase())}?${query}`;
    },
    async completeExternalLogin(answer) {
      const text = typeof answer === 'string' ? answer : await answer.text();
      const status = typeof answer === 'string' ? envelopeHttpStatus(text) : answer.status;
      const data = unwrap<{ sessionId?: unknown; dfUuid?: unknown }>(status, typeof answer === 'string' ? new Headers() : answer.headers, text);
      if (typeof data?.sessionId === 'string') {
        t.lastLogin = undefined;
        return { kind: 'session', login: await sessionLogin(data) };
      }
      if (typeof data?.dfUuid === 'string') return { kind: 'unlinked', dfUuid: data.dfUuid };
      throw new OdbRestProtocolError('the external login answer holds neither a sessionId nor a dfUuid', status);
    },
    async linkExternalLogin(dfUuid, credentials) {
      t.lastLogin = undefined; // the dfUuid is used up: there is nothing to repeat
      return t.loggingIn(() => sessionLogin(call('POST', '/v1/extLogin', { body: { ...loginBody(credentials), dfUuid } }, false)));
    },
    twoFactor,
    releaseLicences: async (appNames) => void (await call('POST', '/v1/license/release', { body: { appNames } })),
    getObject: <T,>(objectId: string, get: SerializationOption = {}) =>
      call('GET', '/v1/object/:id', { params: { id: objectId }, query: { serialization: serializationQuery(get) } }) as Promise<T>,
    listObjects<T,>(className: string, list: ListOptions = {}) {
      return call('GET', '/v1/objects/:className', {
        params: { className },
        query: {
          page: asText(list.page),
          perPage: asText(list.perPage),
          serialization: serializationQuery(list),
          query: jsonQuery(queryObject(list)),
          orderBy: list.orderBy,
          reverseOrder: list.reverseOrder === undefined ? undefined : list.reverseOrder ? 'true' : 'false',
        },
      }) as Promise<T>;
    },
    classes: () => call('GET', '/v1/classes'),
    referencedBy: <T,>(objectId: string, page: ReferencedByOptions = {}) =>
      call('GET', '/v1/object/:id/referencedBy', { params: { id: objectId }, query: { page: asText(page.page), perPage: asText(page.perPage), serialization: serializationQuery(page) } }) as Promise<SerializedSet<T>>,
    createObject: <T,>(className: string, fields: ObjectFields, write: WriteOptions = {}) =>
      call('POST', '/v1/object/:id', { params: { id: className }, query: writeQuery(write), body: fields }) as Promise<T>,
    checkObjects: (className, objects) => call('POST', '/v1/model/classes/:className/check', { params: { className }, body: { Objects: objects } }),
    updateObject: <T,>(objectId: string, fields: ObjectFields, update: UpdateOptions = {}) =>
      call('PATCH', '/v1/object/:id', { params: { id: objectId }, query: writeQuery(update), body: update.storeTime === undefined ? fields : { ...fields, '~StoreTime': update.storeTime } }) as Promise<T>,
    deleteObject: async (objectId, remove = {}) =>
      void (await call('DELETE', '/v1/object/:id', { params: { id: objectId }, query: { moveToRecycler: remove.moveToRecycler === undefined ? undefined : remove.moveToRecycler ? 'true' : 'false' } })),
    updateObjects: <T,>(className: string, fields: ObjectFields, bulk: { query?: Filter } = {}) =>
      call('PATCH', '/v1/objects/:className', { params: { className }, query: { query: jsonQuery(bulk.query) }, body: fields }) as Promise<SerializedSet<T>>,
    runActions: <T,>(className: string, actions: WriteAction[], selection: { query?: Filter; page?: number; perPage?: number } = {}) =>
      call('POST', '/v1/action/:className', { params: { className }, query: { actions: JSON.stringify(actions), query: jsonQuery(selection.query), page: asText(selection.page), perPage: asText(selection.perPage) } }) as Promise<SerializedSet<T>>,
    recycleBin: <T,>() => call('GET', '/v1/recycleBin') as Promise<SerializedSet<T & { '~DeletedAt': string }>>,
    restoreObject: <T,>(objectId: string) => call('POST', '/v1/recycleBin/:id/restore', { params: { id: objectId } }) as Promise<T>,
    emptyRecycleBin: async () => void (await call('PATCH', '/v1/personal/emptyRecycleBin')),
    lockStatus: (objectId) => call('GET', '/v1/lock/object/:id', { params: { id: objectId } }),
    lockObject: (objectId, minutes) => call('POST', '/v1/lock/object/:id', { params: { id: objectId }, body: minutes === undefined ? undefined : { minutes } }),
    unlockObject: (objectId) => call('DELETE', '/v1/lock/object/:id', { params: { id: objectId } }),
    setObjectSecurity: async (objectId, security, options = {}) =>
      void (await call('POST', '/v1/setObjectSecurity/:id', { params: { id: objectId }, body: options.replace === undefined ? { security } : { security, replace: options.replace } })),
    execute: <T,>(macroName: string, params?: Record<string, unknown>) => call('POST', '/v1/execute/:macroName', { params: { macroName }, body: params ?? undefined }) as Promise<T>,
    multi: (items) => call('POST', '/v1/multi', { body: items as BatchItem[] }) as Promise<BatchResult[]>,
    subscribe: (subscriptions, subscribeOptions) =>
      subscribeEvents(
        {
          connect: (query, lastEventId, signal) => t.openEvents(query, lastEventId, signal),
          async relogin() {
            if (!t.lastLogin) return false;
            await t.relogin(t.credential);
            return true;
          },
        },
        subscriptions,
        subscribeOptions,
      ),
    async uploadFile<T,>(data: Blob | Uint8Array<ArrayBuffer>, upload: UploadOptions = {}) {
      const blob = data instanceof Blob ? data : new Blob([data]);
      const name = upload.name ?? (typeof File !== 'undefined' && data instanceof File ? data.name : undefined);
      const query = new URLSearchParams({ contentType: upload.contentType ?? (blob.type || 'application/octet-stream') });
      if (name !== undefined) query.set('name', name);
      const { uploadId } = await call('GET', '/v1/uploadFile');
      const path = `/v1/uploadFile/${encodeURIComponent(uploadId)}`;
      const sending = upload.onProgress ? reachingFetch(reportingFetch(t.rawFetch, upload.onProgress, blob.size)) : t.fetch;
      await t.sendFile('POST', `${path}?${query}`, blob, {}, sending);
      return call('PATCH', '/v1/uploadFile/:id', { params: { id: uploadId }, query: { replaceOID: upload.replaceOID } }) as Promise<T>;
    },
    async downloadFile(objectId, download = {}) {
      const extra: Record<string, string> = {};
      if (download.range !== undefined) extra.range = download.range;
      if (download.ifNoneMatch !== undefined) extra['if-none-match'] = download.ifNoneMatch;
      return (await t.sendFile('GET', `/v1/file/${encodeURIComponent(objectId)}`, undefined, extra)) as FileDownload;
    },
    async checkSession() {
      try {
        await t.send('GET', '/_CheckSession', undefined, t.credential);
        return true;
      } catch (error) {
        if (error instanceof OdbRestError && (error.internalStatus === '201' || error.internalStatus === '204')) return false;
        throw error;
      }
    },
    checkService: () => t.send('GET', '/_CheckService', undefined, undefined, true),
    async logout() {
      t.lastLogin = undefined;
      try {
        await t.send('POST', '/v1/logout', undefined, t.credential);
      } finally {
        t.credential = undefined;
      }
    },
    get sessionKind() {
      return t.credential?.kind;
    },
    modelStructure: (classes) => call('GET', '/v1/model/structure', { query: { classes: classes?.join(',') } }) as Promise<SerializedSet<ClassStructure>>,
    v2: {
      byQuery: <T,>(items: V2QueryItem[]) => call('POST', '/v2/objectdata/byQuery', { body: items.map(v2Item) as BodyOf<'POST', '/v2/objectdata/byQuery'> }) as Promise<SerializedSet<T>[]>,
      byId: <T,>(items: V2IdItem[]) =>
        call('POST', '/v2/objectdata/byid', { body: items.map(({ serialization, ...item }) => (serialization === undefined ? item : { ...item, serialization: serializationValue(serialization) })) }) as Promise<SerializedSet<T>[]>,
      byParentObject: <T,>(items: V2ParentItem[]) => call('POST', '/v2/objectdata/byParentObject', { body: items.map(v2Item) as BodyOf<'POST', '/v2/objectdata/byParentObject'> }) as Promise<SerializedSet<T>[]>,
      modelStructure: (items) => call('POST', '/v2/model/structure', { body: items }) as Promise<ClassStructure[][]>,
      versionInfo: () => call('GET', '/v2/versionInfo'),
      appConfig: <T,>() => call('GET', '/v2/appConfig') as Promise<T>,
      appTheme: <T,>() => call('GET', '/v2/appTheme') as Promise<T>,
      viewLoad: <T,>(items: V2ViewItem[]) => call('POST', '/v2/view/load', { body: items }) as Promise<T[]>,
      viewAction: <T,>(body: Parameters<V2Calls['viewAction']>[0]) => call('POST', '/v2/view/action', { body }) as Promise<T>,
      async downloadFile(objectId, download = {}) {
        const extra: Record<string, string> = {};
        if (download.range !== undefined) extra.range = download.range;
        if (download.ifNoneMatch !== undefined) extra['if-none-match'] = download.ifNoneMatch;
        const variant = new URLSearchParams(download.variant ?? {});
        const path = `/v2/file/${encodeURIComponent(objectId)}${variant.size > 0 ? `?${variant}` : ''}`;
        return (await t.sendFile('GET', path, undefined, extra)) as FileDownload;
      },
    },
  };
  // a secret: left out of JSON.stringify(client), spreads and enumerations
  Object.defineProperty(client, 'credential', { enumerable: false });
  return client;
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
export type { ClientOptions } from './transport.js';
export type { HybridLoginOptions, SecureLoginOptions } from './logins.js';
export type * from './types.js';

/** A number as a query value (`page`, `perPage`, `minutes`). */
const asText = (value: number | undefined) => (value === undefined ? undefined : String(value));
const serializationQuery = ({ serialization }: SerializationOption) => (serialization === undefined ? undefined : serializationParam(serialization));
const jsonQuery = (value: unknown) => (value === undefined ? undefined : JSON.stringify(value));

/**
 * A `/v1/multi` item (PROTOCOL.md 6.5) of `M P` of the route table: its path parameters filled in, its
 * query and `data` typed by the route's declaration, so an item naming a route the table does not have
 * does not compile.
 */
export function batchItem<M extends BatchItem['method'], P extends PathOf<M>>(method: M, pattern: P, { params, query, data }: Parts<M, P> & { data?: BodyOf<M, P> } = {}): BatchItem {
  const path = tablePath(pattern, params, query);
  return data === undefined ? { method, path } : { method, path, data };
}

/** The query of a write's parameters (PROTOCOL.md 6.3). */
function writeQuery(options: WriteOptions): QueryOf<'POST', '/v1/object/:id'> {
  const { storeMode, actions, rightsControlKey } = options;
  return { storeMode: storeMode === undefined ? undefined : storeMode === 'replace' ? '10' : '0', actions: jsonQuery(actions), rightsControlKey, serialization: serializationQuery(options) };
}
