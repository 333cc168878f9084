import type { PasskeyOptions } from './accounts/options.js';
import type { LoginLimitOptions } from './auth/login-limit.js';
import type { CustomLoginOptions, UserOptions } from './auth/principals.js';
import type { SessionOptions } from './auth/sessions.js';
import type { TwoFactorLoginOptions } from './auth/two-factor-login.js';
import type { CacheSizes } from './caches.js';
import type { ServiceCheckOptions } from './checks/routes.js';
import type { FileOptions } from './files/settings.js';
import type { EventOptions } from './events/types.js';
import type { CorsOptions } from './http/cors.js';
import type { MountOptions } from './http/mount.js';
import type { RequestLogger } from './http/request-log.js';
import type { HostRoute } from './host/routes.js';
import type { FoldersHook, Macros, SerializationMacro } from './macros/registry.js';
import type { AccessOptions } from './objects/access.js';
import type { SerializationStyles } from './objects/read/index.js';
import type { HostAction, WriteHooks } from './objects/write/index.js';
import type { SchemaDeclarations } from './objects/model/index.js';
import type { ExternalLoginOptions } from './oauth/types.js';
import type { SymmetricCrypto } from './secure/symmetric.js';
import type { SeedData } from './storage/seed.js';
import type { StudioOptions } from './studio/serve.js';
import type { ApiReferenceOptions } from './reference/serve.js';
import type { KeyValueStore, ObjectStore } from './storage/types.js';
import type { V2Options } from './v2/routes.js';
import type { ErrorContext } from './context.js';
import type { MailOptions } from './mail/types.js';

export type { FoldersHook };

/** The secure login and transport (PROTOCOL.md 3, 4). */
export interface SecureOptions {
  /**
   * RSA private key of the secure login, as PEM (PKCS#8 `PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`), at
   * least 2048 bits. Default: a 2048-bit key generated on first use; several instances behind one
   * address must share a configured key (it also seals their Secure-Tokens).
   */
  serverKey?: string;
  /**
   * AES-256-CTR and HMAC-SHA-256 of the secure transport. Default: `defaultCrypto`, node:crypto's
   * native ones where the runtime has `process.getBuiltinModule` (Node 20.16+, Bun, Deno), else
   * `portableCrypto` (pure JS, with WebCrypto for bodies over 8 KiB), which runs everywhere.
   */
  symmetricCrypto?: SymmetricCrypto;
}

/** What the `serialization` parameter may ask for beyond the built-in types (PROTOCOL.md 6.1). */
export interface SerializationOptions {
  /**
   * Field lists per class and style for `{"type": "class", "style": "preview" | "detailview"}`, e.g.
   * `{Customer: {preview: ['Name', 'City']}}`; a class without a list for the style asked is served in full.
   */
  styles?: SerializationStyles;
  /** Serialization macros by name, for `{"type": "macro", "macro": name}` (an unknown name is `404`). */
  macros?: Record<string, SerializationMacro>;
}

/** Serving and writing objects (PROTOCOL.md 6); `beforeWrite` and `afterWrite` are the write hooks (6.3). */
export interface ObjectOptions extends WriteHooks {
  /** Nesting depth of referenced objects in serializations. Default 2. */
  serializationDepth?: number;
  /** Preview and detail field lists per class, and serialization macros. */
  serialization?: SerializationOptions;
  /**
   * Classes the object endpoints never serve (`404`; as a reference, only the metadata). Always
   * includes the service's own `OAuthProvider` (client secrets) and `ExternalIdentity` (links).
   */
  internalClasses?: readonly string[];
  /**
   * What `DELETE /v1/object/{id}` does without `moveToRecycler`: `delete` (default) for good, or
   * `recycle`: to the deleting user's recycle bin (PROTOCOL.md 6.3).
   */
  deleteMode?: 'delete' | 'recycle';
  /** Days a recycled object waits in the bin before it is deleted for good. Default 30. */
  recycleDays?: number;
}

