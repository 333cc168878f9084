import type { LoginLimitOptions } from './auth/login-limit.js';
import type { Macro } from './macros/registry.js';
import type { OAuthProviderOption } from './oauth/providers.js';
import type { SymmetricCrypto } from './secure/symmetric.js';
import type { SeedData } from './storage/seed.js';
import type { KeyValueStore, ObjectStore, StoredObject } from './storage/types.js';

/** Checks a `/v1/auth/df` login; returns the principal's object, or `undefined` for wrong credentials. */
export type CustomAuthenticator = (user: string, pass: string) => Promise<StoredObject | undefined>;

export interface ServiceOptions {
  /** The database. Default: an in-process `MemoryObjectStore`. */
  store?: ObjectStore;
  /** Sessions, counters and other short-lived state. Default: an in-process `MemoryKeyValueStore`. */
  kv?: KeyValueStore;
  /** Objects loaded into the store at start-up (see `SeedData`). */
  data?: SeedData;
  /** `databaseName` in login answers. Default `odbrest`. */
  databaseName?: string;
  /** Path the service is mounted at, e.g. `/api`. Default: the root. */
  basePath?: string;
  /** Optional database alias: one more path segment after the base (`/api/{alias}/v1/...`). */
  alias?: string;
  /** Accepted `appkey` values. Default: any non-empty value. */
  appKeys?: readonly string[];
  /** HS256 key for `/v2/login` tokens (at least 32 bytes). Default: random per process. */
  jwtSecret?: string | Uint8Array;
  /** Idle timeout of a session, renewed by each authenticated request. Default 30 minutes. */
  idleTimeoutMs?: number;
  /** Absolute lifetime of a session. Default 12 hours. */
  absoluteTimeoutMs?: number;
  /** Failed-login limits (PROTOCOL.md 2.4). */
  loginLimit?: LoginLimitOptions;
  /** Largest accepted request body. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Nesting depth of referenced objects in serializations. Default 2. */
  serializationDepth?: number;
  /** Macros by name, including the `xApi_*` hooks. */
  macros?: Record<string, Macro<any, any>>;
  /** Take the client address from the first `X-Forwarded-For` entry. Only behind a proxy you run. */
  trustProxy?: boolean;
  /** Class of database users. Default `User`. */
  userClass?: string;
  /** Class checked by the default `/v1/auth/df` login. Default `ContactPerson`. */
  customLoginClass?: string;
  /** Replaces the default `/v1/auth/df` check. */
  authenticateCustom?: CustomAuthenticator;
  /** PBKDF2 iterations for hashes made by this service (seed passwords). Default 210,000. */
  passwordIterations?: number;
  /**
   * External login providers (PROTOCOL.md 5): each `name` selects the `OAuthProvider` object of that
   * name in the store; `endpoints` optionally points the provider elsewhere (a local identity server).
   */
  oAuthProviders?: readonly OAuthProviderOption[];
  /**
   * The external https address of the service root (base path included, alias not), e.g.
   * `https://api.example.com/api`. OAuth callbacks are `{publicUrl}/{alias}/v1/{name}/callback`.
   */
  publicUrl?: string;
  /**
   * Reads a file, for Apple's `.p8` key named by `additionalData.keyPath` (the core reads no files
   * itself). `odbrest serve` supplies it; Node hosts pass `readTextFile` from `odbrest/node`.
   */
  readFile?: (path: string) => Promise<string | Uint8Array>;
  /**
   * Classes the object endpoints never serve (`404`; as a reference, only the metadata). Always
   * includes the service's own `OAuthProvider` (client secrets) and `ExternalIdentity` (links).
   */
  internalClasses?: readonly string[];
  /**
   * RSA private key of the secure login, as PEM (PKCS#8 `PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`),
   * at least 2048 bits. Default: a 2048-bit key generated on first use; several instances behind one
   * address must share a configured key (it also seals their Secure-Tokens).
   */
  serverKey?: string;
  /**
   * AES-256-CTR and HMAC-SHA-256 of the secure transport. Default: `portableCrypto` (pure JS, with
   * WebCrypto for bodies over 8 KiB), which runs everywhere. On Node, Bun and Deno pass `nodeCrypto`
   * from `odbrest/node` (native; `loadConfig` sets it): an encrypted request then costs about half.
   */
  symmetricCrypto?: SymmetricCrypto;
  /** Clock in epoch ms, for tests. */
  now?: () => number;
  /** Called with unexpected errors (answered as a bare `500`). Default: `console.error`. */
  onError?: (error: unknown) => void;
}
