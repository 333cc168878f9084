import type { StatusCode } from '../http/errors.js';
import type { AnswerOf, BodyOf } from '../contract.js';
import type { ClassStructure } from '../objects/model/index.js';
import type { JsonOperator } from '../query/index.js';
import type { FieldOperators, Scalar } from '../storage/types.js';

export type { ClassStructure, ModelMember } from '../objects/model/index.js';
/** `GET /v1/admin/metrics`: the answering instance's series and routes. */
export type InstanceMetrics = AnswerOf<'GET', '/v1/admin/metrics'>;
/** A saved query (PROTOCOL.md 6.12). */
export type SavedQuery = AnswerOf<'PUT', '/v1/savedQueries/:name'>;

/** Every `internalStatus` the service answers: the codes of PROTOCOL.md 1.4. */
export type KnownInternalStatus = StatusCode;

/**
 * An answer's `internalStatus`. A host's macro may fail with a code of its own (PROTOCOL.md 7), so any
 * other string is possible too; the known codes still complete and narrow in a `switch`.
 */
export type InternalStatus = KnownInternalStatus | (string & {});

/** A serialized object (PROTOCOL.md 6.1): metadata members, then its fields by name. */
export interface SerializedObject {
  '~ClassName': string;
  '~ObjectID': string;
  '~StoreTime': string;
  [field: string]: unknown;
}

/** A serialized set: the elements of one page and the count before paging. */
export interface SerializedSet<T = SerializedObject> {
  '~Count': number;
  '~UnfilteredCount': number;
  '~Elements': T[];
}

/** The user in a login answer: `Name`, `Description`, `Groups`, `Employee` and any other fields. */
export interface SerializedUser extends SerializedObject {
  Name: string;
  Groups?: SerializedSet;
}

export interface LoginCredentials {
  user: string;
  /** The plain password; the client sends its hex MD5 as `pass`, as the real client does. */
  password?: string;
  /** The `pass` value as sent, for callers that already hold it. */
  pass?: string;
  /** Licensed applications to log in for; an empty list gives a macro-only session. */
  appNames: string[] | string;
  /** The second factor (sent as `2faToken`): a TOTP code or a backup code, when the service asked for one (`TwoFactorError`). */
  twoFactorToken?: string;
}

/**
 * What every login answers (PROTOCOL.md 2.2): `POST /v1/login`'s declared answer (contract.ts) without
 * its credential, its `user` typed as the serialized user.
 */
type LoginAnswer = Omit<AnswerOf<'POST', '/v1/login'>, 'user' | 'sessionId'> & { user: SerializedUser };

/** `POST /v1/login`'s answer: the login and its session id. */
export type SessionLogin = LoginAnswer & Pick<AnswerOf<'POST', '/v1/login'>, 'sessionId'>;

export type TokenLogin = LoginAnswer & { token: string };

/** The secure login's answer; its Secure-Token and key stay inside the client. */
export type SecureLogin = LoginAnswer;

/**
 * The credential of a plain or token login, to continue it with `resume` after a page reload. It is
 * the session itself: whoever holds it acts as the user until it expires or is logged out.
 */
export type SavedCredential = { sessionId: string } | { token: string };

/** What the external login's callback answered (PROTOCOL.md 5.2). */
export type ExternalLoginResult =
  /** The identity is linked to a database user: the client now holds this session. */
  | { kind: 'session'; login: SessionLogin }
  /** A new identity: link it once with `linkExternalLogin(dfUuid, credentials)` (one-time, 15 minutes). */
  | { kind: 'unlinked'; dfUuid: string };

export interface ExternalLoginOptions {
  /** Licensed applications the session is for; none gives a macro-only session. */
  appNames?: string[] | string;
}

/** `GET /v1/2fa/secret`: whether the user holds a secret, and `2faStatus` (0 not available, 1 off, 2 optional and on, 3 forced). */
export type TwoFactorStatus = AnswerOf<'GET', '/v1/2fa/secret'>;

/** `POST /v1/2fa/secret`: a new secret (base32), its `otpauthUri`, a QR code of it (an SVG data URL) and 10 backup codes; shown only once. */
export type TwoFactorEnrolment = AnswerOf<'POST', '/v1/2fa/secret'>;

