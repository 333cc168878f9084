import { Core } from './core.js';
import { Mount } from './http/mount.js';
import { ApiReference } from './reference/serve.js';
import type { RequestContext } from './http/request.js';
import { withAnswerNow } from './http/answer-now.js';
import type { MaybePromise } from './maybe.js';
import type { MacroRegistry } from './macros/registry.js';
import type { ServiceOptions } from './options.js';
import type { KeyValueStore, ObjectStore } from './storage/types.js';

/** A running odbrest service: answer web `Request`s with `fetch`, from any runtime or adapter. */
export interface Service {
  /** Answers one request; never throws. `context` carries what the adapter knows (client address). */
  fetch(request: Request, context?: RequestContext): Promise<Response>;
  /**
   * Whether the service has a route for this URL's path (base path and alias included). The method
   * does not decide: a route answers a wrong one with `405`, and so is a bad percent-encoding (`400`).
   * Middleware adapters use it to leave other requests, body untouched, to the host app.
   */
  serves(url: string | URL): boolean;
  /** Register or remove macros at run time. */
  readonly macros: MacroRegistry;
  readonly store: ObjectStore;
  readonly kv: KeyValueStore;
  /** Settles when seed data has been loaded. */
  readonly ready: Promise<void>;
  /**
   * Starts a graceful shutdown: `_CheckReady` answers `503` from now on (a load balancer stops sending
   * requests), and event streams end with a hint to reconnect; requests in flight are answered as
   * usual. Stop accepting connections after it, wait for those in flight, then `close()`.
   */
  drain(): void;
  /** Whether `drain()` was called. */
  readonly draining: boolean;
  /** Closes the stores, the blob store too (for hosts that shut down cleanly). */
  close(): Promise<void>;
}

/** Creates the service. Every option has a default; see `ServiceOptions`. */
export function createService(options: ServiceOptions = {}): Service {
  const core = new Core(options);
  const reference = options.apiReference ? new ApiReference(options.apiReference) : undefined;
  const mount = reference ? new Mount(options.mount) : undefined;
  /** The reference page's path relative to the service root, when the request is for it. */
  const referencePath = (url: string) => {
    const path = reference && URL.canParse(url) ? mount!.relativePath(new URL(url).pathname) : undefined;
    return path !== undefined && reference!.claims(path) ? path : undefined;
  };
  const answer: (request: Request, context?: RequestContext) => MaybePromise<Response> = reference
    ? (request, context) => {
        const path = referencePath(request.url);
        return path === undefined ? core.answer(request, context) : reference.answer(request, path);
      }
    : core.answer;
  return withAnswerNow<Service>({
    fetch: reference ? (request, context) => Promise.resolve(answer(request, context)) : core.fetch,
    serves: (url) => core.serves(url) || referencePath(String(url)) !== undefined,
    macros: core.ctx.macros,
    store: core.ctx.store,
    kv: core.ctx.kv,
    ready: core.ready,
    drain: () => core.ctx.lifecycle.drain(),
    get draining() {
      return core.ctx.lifecycle.draining;
    },
    close: async () => {
      await core.ctx.events.close();
      core.ctx.limiter.close();
      core.ctx.mail.close();
      await core.ctx.store.close?.();
      await core.ctx.kv.close?.();
      await core.ctx.files.blobs.close?.();
    },
  }, answer);
}

