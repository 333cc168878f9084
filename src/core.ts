import { authorize } from './auth/credentials.js';
import { cacheSizes } from './caches.js';
import { readBodyText } from './http/body.js';
import { Cors } from './http/cors.js';
import { errorReply, toApiError, toResponse, type Answer } from './http/envelope.js';
import { ApiError, clip } from './http/errors.js';
import { Mount } from './http/mount.js';
import { decodeQb64, toApiRequest, type ApiRequest, type RequestContext } from './http/request.js';
import { isPending, andThen, type MaybePromise } from './maybe.js';
import { checkBatchItem, RouteTable } from './http/router.js';
import { ExternalLogin } from './oauth/flow.js';
import type { ServiceOptions } from './options.js';
import { serviceRoutes } from './routes.js';
import { SecureTransport } from './secure/transport.js';
import { importObjects } from './storage/seed.js';
import { serviceContext, type AssembledContext } from './service-context.js';
import { Studio } from './studio/serve.js';
import { Telemetry } from './telemetry.js';
import { InstanceMetrics } from './admin/metrics.js';
import { identifiedAnswers } from './admin/request-ids.js';
import { logRequests, noteAnswer } from './http/request-log.js';
import { randomToken } from './storage/ids.js';

/** Assembles the service from its options and dispatches requests to its routes. Hosts use `createService`. */
export class Core {
  readonly ctx: AssembledContext;
  readonly ready: Promise<void>;
  /** Answers a web request; never throws. Each answer is logged when the host passes a `logger`. */
  readonly fetch: (request: Request, context?: RequestContext) => Promise<Response>;
  readonly #routes = new RouteTable();
  readonly #mount: Mount;
  readonly #secure: SecureTransport;
  readonly #trustProxy: boolean;
  readonly #telemetry: Telemetry;
  readonly #studio: Studio | undefined;
  /** The instance's metrics and recent requests (PROTOCOL.md 6.12); absent with `metrics: false`. */
  readonly #metrics: InstanceMetrics | undefined;
  #loaded = false;
  constructor(options: ServiceOptions = {}) {
    const telemetry = (this.#telemetry = new Telemetry(options.telemetry !== false));
    const caches = cacheSizes(options.caches);
    this.#mount = new Mount(options.mount);
    this.#trustProxy = options.trustProxy ?? false;
    const cors = new Cors(options.cors);
    const answer = (request: Request, context?: RequestContext) => cors.handle(request, () => this.serves(request.url), () => this.#answer(request, context));
    const metrics = (this.#metrics = options.metrics === false ? undefined : new InstanceMetrics(randomToken(6), options.now ?? Date.now));
    const identified = identifiedAnswers(answer, metrics);
    const logged = logRequests(options.logger, (request: Request, context?: RequestContext) => telemetry.request(request, () => identified(request, context)));
    // a request answered without waiting (the read path) costs one settled promise here, no turn of awaits
    this.fetch = (request, context) => {
      const response = logged(request, context);
      return isPending(response) ? response : Promise.resolve(response);
    };
    const ctx = serviceContext(options, telemetry, caches, { secureSessionOf: (token) => this.#secure.sessionOf(token), dispatch: async (inner) => this.#dispatch(inner) });
    this.ctx = ctx;
    this.#studio = options.studio ? new Studio(options.studio, { appKeys: options.appKeys, files: ctx.files }) : undefined;
    this.#secure = new SecureTransport(ctx, caches.secureSessions);
    const externalLogin = new ExternalLogin(ctx, { ...options.externalLogin, alias: this.#mount.alias, userClass: ctx.principals.userClass });
    this.#routes.add(serviceRoutes(ctx, externalLogin, options, metrics));
    const seeded = options.data ? importObjects(ctx.store, options.data, options.users?.passwordIterations) : Promise.resolve();
    // Provider entries live in the store, so they are checked once the seed data is in.
    this.ready = Promise.all([seeded.then(() => externalLogin.load()), ctx.serverKey.ready, ctx.runtimeModel.load()]).then(() => undefined);
    // a failure is logged once; requests get a 500 envelope
    this.ready.then(() => (this.#loaded = true), ctx.onError);
  }

  /** The answer to a request; without a promise where the route answers at once (the read path). Never throws. */
  #answer(request: Request, context: RequestContext = {}): MaybePromise<Response> {
    const failed = (error: unknown) => toResponse(noteAnswer(request, errorReply(toApiError(error, this.ctx.onError))), context.lightResponses);
    try {
      if (!this.#loaded) return this.#whenReady(request, context).catch(failed);
      const url = new URL(request.url);
      const path = this.#mount.relativePath(url.pathname);
      if (path === undefined) throw new ApiError('404', `no route ${clip(url.pathname)}`);
      if (this.#studio?.claims(path)) return this.#studio.answer(request, path).catch(failed);
      const apiRequest = toApiRequest(request, url, path, context, this.#trustProxy);
      const rawBody = request.body !== null && this.#routes.takesRawBody(apiRequest); // file uploads: the route streams it
      if (this.#secure.claims(request.headers)) return this.#secure.handle(apiRequest, async (inner) => this.#dispatch(inner), rawBody).catch(failed);
      const respond = (answer: Answer) => toResponse(answer, context.lightResponses);
      if (!request.body || rawBody) return andThen(this.#dispatch(apiRequest), respond);
      return readBodyText(request, this.ctx.maxBodyBytes).then((text) => {
        apiRequest.bodyText = text;
        return andThen(this.#dispatch(apiRequest), respond);
      }, failed);
    } catch (error) {
      return failed(error);
    }
  }

  /** A request that arrived before the service was ready: answered once it is (a `500` if it failed to start). */
  async #whenReady(request: Request, context: RequestContext): Promise<Response> {
    await this.ready.catch(() => {
      throw new ApiError('500', 'the service failed to start (configuration or seed data); see the server log');
    });
    return this.#answer(request, context);
  }

  /** Whether a route answers this URL's path (base path and alias included); see `Service.serves`. */
  serves(url: string | URL): boolean {
    const path = URL.canParse(url) ? this.#mount.relativePath(new URL(url).pathname) : undefined;
    return path !== undefined && (this.#routes.fits(path) || this.#studio?.claims(path) === true);
  }

  /**
   * Routes a request whose body has been read; errors become envelopes (so transports can wrap them).
   * Without a promise where the session and the route's answer are at hand. Never throws or rejects.
   */
  #dispatch(request: ApiRequest): MaybePromise<Answer> {
    let template: string | undefined;
    const answered = (answer: Answer) => {
      this.#metrics?.routed(request.raw, template, 'internalStatus' in answer ? answer.internalStatus : undefined, request.session);
      return this.#telemetry.routed(request.raw, template, noteAnswer(request.raw, answer));
    };
    const failed = (error: unknown) => answered(errorReply(toApiError(error, this.ctx.onError)));
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
      const answer =
        route.auth === 'none'
          ? route.handler(request)
          : andThen(authorize(this.ctx, request, route), (session) => {
              request.session = session;
              // a store that reads session positions (issue 37) records the session's writes; others answer at once
              return this.ctx.sessions.consistent(this.ctx.store, session, () => route.handler(request));
            });
      return isPending(answer) ? answer.then(answered, failed) : answered(answer);
    } catch (error) {
      return failed(error);
    }
  }
}