/** Two-factor login of the logged-in user, per application policy (PROTOCOL.md 2.6). */
export interface TwoFactorCalls {
  status(app: string): Promise<TwoFactorStatus>;
  /** A new secret; it is in force once `confirm`ed with a code of it. */
  enrol(app: string): Promise<TwoFactorEnrolment>;
  confirm(app: string, token: string): Promise<void>;
  /** Removes the user's secret, proven by a TOTP or backup code. */
  remove(app: string, token: string): Promise<void>;
  /** Checks a code of the user's secret (each code once); throws `TwoFactorError` (`342`) when wrong. */
  validate(app: string, token: string): Promise<void>;
}

/** A reference as written and filtered on: the object's id. */
export interface ObjectReference {
  '~ObjectID': string;
}

export type FilterScalar = Scalar;
/** The operators of one field's condition (PROTOCOL.md 6.2; `$in` takes at most 100 values): the store's that the query object takes. */
export type FilterOperators = Pick<FieldOperators, JsonOperator>;
/** Equality with a scalar, objects referencing one (`{'~ObjectID': id}`), or operators. */
export type FilterCondition = FilterScalar | ObjectReference | FilterOperators;
/** A listing filter: every member must hold. */
export type Filter = Record<string, FilterCondition>;

/** A serialization other than `class` (what a class override may be). */
export type ClassSerialization =
  | { type: 'full' }
  | { type: 'empty' }
  | { type: 'oid' }
  | { type: 'custom'; custom: { type?: 'empty'; fieldList?: string[]; fieldCustom?: Record<string, { page?: number; perPage?: number }> } }
  | { type: 'macro'; macro: string };

/**
 * How the service shapes the objects of an answer (PROTOCOL.md 6.1): `full` (default), `empty` (the
 * metadata), `oid` (`~ObjectID` only), `custom` (the metadata and `fieldList`; `fieldCustom` pages a set
 * field), `class` (the host's `preview`/`detailview` field lists, `classes` overriding per class name),
 * `macro` (a host serialization macro). `getSize` adds `~Size`, `securityRights` `~SecurityRights`.
 */
export type Serialization = (ClassSerialization | { type: 'class'; style?: 'preview' | 'detailview'; classes?: Record<string, ClassSerialization & SerializationFlags> }) & SerializationFlags;
export interface SerializationFlags {
  getSize?: boolean;
  securityRights?: boolean;
}

/** The serialization of the answer of `getObject`, `createObject`, `updateObject`. */
export interface SerializationOption {
  serialization?: Serialization;
}

/**
 * The product's query object members (PROTOCOL.md 6.2) beside the field conditions: each is sent in
 * the `query` parameter's JSON, and all must hold.
 */
export interface QueryMembers {
  /** Query text (the 6.2 grammar), e.g. `'City = "Berlin" or Revenue > 2000'` (sent as `queryString`). */
  queryText?: string;
  /** Only these object ids (at most 1000). */
  oids?: string[];
  /** A field to order by, `!` in front for descending (`'!Revenue'`); replaces `orderBy`. */
  sortIndex?: string;
  /** A registered host macro that filters the selection before paging. */
  macro?: string;
  /** Passed on to the macro. */
  macroLevel?: -1 | 0 | 1 | 2;
  /** The objects of a folder, as the host's `folders` hook answers it. */
  folderPath?: string;
  folderType?: string;
}

export interface ListOptions extends SerializationOption, QueryMembers {
  /** 0-based page. */
  page?: number;
  /** Default 50, at most 1000. */
  perPage?: number;
  /**
   * Field conditions, e.g. `{ City: 'Berlin', Revenue: { $gte: 1000 }, AccountManager: { '~ObjectID': 'EMP00001' } }`,
   * or query text (as `queryText`).
   */
  query?: Filter | string;
  /** A field name, `-` in front for descending (`'-Revenue'`); ties keep creation order. */
  orderBy?: string;
  reverseOrder?: boolean;
}

/** `referencedBy`'s page of the referencing objects (PROTOCOL.md 6.11). */
export interface ReferencedByOptions extends SerializationOption {
  /** 0-based page. */
  page?: number;
  /** Default 50, at most 1000. */
  perPage?: number;
}

/** One class of `classes()` (PROTOCOL.md 6.11): whether it is declared, and how many of its objects the session may read. */
export type ClassSummary = AnswerOf<'GET', '/v1/classes'>['~Elements'][number];

