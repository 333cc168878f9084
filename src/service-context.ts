/**
 * The context a service's routes stand on (`AssembledContext`: every feature's context), assembled from its options: the stores (wrapped
 * for telemetry when an SDK is there), sessions, logins, access, serialization, the write setup and
 * the rest.
 */
import { TokenSigner } from './auth/jwt.js';
import { LoginLimiter } from './auth/login-limit.js';
import { Principals } from './auth/principals.js';
import { SeatCounter } from './auth/seats.js';
import { SessionStore, sessionLimits } from './auth/sessions.js';
import { TwoFactorLogin } from './auth/two-factor-login.js';
import type { CacheSizes } from './caches.js';
import type { AuthContext } from './auth/context.js';
import type { ObjectsContext } from './objects/context.js';
import { changeEvents } from './events/hub.js';
import { fileSettings } from './files/settings.js';
import { appKeyCheck } from './http/app-keys.js';
import { Lifecycle } from './lifecycle.js';
import { serializationHook } from './macros/hooks.js';
import { MacroRegistry, macroContext, type MacroContext } from './macros/registry.js';
import { Access } from './objects/access.js';
import { InProcessBus } from './events/bus.js';
import { ClassSchemas, MODEL_CLASS, RuntimeModel } from './objects/model/index.js';
import { Serializer, serializerOptions } from './objects/read/index.js';
import { RECYCLED_CLASS, sessionObjectStore, withoutRecycled, writeOptions } from './objects/write/index.js';
import { SAVED_QUERIES_CLASS } from './saved-queries/saved-queries.js';
import { IDENTITY_CLASS } from './oauth/links.js';
import { PROVIDER_CLASS } from './oauth/providers.js';
import type { ServiceOptions } from './options.js';
import type { ErrorContext } from './context.js';
import type { InstanceMetrics } from './admin/metrics.js';
import { Outbox } from './mail/outbox.js';
import { ServerKeySource } from './secure/server-key.js';
import { defaultCrypto } from './secure/symmetric.js';
import { MemoryKeyValueStore } from './storage/memory-kv.js';
import { MemoryObjectStore } from './storage/memory-object-store.js';
import { KV_OPERATIONS, OBJECT_STORE_OPERATIONS, type Telemetry } from './telemetry.js';

/** Every feature's context at once: what `core.ts` wires the routes with. */
export interface AssembledContext extends AuthContext, ObjectsContext {}

export function serviceContext(
  options: ServiceOptions,
  telemetry: Telemetry,
  caches: CacheSizes,
  metrics?: InstanceMetrics,
): AssembledContext {
  const now = options.now ?? Date.now;
  // a recycled object's id holds its bin entry: every read by id meets it as deleted
  const store = withoutRecycled(telemetry.instrument(options.store ?? new MemoryObjectStore({ now }), 'odbrest.objects', OBJECT_STORE_OPERATIONS));
  const kv = telemetry.instrument(options.kv ?? new MemoryKeyValueStore({ now }), 'odbrest.kv', KV_OPERATIONS);
  const macros = new MacroRegistry(options.macros, options.objects?.serialization?.macros);
  // the service's own internal classes (OAuth providers and links, recycle bin entries) and the host's
  const internalClasses = new Set([PROVIDER_CLASS, IDENTITY_CLASS, RECYCLED_CLASS, MODEL_CLASS, SAVED_QUERIES_CLASS, ...(options.objects?.internalClasses ?? [])]);
  // one bus for the change events and the model's run-time declarations (PROTOCOL.md 6.12)
  const bus = options.events?.bus ?? new InProcessBus();
  const onError = options.onError ?? reportToConsole;
  const files = fileSettings(options.files, now);
  let hookContext: MacroContext | undefined; // what hooks called outside a request see, made once
  let runtimeModel: RuntimeModel | undefined;
  const ctx: AssembledContext = {
    store,
    kv,
    sessions: new SessionStore(kv, sessionLimits(options.session), now, caches.sessions, (change) => telemetry.session(change)),
    principals: new Principals(store, options.users, options.customLogin),
    limiter: new LoginLimiter(kv, options.loginLimit),
    twoFactor: new TwoFactorLogin(store, options.twoFactor, now),
    seats: new SeatCounter(kv, now),
    tokens: new TokenSigner(options.session?.jwtSecret),
    macros,
    files,
    serializer: new Serializer(store, { ...serializerOptions(options.objects), internalClasses, storeTimeCache: caches.storeTimes, fileClass: options.files?.className }, () =>
      serializationHook(macros, () => (hookContext ??= ctx.macroContext(undefined))),
    ),
    schema: new ClassSchemas(options.schema, options.files?.className ?? 'Document', store),
    access: new Access(store, options.access, [options.users?.className ?? 'User', options.customLogin?.className ?? 'ContactPerson']),
    get runtimeModel() {
      return (runtimeModel ??= new RuntimeModel(ctx, bus));
    },
    folders: options.folders,
    guard: (request, rightsControlKey) => ctx.access.forRequest(request, ctx.macroContext, rightsControlKey),
    writeHooks: { beforeWrite: options.objects?.beforeWrite, afterWrite: options.objects?.afterWrite },
    writeOptions: writeOptions(options.objects, options.actions),
    events: changeEvents(() => ctx, { ...options.events, bus }),
    serverKey: new ServerKeySource(options.secure?.serverKey),
    symmetricCrypto: options.secure?.symmetricCrypto ?? defaultCrypto,
    databaseName: options.databaseName ?? 'odbrest',
    internalClasses,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    now,
    checkAppKey: appKeyCheck(options.appKeys),
    macroContext: (request, session = request?.session) => macroContext(ctx.schema.checkedStore, kv, session, request?.raw ?? new Request('http://odbrest/'), ctx.mail),
    sessionMacroContext: (request) => {
      const sessionStore = sessionObjectStore(ctx, request);
      return { ...ctx.macroContext(request), store: sessionStore, mail: ctx.mail.forMacros(sessionStore) };
    },
    onError,
    mail: new Outbox(options.mail, files, { onError, count: (outcome) => telemetry.mail(outcome) }),
    lifecycle: new Lifecycle(),
  };
  return ctx;
}

/** The default `onError`: the error on standard error, with the id of the request it happened in. */
export function reportToConsole(error: unknown, about?: ErrorContext): void {
  console.error(`odbrest: unexpected error${about?.requestId === undefined ? '' : ` (request ${about.requestId})`}`, error);
}
