/**
 * The instance's own metrics and recent requests (PROTOCOL.md 6.12), kept in memory: per 10 seconds
 * the requests, 5xx answers, a latency histogram and the sessions seen; per route and minute the same
 * counts; and the last 1,000 requests. Nothing is written to a store, and nothing of a request is kept
 * but its method, route template, status, code, duration, user name and request id: never a
 * credential, a body, query text or a header value (a session is counted by a 32-bit hash of its id).
 */
import type { Exchange } from '../http/exchange.js';

/** Seconds per point of the series, and the points kept (an hour). */
const SLOT_SECONDS = 10;
const SLOTS = 360;
/** Route counts are kept per minute, for an hour. */
const ROUTE_SLOTS = 60;
/** Latency buckets: bucket i holds durations below 2^(i/4) * 0.05 ms (the last one everything above). */
const BUCKETS = 72;
const BUCKET_BASE_MS = 0.05;
/** Recent requests kept. */
export const RECENT_REQUESTS = 1000;
/** Distinct routes counted; requests beyond it count under no route. */
const MAX_ROUTES = 500;

/** One request as the recent-requests list answers it (PROTOCOL.md 6.12). */
export interface RecentRequest {
  Time: number;
  Method: string;
  Route: string | null;
  Status: number;
  Code: string | null;
  DurationMs: number;
  User: string | null;
  RequestId: string;
}

class Slot {
  start = -1;
  requests = 0;
  errors = 0;
  readonly latency = new Uint32Array(BUCKETS);
  sessions = new Set<number>();

  reset(start: number): void {
    this.start = start;
    this.requests = 0;
    this.errors = 0;
    this.latency.fill(0);
    this.sessions = new Set();
  }
}

class RouteSlots {
  readonly starts = new Float64Array(ROUTE_SLOTS).fill(-1);
  readonly counts = new Uint32Array(ROUTE_SLOTS);
  readonly errors = new Uint32Array(ROUTE_SLOTS);
  readonly latency = new Uint32Array(ROUTE_SLOTS * BUCKETS);

  constructor(
    readonly method: string,
    readonly route: string,
  ) {}

  add(minute: number, bucket: number, error: boolean): void {
    const i = minute % ROUTE_SLOTS;
    if (this.starts[i] !== minute) {
      this.starts[i] = minute;
      this.counts[i] = 0;
      this.errors[i] = 0;
      this.latency.fill(0, i * BUCKETS, (i + 1) * BUCKETS);
    }
    this.counts[i]!++;
    if (error) this.errors[i]!++;
    this.latency[i * BUCKETS + bucket]!++;
  }
}

function bucketOf(ms: number): number {
  if (ms <= BUCKET_BASE_MS) return 0;
  return Math.min(BUCKETS - 1, Math.ceil(4 * Math.log2(ms / BUCKET_BASE_MS)));
}

/** The upper bound of a bucket, in ms, rounded to what a chart shows. */
function bucketMs(bucket: number): number {
  return Math.round(BUCKET_BASE_MS * 2 ** (bucket / 4) * 100) / 100;
}

/** The duration below which `share` of the counted requests lie (null: none counted). */
function quantile(histogram: ArrayLike<number>, total: number, share: number): number | null {
  if (total === 0) return null;
  const rank = Math.ceil(total * share);
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i]!;
    if (seen >= rank) return bucketMs(i);
  }
  return bucketMs(histogram.length - 1);
}