/**
 * The fields of a write: plain JSON values, references `{'~ObjectID': id}` and sets of references
 * `{'~Elements': [{'~ObjectID': id}, ...]}`. Members starting with `~` are ignored.
 */
export type ObjectFields = Record<string, unknown>;

/** An action run with a write or by `runActions` (PROTOCOL.md 6.3): `add`/`remove` or a host action's type. */
export interface WriteAction {
  type: string;
  /** `Success` (default), `Error` or `Any`. */
  when?: 'Success' | 'Error' | 'Any' | 'S' | 'E' | 'A';
  /** `add`/`remove`: the object whose set field changes. */
  object?: string;
  /** `add`/`remove`: that set field. */
  field?: string;
  /** `add`/`remove`: `addobject` adds the object even when it is there already. */
  operation?: 'add' | 'addobject';
  [member: string]: unknown;
}

/** Parameters of a create or update. */
export interface WriteOptions extends SerializationOption {
  /** `replace`: the object becomes exactly the fields given (`storeMode=10`); default `merge`. */
  storeMode?: 'merge' | 'replace';
  /** Run after the write, in order (at most 20). */
  actions?: WriteAction[];
  /** An opaque string the service hands to its host's `authorize`. */
  rightsControlKey?: string;
}

export interface UpdateOptions extends WriteOptions {
  /** The `~StoreTime` the object had when read: the write fails with `OdbRestConflictError` if it changed since. */
  storeTime?: string;
}

/** What the lock routes answer: `isLocked` only when another session holds the lock; `messages` e.g. `locked by alice since 20260115T090000+00:00`. */
export type LockStatus = AnswerOf<'GET', '/v1/lock/object/:id'>;

/** A per-object security entry: a user or group name and rights bits (1 read, 2 write, 4 create, 8 delete, 16 security). */
export type SecurityEntry = BodyOf<'POST', '/v1/setObjectSecurity/:id'>['security'][number];

/** Which login the client's requests currently use (the service's own session kinds). */
export type { SessionKind } from '../auth/sessions.js';

/** One request of a `/v1/multi` batch: `path` relative to the service root, `data` its JSON body. */
export interface BatchItem {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  data?: unknown;
}

/** What one batch item answered: its HTTP status and its whole envelope. */
export interface BatchResult<T = unknown> {
  httpStatus: number;
  result: { status: { internalStatus: InternalStatus; statusMessage: string; debugMessage?: string }; data: T };
}

/** `_CheckService`: the application and the database modules it serves. */
export type ServiceInfo = AnswerOf<'GET', '/_CheckService'>;

/** The `fetch` the client sends its requests with (`ClientOptions.fetch`). */
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

/** How `uploadFile` names and types the file (PROTOCOL.md 6.6). */
export interface UploadOptions {
  /** The file's `Name`. Default: the `name` of a `File`, else `upload`. */
  name?: string;
  /** The file's `ContentType`. Default: the `type` of a `Blob`, else `application/octet-stream`. */
  contentType?: string;
  /** Replace the bytes of this file object instead of creating one. */
  replaceOID?: string;
  /**
   * Told how many of the file's bytes have been sent, as they go and once more when the service has
   * them all. In a browser the bytes then go through `XMLHttpRequest` (fetch reports no upload
   * progress), not through the client's `fetch` option.
   */
  onProgress?: UploadProgress;
}

/** How far an upload is: `loaded` of `total` bytes of the file sent. */
export type UploadProgress = (progress: { loaded: number; total: number }) => void;

/** A downloaded file: `200`, `206` (a range) or `304` (not modified), its headers and its bytes as they arrive. */
export interface FileDownload {
  status: number;
  headers: Headers;
  /**
   * The bytes (empty for `304`). Through the secure transport they are decrypted as they are read,
   * and the stream fails at its end when the answer's signature does not match.
   */
  stream: ReadableStream<Uint8Array>;
}

/** What `downloadFile` asks for. */
export interface DownloadOptions {
  /** A `Range` header value, e.g. `bytes=0-1023`. */
  range?: string;
  /** An `If-None-Match` header value: the `ETag` of a copy held. */
  ifNoneMatch?: string;
}

/** A password as `accounts` calls take it: the password itself, or `pass` already in the MD5 form. */
export type PasswordInput = { password: string } | { pass: string };

