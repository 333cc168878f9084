import { webauthn } from './accounts/passkeys.js';
import { cacheSizes } from './caches.js';
import { readBodyText } from './http/body.js';
import { Cors } from './http/cors.js';
import { errorReply, toApiError, toResponse, type Answer } from './http/envelope.js';
import { ApiError, clip } from './http/errors.js';
import { Mount } from './http/mount.js';
import { toApiRequest, urlParts, type ApiRequest, type RequestContext } from './http/request.js';
import { isPending, andThen, type MaybePromise } from './maybe.js';
import { RouteTable, type Matched, type Route } from './http/router.js';
import { compileRoute, type RouteRun } from './pipeline.js';
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
import { logRequests } from './http/request-log.js';
import { newExchange, noteAnswer, type Exchange } from './http/exchange.js';
import { randomToken } from './storage/ids.js';

/** Assembles the service from its options and dispatches requests to its routes. Hosts use `createService`. */
export class Core {
  readonly ctx: AssembledContext;
  readonly ready: Promise<void>;
  /** Answers a web request; never throws. Each answer is logged when the host passes a `logger`. */
  readonly fetch: (request: Request, context?: RequestContext) => Promise<Response>;
  /** `fetch`'s answer without its promise where the route answers at once (see `answerNow`). Never throws. */
  readonly answer: (request: Request, context?: RequestContext) => MaybePromise<Response>;
  readonly #routes: RouteTable<RouteRun>;
  readonly #mount: Mount;
  readonly #secure: SecureTransport;
  readonly #trustProxy: boolean;
  readonly #telemetry: Telemetry;
  readonly #studio: Studio | undefined;
  #loaded = false;
  constructor(options: ServiceOptions = {}) {
    const telemetry = (this.#telemetry = new Telemetry(options.telemetry !== false));
    const caches = cacheSizes(options.caches);
    this.#mount = new Mount(options.mount);
    this.#trustProxy = options.trustProxy ?? false;
    const cors = new Cors(options.cors);
    const answer = (request: Request, context: RequestContext | undefined, exchange: Exchange) => cors.handle(request, () => this.serves(request.url), () => this.#answer(request, context, exchange));
    const metrics = options.metrics === false ? undefined : new InstanceMetrics(randomToken(6), options.now ?? Date.now); // PROTOCOL.md 6.12
    const identified = identifiedAnswers(answer, metrics);
    const logged = logRequests(options.logger, options.now ?? Date.now, (request: Request, context: RequestContext | undefined, exchange: Exchange) => telemetry.request(request, exchange, () => identified(request, context, exchange)));
    this.answer = (request, context) => logged(request, context, newExchange());
    // a request answered without waiting (the read path) costs one settled promise here (a pending one is passed as it is)
    this.fetch = (request, context) => Promise.resolve(this.answer(request, context));
    const ctx = (this.ctx = serviceContext(options, telemetry, caches, metrics));
    this.#studio = options.studio ? new Studio(options.studio, { appKeys: options.appKeys, files: ctx.files }) : undefined;
    const secure = (this.#secure = new SecureTransport(ctx, caches.secureSessions));
    const externalLogin = new ExternalLogin(ctx, { ...options.externalLogin, alias: this.#mount.alias, userClass: ctx.principals.userClass });
    // each route's stages composed once, here; the batch and the events stream get the dispatch and the secure sessions handed to them
    this.#routes = new RouteTable((route) => compileRoute(route, ctx, secure));
    this.#routes.add(serviceRoutes(ctx, externalLogin, options, { dispatch: (inner) => this.#dispatch(inner), secure, metrics }));
    const seeded = options.data ? importObjects(ctx.store, options.data, options.users?.passwordIterations) : Promise.resolve();
    // Provider entries live in the store, so they are checked once the seed data is in; passkeys' optional package is loaded now, so a missing one stops the start
    this.ready = Promise.all([seeded.then(() => externalLogin.load()), ctx.serverKey.ready, ctx.runtimeModel.start(), options.passkeys && webauthn()]).then(() => undefined);
    this.ready.then(() => (this.#loaded = true), ctx.onError); // a failure is logged once; requests get a 500 envelope
  }

  /** The answer to a request; without a promise where the route answers at once (the read path). Never throws. */
  #answer(request: Request, context: RequestContext = {}, exchange: Exchange): MaybePromise<Response> {
    const respond = (answer: Answer) => {
      exchange.identified = exchange.requestId !== undefined && !(answer instanceof Response);
      return toResponse(answer, context.lightResponses, exchange.requestId);
    };
    const failed = (error: unknown) => respond(noteAnswer(exchange, errorReply(toApiError(error, (unexpected) => this.ctx.onError(unexpected, { requestId: exchange.requestId })))));
    try {
      if (context.refused) throw context.refused; // an adapter's refusal, answered like any (RequestContext.refused)
      if (!this.#loaded) return this.#whenReady(request, context, exchange).catch(failed);
      const { pathname, search } = urlParts(request.url);
      const path = this.#mount.relativePath(pathname);
      if (path === undefined) throw new ApiError('404', `no route ${clip(pathname)}`);
      if (this.#studio?.claims(path)) return this.#studio.answer(request, path).catch(failed);
      const apiRequest = toApiRequest(request, search, path, context, this.#trustProxy, exchange);
      // matched once: a 404 or 405 is answered by the dispatch, after the app key's check
      const matched = this.#match(apiRequest);
      const rawBody = request.body !== null && !(matched instanceof Error) && matched.route.rawBody === true; // file uploads: the route streams it
      if (this.#secure.claims(request.headers)) return this.#secure.handle(apiRequest, async (inner) => this.#run(inner, matched), rawBody).catch(failed);
      if (!request.body || rawBody) return andThen(this.#run(apiRequest, matched), respond);
      return readBodyText(request, this.ctx.maxBodyBytes).then((text) => {
        apiRequest.bodyText = text;
        return andThen(this.#run(apiRequest, matched), respond);
      }, failed);
    } catch (error) {
      return failed(error);
    }
  }

  /** A request that arrived before the service was ready: answered once it is (a `500` if it failed to start). */
  async #whenReady(request: Request, context: RequestContext, exchange: Exchange): Promise<Response> {
    await this.ready.catch(() => {
      throw new ApiError('500', 'the service failed to start (configuration or seed data); see the server log');
    });
    return this.#answer(request, context, exchange);
  }

  /** The route table, in table order: every route the service answers (the OpenAPI document's, the client's checks). */
  get routes(): Route[] {
    return this.#routes.routes;
  }

  /** Whether a route answers this URL's path (base path and alias included); see `Service.serves`. */
  serves(url: string | URL): boolean {
    const path = URL.canParse(url) ? this.#mount.relativePath(new URL(url).pathname) : undefined;
    return path !== undefined && (this.#routes.fits(path) || this.#studio?.claims(path) === true);
  }

  /** The route of a request, or the `404`/`405` to answer. */
  #match(request: ApiRequest): Matched<RouteRun> | ApiError {
    try {
      return this.#routes.match(request.method, request.path);
    } catch (error) {
      return error as ApiError;
    }
  }

  /** Routes a request whose body has been read (a `/v1/multi` item); never throws or rejects. */
  #dispatch(request: ApiRequest): MaybePromise<Answer> {
    return this.#run(request, this.#match(request));
  }

  /**
   * Runs a matched request through its route's stages; errors become envelopes (so transports can wrap
   * them). Without a promise where the session and the route's answer are at hand. Never throws or rejects.
   */
  #run(request: ApiRequest, matched: Matched<RouteRun> | ApiError): MaybePromise<Answer> {
    const template = matched instanceof Error ? undefined : matched.route.path;
    const answered = (answer: Answer) => this.#telemetry.routed(template, noteAnswer(request.exchange, answer, template, request.session));
    const failed = (error: unknown) => answered(errorReply(toApiError(error, (unexpected) => this.ctx.onError(unexpected, { requestId: request.exchange?.requestId }))));
    try {
      if (matched instanceof Error) {
        this.ctx.checkAppKey(request.headers); // an unknown route without app key is answered 100, not 404
        throw matched;
      }
      request.params = matched.params;
      const answer = matched.prepared(request);
      return isPending(answer) ? answer.then(answered, failed) : answered(answer);
    } catch (error) {
      return failed(error);
    }
  }
}