export type { ApiReferenceOptions, SwaggerUiFiles } from './reference/serve.js';
export type { ServiceOptions, SecureOptions, ObjectOptions, SerializationOptions, FoldersHook } from './options.js';
export { defineRoute, type HostRoute } from './host/routes.js';
export type { BusMessage, ChangeMessage, EndMessage, EventBus, EventOptions, GapMessage, ModelMessage } from './events/types.js';
export { encodeMessage, decodeMessage } from './events/types.js';
export { InProcessBus } from './events/bus.js';
export type { FileOptions } from './files/settings.js';
export type { RequestContext } from './http/request.js';
export type { RequestLogger, RequestLogEntry } from './http/request-log.js';
export { jsonRequestLog, jsonLogLine, jsonErrorLine, type LogBindings } from './http/request-log.js';
export type { MountOptions } from './http/mount.js';
export type { CorsOptions } from './http/cors.js';
export type { ServiceCheckOptions } from './checks/routes.js';
export type { SessionOptions } from './auth/sessions.js';
export type { TwoFactorLoginOptions } from './auth/two-factor-login.js';
export type { CustomAuthenticator, CustomLoginOptions, UserOptions } from './auth/principals.js';
export type { CacheSizes } from './caches.js';
export type { AccountUserOptions, PasskeyOptions, PasswordPolicy, PasswordResetDelivery } from './accounts/options.js';
export { defaultPasswordPolicy } from './accounts/options.js';
export type { Mailer, MailMessage, MailAttachment, MailOptions, MacroMail, MacroMailMessage, FileAttachment } from './mail/types.js';
export { MailDeliveryError, MAX_ATTACHMENT_BYTES } from './mail/outbox.js';
export type { ErrorContext } from './context.js';
export { ApiError, STATUS_CODES, type StatusCode, type ApiErrorOptions } from './http/errors.js';
export { StorageUnavailableError, StoreConflictError, StoreValueError, BlobTooLargeError } from './storage/errors.js';
export { errorResponse, type Envelope } from './http/envelope.js';
export { answerNow } from './http/answer-now.js';
export { bodilessRequest, headersView, lightAnswer, textResponse, type LightAnswer, type RawHeaders } from './http/light-response.js';
export { defaultCrypto, nativeCrypto, portableCrypto, type NodeCryptoFunctions, type SymmetricCrypto } from './secure/symmetric.js';
export type {
  ObjectStore,
  KeyValueStore,
  StoredObject,
  ObjectInput,
  FindQuery,
  FindResult,
  Where,
  Condition,
  FieldOperators,
  OrderBy,
  Scalar,
  Fields,
  FieldValue,
  RefValue,
  SetValue,
  ClassCount,
  ReferencingQuery,
  ClassRules,
  Violations,
} from './storage/types.js';
export { isRef, isSet, referencedIds } from './storage/types.js';
export type { MaybePromise } from './maybe.js';
export { matches, compileWhere, followsReferences, compareFieldValues, compareCodePoints, orderComparator, fieldValue, isScalar, referencesId } from './storage/filter.js';
export { nextStoreTime } from './storage/store-time.js';
export { MemoryObjectStore, type MemoryObjectStoreOptions } from './storage/memory-object-store.js';
export { MemoryKeyValueStore, type MemoryKeyValueStoreOptions } from './storage/memory-kv.js';
export { KV_PARTITIONS, type KvPartition } from './storage/keys.js';
export {
  BLOB_ID,
  BlobMeter,
  invalidBlobId,
  pieces,
  pieceStream,
  refuseStream,
  resolveRange,
  type BlobStore,
  type BlobPutOptions,
  type BlobWritten,
  type BlobStat,
  type BlobRange,
  type BlobRead,
  type BlobMeterOptions,
  type IncrementalHash,
} from './storage/blobs.js';
export { MemoryBlobStore, type MemoryBlobStoreOptions } from './storage/memory-blobs.js';
/** For store subpaths and adapters of hosts: loads an optional peer package, naming the missing one with its install command. */
export { loadOptional } from './optional-package.js';
export { importObjects, type SeedData, type SeedObject } from './storage/seed.js';
export { newObjectId } from './storage/ids.js';
export { MacroRegistry, HOOK_NAMES, defineMacro, type MacroDeclaration, type Macro, type Macros, type MacroContext, type Hooks, type HookName, type ExternalUserParams, type SerializationMacro, type SelectionMacro, type ObjectSet } from './macros/registry.js';
export { formatStoreTime, type JsonObject, type Serialization, type SerializationStyle, type SerializationStyles, type SetPage } from './objects/read/index.js';
export type { AccessAction, AccessOptions, AccessQuestion, AccessRules, Authorize, ClassAccess } from './objects/access.js';
export type { WriteChange, WriteHooks, WriteResult } from './objects/write/index.js';
export { type ClassDeclaration, ClassSchemas, type ClassStructure, derivedClassId, type FieldDeclaration, type FieldSpec, type FieldType, type ModelMember, type SchemaDeclarations } from './objects/model/index.js';
export type { V2Options, HostJson, ViewLoadItem, FileVariantParams } from './v2/routes.js';
export type { Session, SessionKind } from './auth/sessions.js';
export type { LoginLimitOptions } from './auth/login-limit.js';
export { hashPassword, verifyPassword, clientPassValue } from './auth/passwords.js';
export {
  TwoFactor,
  TWO_FACTOR_FIELD,
  readTwoFactorState,
  twoFactorRequirement,
  twoFactorStatus,
  qrCodeDataUrl,
  type TwoFactorOptions,
  type TwoFactorPolicy,
  type TwoFactorPolicies,
  type TwoFactorRequirement,
  type TwoFactorState,
  type Enrolment,
  type PrincipalRef,
} from './auth/two-factor.js';
export { SecretSealer, type SealingKey } from './auth/sealing.js';
export { SeatCounter, readLicences, type SeatRequest, type SeatHolder, type IsLive } from './auth/seats.js';
export { PROVIDER_CLASS } from './oauth/providers.js';
export { IDENTITY_CLASS } from './oauth/links.js';
export {
  PROVIDER_TYPES,
  type ProviderType,
  type Endpoints as ProviderEndpoints,
  type ExternalLoginOptions,
  type ExternalProviderOption,
  type ReadFile,
} from './oauth/types.js';