/** One live session in `accounts.sessions()` (PROTOCOL.md 2.8); `~ObjectID` is a handle, never a credential. */
export type SessionEntry = AnswerOf<'GET', '/v1/sessions'>['~Elements'][number];

/** A user as `GET /v1/users` lists it for administrators (no `_` field): its `Groups` by name, `TwoFactor` (a confirmed TOTP secret), how many `Passkeys`. */
export type UserEntry = AnswerOf<'GET', '/v1/users'>['~Elements'][number];

/** One of the user's passkeys. */
export interface PasskeyEntry {
  '~ObjectID': string;
  Name: string;
  Created: string;
  LastUsed: string | null;
  Transports: string[];
}

type NewUser = BodyOf<'POST', '/v1/user'>;
/** A licence as an administrator gives it: an application, or one with a seat count. */
export type LicenceEntry = NonNullable<NewUser['Licences']>[number];
/** A password as the user calls take it: `password` (checked by the service's policy) or `pass` in the MD5 form. */
type NewPassword = { password?: string; pass?: string };
export type NewUserInput = Omit<NewUser, 'pass'> & NewPassword;
export type UserChangeInput = Omit<BodyOf<'PATCH', '/v1/user/:name'>, 'pass'> & NewPassword;

/** Password, sessions, user administration and passkeys (PROTOCOL.md 2.8). */
export interface AccountCalls {
  /** Changes the logged-in user's password; its other sessions end. A wrong current one throws `302`. */
  changePassword(current: PasswordInput, next: PasswordInput): Promise<void>;
  /** Asks for a reset token for `user` (delivered by the host); the same answer whether the user exists or not. */
  requestPasswordReset(user: string): Promise<void>;
  /** Sets a new password with a reset token; every session of the user ends. */
  confirmPasswordReset(token: string, next: PasswordInput): Promise<void>;
  /** The live sessions of the logged-in user (administrators: of `user`), newest first. */
  sessions(user?: string): Promise<SessionEntry[]>;
  /** Ends one session by its handle. */
  endSession(handle: string): Promise<void>;
  /** Ends every session of the logged-in user but the current one (administrators: all of `user`'s); answers how many. */
  endOtherSessions(user?: string): Promise<number>;
  /** Administrators: a page of the users, ordered by name (`GET /v1/users`; `page` from 0, `perPage` default 50). */
  users(options?: { page?: number; perPage?: number }): Promise<SerializedSet<UserEntry>>;
  /** Administrators: creates a user. */
  createUser(user: NewUserInput): Promise<AnswerOf<'POST', '/v1/user'>>;
  /** Administrators: changes a user (a new password or `Disabled` ends its sessions). */
  updateUser(name: string, change: UserChangeInput): Promise<AnswerOf<'PATCH', '/v1/user/:name'>>;
  /** WebAuthn creation options for `startRegistration` of `@simplewebauthn/browser`. */
  passkeyRegistrationOptions(): Promise<Record<string, unknown>>;
  /** Stores the passkey `startRegistration` answered. */
  registerPasskey(response: unknown, name?: string): Promise<PasskeyEntry>;
  /** WebAuthn request options for `startAuthentication`. */
  passkeyLoginOptions(user?: string): Promise<Record<string, unknown>>;
  /** Logs in with the response of `startAuthentication`: a plain session the client then holds. */
  loginWithPasskey(response: unknown, appNames: string[] | string): Promise<SessionLogin>;
  passkeys(): Promise<PasskeyEntry[]>;
  removePasskey(id: string): Promise<void>;
}

/** A field of a class declared at run time (PROTOCOL.md 6.12; the types and limits of 6.8; `Class` the class a `ref` or `set` references). */
export type DeclaredField = ClassDeclarationInput['Fields'][string];

/** What `checkObjects` answers (PROTOCOL.md 6.12): how many were checked, and each refused one's index (0-based), code and message. */
export type CreateCheck = AnswerOf<'POST', '/v1/model/classes/:className/check'>;

/** The body of `PUT /v1/model/classes/{className}` (PROTOCOL.md 6.12): `Fields`, `Indexes`, `Strict`, `Description`, `Access` (group names, `"*"` or `"self"` per action). */
export type ClassDeclarationInput = BodyOf<'PUT', '/v1/model/classes/:className'>;