/** Options of `createService`, grouped by concern. Every one has a default. */
export interface ServiceOptions {
  /** The database. Default: an in-process `MemoryObjectStore`. */
  store?: ObjectStore;
  /** Sessions, counters and other short-lived state. Default: an in-process `MemoryKeyValueStore`. */
  kv?: KeyValueStore;
  /** Objects loaded into the store at start-up (see `SeedData`). */
  data?: SeedData;
  /** `databaseName` in login answers. Default `odbrest`. */
  databaseName?: string;
  /** Base path and database alias (PROTOCOL.md 1.1). */
  mount?: MountOptions;
  /** Accepted `appkey` values. Default: any non-empty value. */
  appKeys?: readonly string[];
  /** Cross-origin requests from browser pages on these origins (PROTOCOL.md 1.5). Default: none. */
  cors?: CorsOptions;
  /** Take the client address from the first `X-Forwarded-For` entry. Only behind a proxy you run. */
  trustProxy?: boolean;
  /** Largest accepted request body. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Session lifetimes and the token login's key (PROTOCOL.md 2.3). */
  session?: SessionOptions;
  /** Failed-login limits (PROTOCOL.md 2.4). */
  loginLimit?: LoginLimitOptions;
  /** Two-factor login (TOTP) per application, and the key that seals the users' secrets (PROTOCOL.md 2.6). */
  twoFactor?: TwoFactorLoginOptions;
  /** Where database users live and how the passwords of seeded users are hashed. */
  users?: UserOptions;
  /** The `/v1/auth/df` login of principals that are not database users (PROTOCOL.md 5.4). */
  customLogin?: CustomLoginOptions;
  /** The secure login and transport. */
  secure?: SecureOptions;
  /** Passkeys (WebAuthn) for the service's users (PROTOCOL.md 2.8). Default: none. */
  passkeys?: PasskeyOptions;
  /** External login through OAuth providers (PROTOCOL.md 5). */
  externalLogin?: ExternalLoginOptions;
  /** Serialization, the classes never served, and the write hooks. */
  objects?: ObjectOptions;
  /** Who may read, create, update and delete objects of each class (PROTOCOL.md 6.4). Default: every session reads, users see only themselves, nobody writes. */
  access?: AccessOptions;
  /**
   * Declared classes (PROTOCOL.md 6.8): their fields' types and constraints, checked on every write;
   * the model routes and `odbrest types` describe them. Undeclared classes stay schemaless. A
   * declaration that contradicts itself makes `createService` throw, naming the class and field.
   */
  schema?: SchemaDeclarations;
  /** Files: the blob store, the upload limit and the file class (PROTOCOL.md 6.6). */
  files?: FileOptions;
  /**
   * Host actions by type, run by a write's `actions` parameter and by `POST /v1/action/{className}`
   * (PROTOCOL.md 6.3), e.g. `{sendObject: (context, action, object) => ...}`. `add` and `remove` are built in.
   */
  actions?: Readonly<Record<string, HostAction>>;
  /** The host's side of the v2 group (PROTOCOL.md 6.9): app configuration and theme, views, file variants. */
  v2?: V2Options;
  /** Realtime change events (`GET /v1/events`, PROTOCOL.md 8): the bus between instances, limits, keep-alive. */
  events?: EventOptions;
  /** Macros by name, including the typed `xApi_*` hooks (PROTOCOL.md 7). */
  macros?: Macros;
  /**
   * Routes of the host's own (PROTOCOL.md 6.10): application routes served with the service's app key,
   * credentials, envelope, secure transport, batches, request log and OpenAPI entry. A route that
   * shadows a built-in one is an error at start-up. See `defineRoute`.
   */
  routes?: readonly HostRoute<any, any>[];
  /** The objects of a folder, for the query object's `folderPath` and `folderType` (PROTOCOL.md 6.2). */
  folders?: FoldersHook;
  /** What `_CheckService` and `/v1/versioninfo` report, and the health check's time limit (PROTOCOL.md 2.5). */
  serviceCheck?: ServiceCheckOptions;
  /**
   * Serve the OpenAPI 3.1 document of every route at `GET {base}/openapi.json`, to anyone (no app key
   * or credential: it describes the protocol, nothing of the configuration but the base path and
   * `serviceCheck`'s name and version). Default true; false leaves the path unrouted.
   */
  openApi?: boolean;
  /**
   * Spans and metrics through `@opentelemetry/api` (docs/operations.md, "Operating it"): recorded when the host
   * registers an OpenTelemetry SDK before `createService`, no-ops otherwise. Default true; false leaves
   * the stores unwrapped (what the telemetry bench compares with).
   */
  telemetry?: boolean;
  /**
   * The instance's metrics and recent requests for `GET /v1/admin/metrics` and `/v1/admin/requests`
   * (PROTOCOL.md 6.12), kept in memory. Default true; false keeps none (the routes then answer empty
   * series and lists; every answer still carries `X-Request-Id`).
   */
  metrics?: boolean;
  /**
   * The studio: the service's own data browser (docs/studio.md), a web app served at `{base}/_studio/`
   * (or `path`) that logs in with the service's logins and reads through the API like any client.
   * Off unless turned on: `true` or `{ path?, appKey?, appNames?, docs? }`.
   */
  studio?: boolean | StudioOptions;
  /**
   * The API reference page: Swagger UI on the service's `openapi.json`, served at `{base}/docs` (or
   * `path`) from the files given in `swaggerUi` (on Node: `await swaggerUiFiles()` of `odbrest/node`,
   * which reads the optional `swagger-ui-dist` package). Default: none.
   */
  apiReference?: ApiReferenceOptions;
  /** Sizes of the per-process caches (entries). */
  caches?: Partial<CacheSizes>;
  /** Clock in epoch ms, for tests. */
  now?: () => number;
  /**
   * The request log: one entry per request (method, path with the query's values hidden, HTTP status,
   * internalStatus, milliseconds, the answer's `X-Request-Id`), never a header value or a body. A function receiving each line, or an
   * object with `info(entry, line)` such as a `pino` logger. Default: none.
   */
  logger?: RequestLogger;
  /**
   * Mail for password resets (PROTOCOL.md 2.8: to the user's `Email`, by its `Language`) and for macros
   * (`ctx.mail.send`): the transport (`smtpMailer` of `odbrest/node`, or the host's own `Mailer`), the
   * sender, the reset link's template and the retries (docs/accounts.md, "Mail"). Default: none.
   */
  mail?: MailOptions;
  /**
   * Called with unexpected errors (answered as a bare `500`) and with mail given up, each with the
   * request's `X-Request-Id` where there is one. Default: `console.error`.
   */
  onError?: (error: unknown, about?: ErrorContext) => void;
}
