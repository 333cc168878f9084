/**
 * Traces and metrics through `@opentelemetry/api` only: runtime-neutral, and without an SDK nothing is
 * wrapped or recorded, so the core costs nothing a host does not ask for. A host that registers an SDK
 * before `createService` (the metrics API hands out no-op instruments until one is registered, so the
 * service looks once, when it is made) sees:
 * - a span per request (`GET /v1/object/:id`), with the store's calls as its children, continuing the
 *   client's trace: its W3C `traceparent` and `tracestate` are read through the API's propagation (the
 *   propagator the host registered), so on every runtime the server span is a child of the client's;
 * - `http.server.request.duration` (s) by `http.request.method`, `http.route` (the route template,
 *   never the path: ids would make every series unique), `http.response.status_code`, `url.scheme`,
 *   `server.address`, `error.type` (a 5xx: the status code; a throw: the error's name) and
 *   `odbrest.internal_status`; `http.server.active_requests`;
 * - `db.client.operation.duration` (s) by `db.operation.name` and `db.system.name` (the store's
 *   `systemName`: `postgresql`, `redis`, `odbrest.memory`, `odbrest.file`; a store without one
 *   `odbrest.objects` or `odbrest.kv`);
 * - `odbrest.login.attempts` by `odbrest.login.result` (the internalStatus: `0`, `302`, `303`, ...),
 *   `odbrest.login.refusals` (the failed-login limit's `303`s), `odbrest.session.active`;
 * - `odbrest.mail.messages` by `odbrest.mail.outcome`: `sent`, `failed` (given up after every try, or
 *   a macro's mail refused), `retried` (a try that failed and is repeated).
 * Names follow the OpenTelemetry semantic conventions for HTTP servers and database clients.
 */
import { context, createNoopMeter, metrics, propagation, ProxyTracer, SpanKind, SpanStatusCode, trace, type Attributes, type Histogram, type Span, type TextMapGetter, type UpDownCounter, type Counter, type Tracer } from '@opentelemetry/api';
import type { Answer } from './http/envelope.js';
import type { Exchange } from './http/exchange.js';
import type { MailOutcome } from './mail/outbox.js';
import type { MaybePromise } from './maybe.js';
import { PACKAGE_VERSION } from './version.js';

const SCOPE = 'odbrest';
/** Bucket bounds in seconds, as the HTTP semantic conventions advise. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** Routes whose answer is a login's result (counted by `odbrest.login.attempts`). */
const LOGIN_ROUTES = new Set(['/v1/login', '/v2/login', '/v2/login/secure', '/v1/auth/df', '/v1/extLogin', '/v1/passkey/login']);

export class Telemetry {
  readonly tracer: Tracer;
  readonly #requestDuration: Histogram;
  readonly #activeRequests: UpDownCounter;
  readonly #storeDuration: Histogram;
  readonly #logins: Counter;
  readonly #loginRefusals: Counter;
  readonly #activeSessions: UpDownCounter;
  readonly #mail: Counter;

  /**
   * Whether anything is recorded: not with `telemetry: false`, and not when no SDK was registered
   * before the service was made (then the stores stay unwrapped and a request costs one test).
   */
  readonly enabled: boolean;

  constructor(wanted = true) {
    this.tracer = trace.getTracer(SCOPE, PACKAGE_VERSION);
    const meter = metrics.getMeter(SCOPE, PACKAGE_VERSION);
    // without a registered provider the API hands out its proxy tracer and no-op meter
    const sdk = !(this.tracer instanceof ProxyTracer) || !(meter instanceof createNoopMeter().constructor);
    this.enabled = wanted && sdk;
    this.#requestDuration = meter.createHistogram('http.server.request.duration', {
      unit: 's',
      description: 'Duration of HTTP server requests',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.#activeRequests = meter.createUpDownCounter('http.server.active_requests', { unit: '{request}', description: 'Requests being answered' });
    this.#storeDuration = meter.createHistogram('db.client.operation.duration', {
      unit: 's',
      description: 'Duration of store operations',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.#logins = meter.createCounter('odbrest.login.attempts', { unit: '{login}', description: 'Login attempts by result (internalStatus)' });
    this.#loginRefusals = meter.createCounter('odbrest.login.refusals', { unit: '{login}', description: 'Logins refused by the failed-login limit (303)' });
    this.#activeSessions = meter.createUpDownCounter('odbrest.session.active', { unit: '{session}', description: 'Sessions started on this instance and not yet ended or found expired' });
    this.#mail = meter.createCounter('odbrest.mail.messages', { unit: '{message}', description: 'Mail by outcome: sent, failed (given up), retried (a failed try repeated)' });
  }

