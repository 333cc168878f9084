import type { LoginLimiter } from './auth/login-limit.js';
import type { TokenSigner } from './auth/jwt.js';
import type { Principals } from './auth/principals.js';
import type { SeatCounter } from './auth/seats.js';
import type { TwoFactorLogin } from './auth/two-factor-login.js';
import type { Session, SessionStore } from './auth/sessions.js';
import type { ChangeEvents } from './events/types.js';
import type { FileSettings } from './files/settings.js';
import type { Answer } from './http/envelope.js';
import type { ApiRequest } from './http/request.js';
import type { FoldersHook, MacroContext, MacroRegistry } from './macros/registry.js';
import type { Access, Guard } from './objects/access.js';
import type { ClassSchemas } from './objects/schema.js';
import type { Serializer } from './objects/serialize.js';
import type { WriteHooks, WriteOptions } from './objects/writes.js';
import type { ServerKeySource } from './secure/server-key.js';
import type { SymmetricCrypto } from './secure/symmetric.js';
import type { KeyValueStore, ObjectStore } from './storage/types.js';
import type { Lifecycle } from './lifecycle.js';

/**
 * What route modules see of the service: the stores and the small services built on them. Declared
 * here, in a leaf module, so a route module depends on this interface and never on the code that
 * assembles the service (`core.ts`); each can be read, and tested, alone.
 */
export interface ServiceContext {
  readonly store: ObjectStore;
  readonly kv: KeyValueStore;
  readonly sessions: SessionStore;
  /** Finds principals and checks their passwords. */
  readonly principals: Principals;
  /** The failed-login limit. */
  readonly limiter: LoginLimiter;
  /** Two-factor policies and the users' TOTP secrets (PROTOCOL.md 2.6). */
  readonly twoFactor: TwoFactorLogin;
  /** Licence seats (PROTOCOL.md 2.7). */
  readonly seats: SeatCounter;
  /** Signs and verifies `/v2/login` tokens. */
  readonly tokens: TokenSigner;
  readonly macros: MacroRegistry;
  /** The blob store, upload limit and file class of the file routes (PROTOCOL.md 6.6). */
  readonly files: FileSettings;
  readonly serializer: Serializer;
  /** The declared classes (PROTOCOL.md 6.8): writes are checked against them. */
  readonly schema: ClassSchemas;
  /** The access rules (PROTOCOL.md 6.4). */
  readonly access: Access;
  /** The host's `folders` hook (the query object's `folderPath`/`folderType`, PROTOCOL.md 6.2), if any. */
  readonly folders: FoldersHook | undefined;
  /** The access rules as this request's session sees them (made once per request). */
  guard(request: ApiRequest): Guard;
  /** The host's `beforeWrite` and `afterWrite` (PROTOCOL.md 6.3). */
  readonly writeHooks: WriteHooks;
  /** Deletes to the recycle bin or for good, the bin's days, and the host's actions (PROTOCOL.md 6.3). */
  readonly writeOptions: WriteOptions;
  /** Realtime change events (PROTOCOL.md 8): the write path publishes every write here. */
  readonly events: ChangeEvents;
  /** The RSA key of the secure login (configured, or generated on first use). */
  readonly serverKey: ServerKeySource;
  /** AES-CTR and HMAC of the secure transport. */
  readonly symmetricCrypto: SymmetricCrypto;
  /** The live secure session a Secure-Token names (to refuse such a token sent as `sessionId` with `205`). */
  secureSessionOf(token: string): Promise<Session | undefined>;
  /** `databaseName` in login answers. */
  readonly databaseName: string;
  /** Classes the object endpoints never serve. */
  readonly internalClasses: ReadonlySet<string>;
  /** Largest accepted request body, in bytes. */
  readonly maxBodyBytes: number;
  now(): number;
  /** Throws `100` unless the headers carry an accepted `appkey`. */
  checkAppKey(headers: Headers): void;
  /** What a macro or hook called for this request (or outside one) sees; `session` for one the request does not carry yet (a login's). */
  macroContext(request: ApiRequest | undefined, session?: Session): MacroContext;
  /**
   * Routes a request whose body has been read, as the service routes any (`/v1/multi` items): app key,
   * credential (unless `session` is set) and route; every failure is an envelope.
   */
  dispatch(request: ApiRequest): Promise<Answer>;
  /** Reports an unexpected error (answered as a bare `500`). */
  onError(error: unknown): void;
  /** Live, ready or draining; long-lived answers end when `lifecycle.closing` aborts. */
  readonly lifecycle: Lifecycle;
}