/** FNV-1a of a session id: sessions are told apart without keeping their credentials. */
function sessionHash(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

export interface MetricsAnswer {
  Instance: string;
  Interval: number;
  Series: { Requests: number[]; Errors: number[]; P50Ms: Array<number | null>; P99Ms: Array<number | null>; Sessions: number[] };
  Routes: Array<{ Route: string; Method: string; Count: number; Errors: number; P50Ms: number | null; P99Ms: number | null }>;
}

export class InstanceMetrics {
  readonly #slots = Array.from({ length: SLOTS }, () => new Slot());
  /** Per route template, per method (no key string made per request). */
  readonly #routes = new Map<string, Map<string, RouteSlots>>();
  #routeCount = 0;
  readonly #recent: RecentRequest[] = [];
  #next = 0;

  constructor(
    readonly instance: string,
    private readonly now: () => number,
  ) {}

  /** Counts the answer to `request` (its status, duration, route and session as `exchange` has them). */
  record(request: Request, status: number, exchange: Exchange): void {
    const ms = performance.now() - exchange.started;
    const method = request.method.length > 10 ? request.method.slice(0, 10) : request.method;
    const time = this.now();
    const second = Math.floor(time / 1000);
    const start = second - (second % SLOT_SECONDS);
    const slot = this.#slots[(start / SLOT_SECONDS) % SLOTS]!;
    if (slot.start !== start) slot.reset(start);
    const error = status >= 500;
    const bucket = bucketOf(ms);
    slot.requests++;
    if (error) slot.errors++;
    slot.latency[bucket]!++;
    const { route, session } = exchange;
    if (session !== undefined) slot.sessions.add(sessionHash(session.id));
    if (route !== undefined) {
      let methods = this.#routes.get(route);
      let slots = methods?.get(method);
      if (!slots && this.#routeCount < MAX_ROUTES) {
        if (!methods) this.#routes.set(route, (methods = new Map()));
        methods.set(method, (slots = new RouteSlots(method, route)));
        this.#routeCount++;
      }
      slots?.add(Math.floor(second / 60), bucket, error);
    }
    const entry: RecentRequest = { Time: time, Method: method, Route: route ?? null, Status: status, Code: exchange.internalStatus ?? null, DurationMs: Math.round(ms * 100) / 100, User: session?.user ?? null, RequestId: exchange.requestId ?? '' };
    if (this.#recent.length < RECENT_REQUESTS) this.#recent.push(entry);
    else this.#recent[this.#next] = entry;
    this.#next = (this.#next + 1) % RECENT_REQUESTS;
  }

  /** The last `count` requests, newest first, from `offset`; and how many are kept. */
  recent(offset: number, count: number): { entries: RecentRequest[]; total: number } {
    const total = this.#recent.length;
    const entries: RecentRequest[] = [];
    for (let i = offset; i < Math.min(total, offset + count); i++) entries.push(this.#recent[(this.#next - 1 - i + 2 * RECENT_REQUESTS) % RECENT_REQUESTS % total]!);
    return { entries, total };
  }

  /** The series and route table of the last `minutes` (1 to 60), oldest point first, the last one in progress. */
  answer(minutes: number): MetricsAnswer {
    const interval = minutes <= 15 ? SLOT_SECONDS : 60;
    const per = interval / SLOT_SECONDS;
    const points = (minutes * 60) / interval;
    const second = Math.floor(this.now() / 1000);
    const current = second - (second % interval);
    const series: MetricsAnswer['Series'] = { Requests: [], Errors: [], P50Ms: [], P99Ms: [], Sessions: [] };
    const latency = new Uint32Array(BUCKETS);
    for (let p = points - 1; p >= 0; p--) {
      const pointStart = current - p * interval;
      let requests = 0;
      let errors = 0;
      latency.fill(0);
      const sessions = new Set<number>();
      for (let k = 0; k < per; k++) {
        const start = pointStart + k * SLOT_SECONDS;
        const slot = this.#slots[(start / SLOT_SECONDS) % SLOTS]!;
        if (slot.start !== start) continue;
        requests += slot.requests;
        errors += slot.errors;
        for (let b = 0; b < BUCKETS; b++) latency[b]! += slot.latency[b]!;
        for (const session of slot.sessions) sessions.add(session);
      }
      series.Requests.push(requests);
      series.Errors.push(errors);
      series.P50Ms.push(quantile(latency, requests, 0.5));
      series.P99Ms.push(quantile(latency, requests, 0.99));
      series.Sessions.push(sessions.size);
    }
    return { Instance: this.instance, Interval: interval, Series: series, Routes: this.#routeTable(Math.floor(second / 60), minutes) };
  }

  #routeTable(minute: number, minutes: number): MetricsAnswer['Routes'] {
    const rows: MetricsAnswer['Routes'] = [];
    const latency = new Uint32Array(BUCKETS);
    for (const slots of [...this.#routes.values()].flatMap((methods) => [...methods.values()])) {
      let count = 0;
      let errors = 0;
      latency.fill(0);
      for (let m = minute - minutes + 1; m <= minute; m++) {
        const i = m % ROUTE_SLOTS;
        if (slots.starts[i] !== m) continue;
        count += slots.counts[i]!;
        errors += slots.errors[i]!;
        for (let b = 0; b < BUCKETS; b++) latency[b]! += slots.latency[i * BUCKETS + b]!;
      }
      if (count > 0) rows.push({ Route: slots.route, Method: slots.method, Count: count, Errors: errors, P50Ms: quantile(latency, count, 0.5), P99Ms: quantile(latency, count, 0.99) });
    }
    return rows.sort((a, b) => b.Count - a.Count || (a.Route < b.Route ? -1 : 1));
  }
}