  /** Runs `handle` as one request: a server span (made current, so store calls nest under it), its duration and status recorded. */
  request(request: Request, exchange: Exchange, handle: () => MaybePromise<Response>): MaybePromise<Response> {
    if (!this.enabled) return handle();
    const url = new URL(request.url);
    const base: Attributes = { 'http.request.method': request.method, 'url.scheme': url.protocol.slice(0, -1), 'server.address': url.hostname };
    this.#activeRequests.add(1, base);
    // the client's span, if its traceparent says one (no propagator registered: the active context as it is)
    const parent = propagation.extract(context.active(), request.headers, HEADERS);
    return this.tracer.startActiveSpan(request.method, { kind: SpanKind.SERVER, attributes: base }, parent, async (span) => {
      const { traceId, spanId } = span.spanContext();
      exchange.traceId = traceId;
      exchange.spanId = spanId;
      let status = 500;
      let errorType: string | undefined;
      try {
        const response = await handle();
        status = response.status;
        return response;
      } catch (error) {
        errorType = error instanceof Error ? error.name : 'unknown';
        throw error;
      } finally {
        this.#endRequest(request, exchange, span, base, status, errorType);
      }
    });
  }

  #endRequest(request: Request, exchange: Exchange, span: Span, base: Attributes, status: number, thrown: string | undefined): void {
    const attributes: Attributes = { ...base, 'http.response.status_code': status };
    // the HTTP conventions: a server's 5xx is a failure, named by its status code
    const errorType = thrown ?? (status >= 500 ? String(status) : undefined);
    if (errorType !== undefined) attributes['error.type'] = errorType;
    if (exchange.route !== undefined) {
      attributes['http.route'] = exchange.route;
      if (exchange.internalStatus !== undefined) attributes['odbrest.internal_status'] = exchange.internalStatus;
      span.updateName(`${request.method} ${exchange.route}`);
    }
    span.setAttributes(attributes);
    if (errorType !== undefined) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    this.#activeRequests.add(-1, base);
    this.#requestDuration.record((performance.now() - exchange.started) / 1000, attributes);
  }

  /** Counts a login's result, when `route` is a login route; answers `answer`. */
  routed<A extends Answer>(route: string | undefined, answer: A): A {
    if (!this.enabled || route === undefined || !LOGIN_ROUTES.has(route)) return answer;
    const internalStatus = 'internalStatus' in answer ? answer.internalStatus : undefined;
    if (internalStatus !== undefined) {
      this.#logins.add(1, { 'odbrest.login.result': internalStatus, 'http.route': route });
      if (internalStatus === '303') this.#loginRefusals.add(1, { 'http.route': route });
    }
    return answer;
  }

  /** Counts a mail's outcome (the outbox). */
  mail(outcome: MailOutcome): void {
    if (this.enabled) this.#mail.add(1, { 'odbrest.mail.outcome': outcome });
  }

  /** A session started (+1) or ended (-1) on this instance. */
  session(change: 1 | -1): void {
    if (this.enabled) this.#activeSessions.add(change);
  }

  /**
   * `store` with each of `operations` timed and traced (a child span of the request's), named by the
   * store's `systemName` (else `fallback`) as `db.system.name`. Every other
   * member (a store's own extras) passes through untouched, but for the operations' variants without
   * a promise (`getNow`), which are hidden.
   */
  instrument<T extends { systemName?: string }>(store: T, fallback: string, operations: readonly string[]): T {
    if (!this.enabled) return store;
    const system = store.systemName ?? fallback;
    const wrapped = new Map<PropertyKey, unknown>();
    for (const name of operations) {
      const operation = (store as Record<string, unknown>)[name];
      if (typeof operation !== 'function') continue;
      wrapped.set(name, (...args: unknown[]) => this.#timed(system, name, () => operation.apply(store, args) as Promise<unknown>));
      // an operation's variant without a promise (`getNow`) is hidden, so every call is timed
      wrapped.set(`${name}Now`, undefined);
    }
    return new Proxy(store, {
      get: (target, property) => {
        if (wrapped.has(property)) return wrapped.get(property);
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  #timed(system: string, operation: string, call: () => Promise<unknown>): Promise<unknown> {
    const started = performance.now();
    const attributes: Attributes = { 'db.system.name': system, 'db.operation.name': operation };
    const span = this.tracer.startSpan(`${operation} ${system}`, { kind: SpanKind.CLIENT, attributes });
    const done = (failed: boolean) => {
      if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      this.#storeDuration.record((performance.now() - started) / 1000, failed ? { ...attributes, 'error.type': 'store_error' } : attributes);
    };
    let pending: Promise<unknown>;
    try {
      pending = call();
    } catch (error) {
      done(true);
      throw error;
    }
    return pending.then(
      (value) => (done(false), value),
      (error: unknown) => {
        done(true);
        throw error;
      },
    );
  }
}

/** Reads a request's headers for the propagator (`traceparent`, `tracestate`). */
const HEADERS: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/** The operations of `ObjectStore` and `KeyValueStore` that are timed (see `storage/types.ts`). */
export const OBJECT_STORE_OPERATIONS = ['get', 'getMany', 'find', 'count', 'put', 'delete'] as const;
export const KV_OPERATIONS = ['get', 'set', 'compareAndSet', 'take', 'delete', 'increment', 'ttl', 'expire', 'getAndExpire', 'lineUp', 'leaveLine'] as const;
