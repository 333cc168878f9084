import { authorize } from './auth/credentials.js';
import { cacheSizes } from './caches.js';
import type { ServiceContext } from './context.js';
import { readBodyText } from './http/body.js';
import { Cors } from './http/cors.js';
import { errorReply, toApiError, toResponse, type Answer } from './http/envelope.js';
import { ApiError, clip } from './http/errors.js';
import { Mount } from './http/mount.js';
import { decodeQb64, toApiRequest, type ApiRequest, type RequestContext } from './http/request.js';
import { logRequests, noteAnswer } from './http/request-log.js';
import { checkBatchItem, RouteTable } from './http/router.js';
import { ExternalLogin } from './oauth/flow.js';
import type { ServiceOptions } from './options.js';
import { serviceRoutes } from './routes.js';
import { SecureTransport } from './secure/transport.js';
import { importObjects } from './storage/seed.js';
import { serviceContext } from './service-context.js';
import { Telemetry } from './telemetry.js';

/** Assembles the service from its options and dispatches requests to its routes. Hosts use `createService`. */
export class Core {
  readonly ctx: ServiceContext;
  readonly ready: Promise<void>;
  /** Answers a web request; never throws. Each answer is logged when the host passes a `logger`. */
  readonly fetch: (request: Request, context?: RequestContext) => Promise<Response>;
  readonly #routes = new RouteTable();
  readonly #mount: Mount;
  readonly #secure: SecureTransport;
  readonly #trustProxy: boolean;
  readonly #telemetry: Telemetry;
  #loaded = false;
  constructor(options: ServiceOptions = {}) {
    const telemetry = (this.#telemetry = new Telemetry(options.telemetry !== false));
    const caches = cacheSizes(options.caches);
    this.#mount = new Mount(options.mount);
    this.#trustProxy = options.trustProxy ?? false;
    const cors = new Cors(options.cors);
    const answer = (request: Request, context?: RequestContext) => cors.handle(request, () => this.serves(request.url), () => this.#answer(request, context));
    this.fetch = logRequests(options.logger, (request, context) => telemetry.request(request, () => answer(request, context)));
    const ctx = serviceContext(options, telemetry, caches, { secureSessionOf: (token) => this.#secure.sessionOf(token), dispatch: (inner) => this.#dispatch(inner) });
    this.ctx = ctx;
    this.#secure = new SecureTransport(ctx, caches.secureSessions);
    const externalLogin = new ExternalLogin(ctx, { ...options.externalLogin, alias: this.#mount.alias, userClass: ctx.principals.userClass });
    this.#routes.add(serviceRoutes(ctx, externalLogin, options));
    const seeded = options.data ? importObjects(ctx.store, options.data, options.users?.passwordIterations) : Promise.resolve();
    // Provider entries live in the store, so they are checked once the seed data is in.
    this.ready = Promise.all([seeded.then(() => externalLogin.load()), ctx.serverKey.ready]).then(() => undefined);
    // a failure is logged once; requests get a 500 envelope
    this.ready.then(() => (this.#loaded = true), ctx.onError);
  }

  async #answer(request: Request, context: RequestContext = {}): Promise<Response> {
    try {
      // awaiting even a settled promise costs a microtask turn per request, so only until it settles
      if (!this.#loaded) {
        await this.ready.catch(() => {
          throw new ApiError('500', 'the service failed to start (configuration or seed data); see the server log');
        });
      }
      const url = new URL(request.url);
      const path = this.#mount.relativePath(url.pathname);
      if (path === undefined) throw new ApiError('404', `no route ${clip(url.pathname)}`);
      const apiRequest = toApiRequest(request, url, path, context, this.#trustProxy);
      const rawBody = request.body !== null && this.#routes.takesRawBody(apiRequest); // file uploads: the route streams it
      if (this.#secure.claims(request.headers)) return await this.#secure.handle(apiRequest, (inner) => this.#dispatch(inner), rawBody);
      if (request.body && !rawBody) apiRequest.bodyText = await readBodyText(request, this.ctx.maxBodyBytes);
      return toResponse(await this.#dispatch(apiRequest), context.lightResponses);
    } catch (error) {
      return toResponse(noteAnswer(request, errorReply(toApiError(error, this.ctx.onError))), context.lightResponses);
    }
  }

  /** Whether a route answers this URL's path (base path and alias included); see `Service.serves`. */
  serves(url: string | URL): boolean {
    const path = URL.canParse(url) ? this.#mount.relativePath(new URL(url).pathname) : undefined;
    return path !== undefined && this.#routes.fits(path);
  }

  /** Routes a request whose body has been read; errors become envelopes (so transports can wrap them). */
  async #dispatch(request: ApiRequest): Promise<Answer> {
    let template: string | undefined;
    const answered = (answer: Answer) => this.#telemetry.routed(request.raw, template, noteAnswer(request.raw, answer));
    try {
      let matched: ReturnType<RouteTable['match']>;
      try {
        matched = this.#routes.match(request);
      } catch (error) {
        this.ctx.checkAppKey(request.headers); // an unknown route without app key is answered 100, not 404
        throw error;
      }
      const { route, params } = matched;
      template = route.path;
      request.params = params;
      if (route.appKey !== false) this.ctx.checkAppKey(request.headers);
      checkBatchItem(request, route);
      decodeQb64(request);
      if (route.auth === 'none') return answered(await route.handler(request));
      const session = (request.session = await authorize(this.ctx, request, route));
      return answered(await this.ctx.sessions.consistent(this.ctx.store, session, () => route.handler(request)));
    } catch (error) {
      return answered(errorReply(toApiError(error, this.ctx.onError)));
    }
  }
}
