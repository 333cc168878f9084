import { sessionFromHeaders } from './auth/credentials.js';
import { TokenSigner } from './auth/jwt.js';
import { loginRoutes, type WhileChecking } from './auth/login.js';
import { LoginLimiter } from './auth/login-limit.js';
import { dummyPasswordHash, verifyPassword } from './auth/passwords.js';
import { SessionStore, type Session } from './auth/sessions.js';
import { readBodyText } from './http/body.js';
import { errorReply, toApiError, toResponse, type Answer } from './http/envelope.js';
import { ApiError, clip } from './http/errors.js';
import type { ApiRequest, RequestContext } from './http/request.js';
import { RouteTable, type Route } from './http/router.js';
import { macroRoutes } from './macros/routes.js';
import { MacroRegistry, type MacroContext } from './macros/registry.js';
import { ExternalLogin } from './oauth/flow.js';
import { IDENTITY_CLASS } from './oauth/links.js';
import { PROVIDER_CLASS } from './oauth/providers.js';
import { externalLoginRoutes } from './oauth/routes.js';
import { objectRoutes } from './objects/routes.js';
import { SecureTransport } from './secure/handler.js';
import { secureLoginRoutes } from './secure/routes.js';
import { ServerKeySource } from './secure/server-key.js';
import { portableCrypto, type SymmetricCrypto } from './secure/symmetric.js';
import { Serializer } from './objects/serialize.js';
import type { ServiceOptions } from './options.js';
import { MemoryKeyValueStore } from './storage/memory-kv.js';
import { MemoryObjectStore } from './storage/memory-object-store.js';
import { importObjects } from './storage/seed.js';
import type { KeyValueStore, ObjectStore, StoredObject } from './storage/types.js';

/** The service internals shared by all route modules. Hosts use `createService`, not this. */
export class Core {
  readonly store: ObjectStore;
  readonly kv: KeyValueStore;
  readonly sessions: SessionStore;
  readonly limiter: LoginLimiter;
  readonly tokens: TokenSigner;
  readonly macros: MacroRegistry;
  readonly serializer: Serializer;
  readonly databaseName: string;
  readonly now: () => number;
  readonly ready: Promise<void>;
  /** Classes the object endpoints never serve (see `ServiceOptions.internalClasses`). */
  readonly internalClasses: ReadonlySet<string>;
  /** The RSA key of the secure login (configured, or generated on first use). */
  readonly serverKey: ServerKeySource;
  /** AES-CTR and HMAC of the secure transport. */
  readonly symmetricCrypto: SymmetricCrypto;
  readonly #secure: SecureTransport;

  readonly #options: ServiceOptions;
  readonly #routes = new RouteTable();
  /** The base path and the alias segment, in order: what a request path must start with. */
  readonly #prefixes: string[];
  readonly #appKeys: Set<string> | undefined;
  readonly #maxBodyBytes: number;
  readonly #onError: (error: unknown) => void;
  readonly #userClass: string;
  #dummyHash: Promise<string> | undefined;
  /** The context hooks get when the service calls them outside a request (made once). */
  #hookContext: MacroContext | undefined;
  #loaded = false;