/** One of the instance's recent requests (`GET /v1/admin/requests`; `Route` null when no route matched, `Code` null for an answer that is no envelope). */
export type RecentRequest = AnswerOf<'GET', '/v1/admin/requests'>['~Elements'][number];

/** The administration of the model and the instance (PROTOCOL.md 6.12): members of `users.admins` only. */
export interface AdminCalls {
  /** Declares a class or replaces its declaration; `OdbRestError` 409 with `data` `{Violations, Examples}` when stored objects would not satisfy it. */
  declareClass(className: string, declaration: ClassDeclarationInput): Promise<ClassStructure>;
  /** Removes the run-time declaration of a class without objects. */
  removeClassDeclaration(className: string): Promise<void>;
  /** The answering instance's metrics over the last `minutes` (1 to 60, default 15). */
  metrics(minutes?: number): Promise<InstanceMetrics>;
  /** The answering instance's recent requests, newest first. */
  requests(options?: { page?: number; perPage?: number }): Promise<SerializedSet<RecentRequest>>;
}

/** The logged-in user's saved queries (at most 200). */
export interface SavedQueryCalls {
  list(): Promise<SavedQuery[]>;
  /** Saves (or replaces) the query `name`; query text that does not parse throws `OdbRestError` 400. */
  save(name: string, query: Omit<SavedQuery, 'Name'>): Promise<SavedQuery>;
  remove(name: string): Promise<void>;
}

/** An item of a v2 route's body, as the route declares it. */
type V2Body<P extends '/v2/objectdata/byQuery' | '/v2/objectdata/byid' | '/v2/objectdata/byParentObject' | '/v2/model/structure' | '/v2/view/load'> = BodyOf<'POST', P> extends readonly (infer Item)[] ? Item : never;
/**
 * What narrows a v2 selection (`byQuery`, `byParentObject`), as the route declares it (`order` e.g.
 * `Name ASC`, `seFulltext` words every object must contain, `type` and `context` passed to the host's
 * hooks); `query` also as field conditions, the query object's members beside it (sent as `query`'s
 * object form), `serialization` as an object.
 */
export type V2Selecting = Omit<V2Body<'/v2/objectdata/byQuery'>, 'className' | 'query' | 'serialization'> & QueryMembers & { query?: string | Filter; serialization?: Serialization };
export type V2QueryItem = V2Selecting & Pick<V2Body<'/v2/objectdata/byQuery'>, 'className'>;
/** `ids` at most 1000, of `className` or `classId`. */
export type V2IdItem = Omit<V2Body<'/v2/objectdata/byid'>, 'serialization'> & { serialization?: Serialization };
/** `member` the parent's reference or set field; `idList`: `~ObjectID` only. */
export type V2ParentItem = V2Selecting & Omit<V2Body<'/v2/objectdata/byParentObject'>, keyof V2Body<'/v2/objectdata/byQuery'>>;
export type V2ModelItem = V2Body<'/v2/model/structure'>;
export type V2ViewItem = V2Body<'/v2/view/load'>;

/** The v2 group of the product's current client (PROTOCOL.md 6.9): each list call answers in item order. */
export interface V2Calls {
  byQuery<T extends SerializedObject = SerializedObject>(items: V2QueryItem[]): Promise<SerializedSet<T>[]>;
  byId<T extends SerializedObject = SerializedObject>(items: V2IdItem[]): Promise<SerializedSet<T>[]>;
  byParentObject<T extends SerializedObject = SerializedObject>(items: V2ParentItem[]): Promise<SerializedSet<T>[]>;
  /** Per item, the class and (for `Object`) the classes derived from it. */
  modelStructure(items: V2ModelItem[]): Promise<ClassStructure[][]>;
  versionInfo(): Promise<AnswerOf<'GET', '/v2/versionInfo'>>;
  appConfig<T = Record<string, unknown>>(): Promise<T>;
  appTheme<T = Record<string, unknown>>(): Promise<T>;
  viewLoad<T = unknown>(items: V2ViewItem[]): Promise<T[]>;
  viewAction<T = unknown>(body: { action: Record<string, unknown>; [member: string]: unknown }): Promise<T>;
  /** A file's bytes as `downloadFile`; `variant` (page, usePdf, attachItem, zipItem, maxSize) goes to the host's hook. */
  downloadFile(objectId: string, options?: DownloadOptions & { variant?: Record<string, string> }): Promise<FileDownload>;
}