  constructor(options: ServiceOptions = {}) {
    this.#options = options;
    this.#userClass = options.userClass ?? 'User';
    this.now = options.now ?? Date.now;
    this.store = options.store ?? new MemoryObjectStore({ now: this.now });
    this.kv = options.kv ?? new MemoryKeyValueStore({ now: this.now });
    this.sessions = new SessionStore(
      this.kv,
      { idleMs: options.idleTimeoutMs ?? 30 * 60_000, absoluteMs: options.absoluteTimeoutMs ?? 12 * 3_600_000 },
      this.now,
    );
    this.limiter = new LoginLimiter(this.kv, options.loginLimit);
    this.tokens = new TokenSigner(options.jwtSecret);
    this.macros = new MacroRegistry(options.macros);
    this.databaseName = options.databaseName ?? 'odbrest';
    this.internalClasses = new Set([PROVIDER_CLASS, IDENTITY_CLASS, ...(options.internalClasses ?? [])]);
    this.serializer = new Serializer(this.store, options.serializationDepth ?? 2, () => this.#serializationHook(), this.internalClasses);
    if (options.alias !== undefined && (!/^[A-Za-z0-9_.-]+$/.test(options.alias) || ['v1', 'v2'].includes(options.alias))) {
      throw new Error(`alias ${JSON.stringify(options.alias)} is not allowed (one path segment, not v1 or v2)`);
    }
    this.#prefixes = [normalizeBase(options.basePath ?? ''), ...(options.alias === undefined ? [] : [`/${options.alias}`])].filter(Boolean);
    this.#appKeys = options.appKeys ? new Set(options.appKeys) : undefined;
    this.#maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
    this.#onError = options.onError ?? ((error) => console.error('odbrest: unexpected error', error));
    this.serverKey = new ServerKeySource(options.serverKey);
    this.symmetricCrypto = options.symmetricCrypto ?? portableCrypto;
    this.#secure = new SecureTransport(this);
    this.addRoutes([...loginRoutes(this), ...objectRoutes(this), ...macroRoutes(this), ...secureLoginRoutes(this)]);
    const externalLogin = new ExternalLogin(this, {
      providers: options.oAuthProviders ?? [],
      publicUrl: options.publicUrl,
      alias: options.alias,
      userClass: this.#userClass,
      readFile: options.readFile,
    });
    this.addRoutes(externalLoginRoutes(this, externalLogin));
    const seeded = options.data ? importObjects(this.store, options.data, options.passwordIterations).then(() => undefined) : Promise.resolve();
    // Provider entries live in the store, so they are checked once the seed data is in.
    this.ready = Promise.all([seeded.then(() => externalLogin.load()), this.serverKey.ready]).then(() => undefined);
    // a failure is logged once; requests get a 500 envelope
    this.ready.then(
      () => (this.#loaded = true),
      (error: unknown) => this.#onError(error),
    );
  }

  addRoutes(routes: Route[]): void {
    this.#routes.add(routes);
  }

  /** Answers a web request; never throws. */
  async fetch(request: Request, context: RequestContext = {}): Promise<Response> {
    try {
      // awaiting even a settled promise costs a microtask turn per request, so only until it settles
      if (!this.#loaded) {
        await this.ready.catch(() => {
          throw new ApiError('500', 'the service failed to start (configuration or seed data); see the server log');
        });
      }
      const apiRequest = this.#toApiRequest(request, context);
      if (this.#secure.claims(request.headers)) return await this.#secure.handle(apiRequest, (inner) => this.dispatch(inner));
      if (request.body) apiRequest.bodyText = await readBodyText(request, this.#maxBodyBytes);
      return toResponse(await this.dispatch(apiRequest));
    } catch (error) {
      return toResponse(errorReply(toApiError(error, this.#onError)));
    }
  }

  /** Routes a request whose body has been read; errors become envelopes (so transports can wrap them). */
  async dispatch(request: ApiRequest): Promise<Answer> {
    try {
      let matched: ReturnType<RouteTable['match']>;
      try {
        matched = this.#routes.match(request);
      } catch (error) {
        this.checkAppKey(request.headers); // an unknown route without app key is answered 100, not 404
        throw error;
      }
      const { route, params } = matched;
      request.params = params;
      if (route.appKey !== false) this.checkAppKey(request.headers);
      if (route.auth !== 'none') {
        request.session ??= await sessionFromHeaders(request, this.sessions, this.tokens, this.now(), (token) => this.#secure.sessionOf(token));
        if (route.auth === 'objects' && request.session.appNames.length === 0) {
          throw new ApiError('307', 'this session logged in without appNames and may only execute macros');
        }
      }
      return await route.handler(request);
    } catch (error) {
      return errorReply(toApiError(error, this.#onError));
    }
  }

  /** Largest accepted request body, in bytes. */
  get maxBodyBytes(): number {
    return this.#maxBodyBytes;
  }

  checkAppKey(headers: Headers): void {
    const appKey = headers.get('appkey');
    if (!appKey) throw new ApiError('100', 'appkey header missing');
    if (this.#appKeys && !this.#appKeys.has(appKey)) throw new ApiError('100', 'appkey not accepted');
  }

  /** The database user with this name if `pass` matches; costs the same when the user is unknown. */
  async checkDatabaseUser(user: string, pass: string, whileChecking?: WhileChecking): Promise<StoredObject | undefined> {
    const { objects } = await this.store.find({ className: this.#userClass, where: { Name: user }, limit: 1 });
    return this.#checkPassword(objects[0], pass, whileChecking);
  }

  /** The `/v1/auth/df` principal: the host's check, or an object of `customLoginClass`. */
  async checkCustomUser(user: string, pass: string): Promise<StoredObject | undefined> {
    if (this.#options.authenticateCustom) return this.#options.authenticateCustom(user, pass);
    const className = this.#options.customLoginClass ?? 'ContactPerson';
    const { objects } = await this.store.find({ className, where: { Name: user }, limit: 1 });
    return this.#checkPassword(objects[0], pass);
  }

  async #checkPassword(candidate: StoredObject | undefined, pass: string, whileChecking?: WhileChecking): Promise<StoredObject | undefined> {
    const stored = candidate?.fields._passwordHash;
    if (typeof stored === 'string') {
      const check = verifyPassword(pass, stored);
      whileChecking?.(candidate!);
      return (await check) ? candidate : undefined;
    }
    this.#dummyHash ??= dummyPasswordHash(this.#options.passwordIterations);
    await verifyPassword(pass, await this.#dummyHash);
    return undefined;
  }

  macroContext(request: ApiRequest | undefined, session: Session | undefined = request?.session): MacroContext {
    return {
      session,
      user: async () => (session ? this.store.get(session.principalId) : undefined),
      store: this.store,
      kv: this.kv,
      request: request?.raw ?? new Request('http://odbrest/'),
    };
  }

  #serializationHook() {
    const hook = this.macros.get('xApi_BuildSerialization');
    if (!hook) return undefined;
    return async (obj: StoredObject, objectJson: Record<string, unknown>) => {
      this.#hookContext ??= this.macroContext(undefined);
      const result = await hook(this.#hookContext, { obj, objectJson });
      return typeof result === 'object' && result !== null ? (result as Record<string, unknown>) : objectJson;
    };
  }

  /**
   * Whether a route answers this URL (base path and alias included). The method never decides: a
   * wrong one is still ours (`405`), and so is a bad percent-encoding (`400`). Framework adapters
   * leave every other request to the host app, before touching its body or answering `100` for a
   * missing app key. Nothing is thrown on the way, since most of what adapters ask about is not ours.
   */
  async serves(_method: string, url: string | URL): Promise<boolean> {
    let pathname: string;
    try {
      pathname = new URL(url).pathname;
    } catch {
      return false;
    }
    const path = this.#relativePath(pathname);
    return path !== undefined && this.#routes.fits(path);
  }

  /** The path relative to the service root; `404` outside the base path or alias. */
  #innerPath(pathname: string): string {
    const path = this.#relativePath(pathname);
    if (path === undefined) throw new ApiError('404', `no route ${clip(pathname)}`);
    return path;
  }

  /** The path relative to the service root, or `undefined` outside the base path or alias. */
  #relativePath(pathname: string): string | undefined {
    let path = pathname;
    for (const prefix of this.#prefixes) {
      if (path !== prefix && !path.startsWith(`${prefix}/`)) return undefined;
      path = path.slice(prefix.length) || '/';
    }
    return path;
  }

  #toApiRequest(request: Request, context: RequestContext): ApiRequest {
    const url = new URL(request.url);
    const path = this.#innerPath(url.pathname);
    return {
      method: request.method.toUpperCase(),
      path,
      target: path + url.search,
      searchParams: url.searchParams,
      headers: request.headers,
      raw: request,
      clientAddress: this.#clientAddress(request.headers, context),
      bodyText: '',
      secure: false,
      params: {},
    };
  }

  #clientAddress(headers: Headers, context: RequestContext): string | undefined {
    if (this.#options.trustProxy) {
      const forwarded = headers.get('x-forwarded-for')?.split(',')[0]?.trim();
      if (forwarded) return forwarded;
    }
    return context.clientAddress;
  }
}

function normalizeBase(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  if (trimmed === '') return '';
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}
