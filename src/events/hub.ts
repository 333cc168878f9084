/**
 * The realtime hub of one instance (PROTOCOL.md 8): it publishes every write on the bus, takes every
 * instance's writes off it in order, numbers them, keeps the last ones for `Last-Event-ID`, and hands
 * each to the streams whose subscriptions it concerns, as that stream's session may see it now: the
 * read path's access check (`served`, the session's `Guard`) and serializer, never a second one.
 */
import { base64 } from '@scure/base';
import type { Session } from '../auth/sessions.js';
import type { AuthContext } from '../auth/context.js';
import type { ObjectsContext } from '../objects/context.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import type { Guard } from '../objects/access.js';
import { served } from '../objects/read/index.js';
import type { SecureSessionState } from '../secure/replay.js';
import { messageKeys } from '../secure/messages.js';
import { fieldValue, isScalar } from '../storage/filter.js';
import { randomToken } from '../storage/ids.js';
import { kvKeys } from '../storage/keys.js';
import type { StoredObject } from '../storage/types.js';
import { InProcessBus } from './bus.js';
import { valueKey } from './subscriptions.js';
import { EventSealer, EventStream } from './stream.js';
import type { BusMessage, ChangeEvents, ChangeMessage, EventBus, EventOptions, GapMessage, Subscription, WrittenChange } from './types.js';

type EventType = 'create' | 'update' | 'delete' | 'enter' | 'leave';

interface Retained {
  seq: number;
  at: number;
  message: ChangeMessage;
}

const ENDED = { internalStatus: '201', statusMessage: 'session expired or logged out' };

/** One session's view during one change: its guard and what it was asked, each asked once for all its streams. */
class SessionView {
  readonly guard: Guard;
  #after?: Promise<boolean>;
  #before?: Promise<boolean>;
  #json?: Promise<string>;

  constructor(
    private readonly ctx: ObjectsContext & Pick<AuthContext, 'symmetricCrypto'>,
    request: ApiRequest,
    session: Session,
    private readonly message: ChangeMessage,
  ) {
    this.guard = ctx.access.guard(session, () => ctx.macroContext(request, session));
  }

  readableAfter(): Promise<boolean> {
    const object = this.message.object;
    return (this.#after ??= object ? Promise.resolve(served(this.ctx, this.guard, object)).then(Boolean) : Promise.resolve(false));
  }

  readableBefore(): Promise<boolean> {
    const before = this.message.before;
    return (this.#before ??= before ? Promise.resolve(served(this.ctx, this.guard, before)).then(Boolean) : Promise.resolve(false));
  }

  /** The event's data: `GET /v1/object`'s answer for this session, or metadata only (`delete`, `leave`). */
  data(type: EventType): Promise<string> | string {
    const { className, id } = this.message;
    if (type === 'delete' || type === 'leave') {
      const object = this.message.object ?? this.message.before;
      const meta = object ? this.ctx.serializer.metadata(object) : { '~ClassName': className, '~ObjectID': id };
      return JSON.stringify({ className, '~ObjectID': id, object: meta });
    }
    return (this.#json ??= this.ctx.serializer.object(this.message.object!, this.guard).then((object) => JSON.stringify({ className, '~ObjectID': id, object })));
  }
}

export class EventHub implements ChangeEvents {
  readonly #ctx: ObjectsContext & Pick<AuthContext, 'symmetricCrypto'>;
  readonly #bus: EventBus;
  readonly #keepAliveMs: number;
  readonly #maxPerSession: number;
  readonly #maxStreams: number;
  readonly #retainEvents: number;
  readonly #retainMs: number;
  readonly #maxPending: number;
  /** Names this instance's event ids: an id of another instance or an earlier run is beyond the window. */
  readonly #tag = randomToken(6).replace(/[-_]/g, 'x');
  #seq = 0;
  /** Retained events from `#logStart` on; the slots before it are emptied (their messages hold object copies). */
  #log: (Retained | undefined)[] = [];
  /**
   * Whether events are retained: from the first stream opened here on. An event id names this hub
   * (`#tag`) and only its streams get one, so before that no client can resume and the log would
   * only hold copies of every written object (a host without streams keeps none).
   */
  #retaining = false;
  #logStart = 0;
  readonly #streams = new Set<EventStream>();
  /**
   * Streams opened whose start (the replay of what they missed) has not run yet: messages the queue
   * handles before it are in the log, so they reach such a stream through the replay, in order, not
   * live ahead of it.
   */
  readonly #starting = new Set<EventStream>();
  readonly #bySession = new Map<string, Set<EventStream>>();
  readonly #byClass = new Map<string, ClassIndex>();
  readonly #byObject = new Map<string, Set<EventStream>>();
  /** Messages are handled one after the other, so every stream sees them in the bus's order. */
  #queue: Promise<void> = Promise.resolve();
  #ticker: ReturnType<typeof setInterval> | undefined;
  /** A round of session checks is out (a slow store skips the next ticks rather than piling up reads). */
  #checkingSessions = false;
  #lastKeepAlive = 0;
  readonly #unsubscribe: () => void;
  /** The request hooks see while an event is prepared (see `open`). */
  readonly #eventsRequest: ApiRequest;

  constructor(ctx: ObjectsContext & Pick<AuthContext, 'symmetricCrypto'>, options: EventOptions = {}) {
    this.#ctx = ctx;
    this.#bus = options.bus ?? new InProcessBus();
    this.#keepAliveMs = positive(options.keepAliveMs ?? 25_000, 'events.keepAliveMs');
    this.#maxPerSession = positive(options.maxStreamsPerSession ?? 5, 'events.maxStreamsPerSession');
    this.#maxStreams = positive(options.maxStreams ?? 10_000, 'events.maxStreams');
    this.#retainEvents = positive(options.retainEvents ?? 10_000, 'events.retainEvents');
    this.#retainMs = positive(options.retainMs ?? 5 * 60_000, 'events.retainMs');
    this.#maxPending = positive(options.maxPendingBytes ?? 1024 * 1024, 'events.maxPendingBytes');
    const raw = new Request('http://odbrest/v1/events');
    this.#eventsRequest = { method: 'GET', path: '/v1/events', target: '/v1/events', searchParams: new URLSearchParams(), headers: raw.headers, raw, clientAddress: undefined, bodyText: '', secure: false, params: {} };
    this.#unsubscribe = this.#bus.subscribe((message) => this.#enqueue(() => this.#receive(message)));
    ctx.sessions.onEnd((sessionId) => this.#publish({ kind: 'end', sessionId }));
  }

  /** Publishes a write that happened (the write path's `afterWrite` awaits it before the write is answered). */
  publish(change: WrittenChange): Promise<void> {
    const id = (change.object ?? change.before)?.id;
    if (id === undefined) return Promise.resolve();
    return this.#publish({ kind: 'change', action: change.action, className: change.className, id, before: change.before, object: change.object });
  }

  #publish(message: BusMessage): Promise<void> {
    return this.#bus.publish(message).catch((error: unknown) => {
      this.#ctx.onError(error);
      // the other instances' hubs may never hear of this write; this one's streams at least re-read
      if (message.kind === 'change') this.#enqueue(() => this.#gap());
    });
  }

  async close(): Promise<void> {
    this.#unsubscribe();
    for (const stream of [...this.#streams]) stream.close(true);
    await this.#bus.close?.();
  }

  /** Streams open on this instance. */
  get size(): number {
    return this.#streams.size;
  }

  /**
   * Opens a stream for `session`: `429` beyond the streams of one session, `503` beyond the
   * instance's. With `lastEventId` it first sends what was missed, or `reset` beyond the window.
   */
  async open(request: ApiRequest, session: Session, subscriptions: Subscription[], lastEventId: string | undefined): Promise<Response> {
    const own = this.#bySession.get(session.id);
    if ((own?.size ?? 0) >= this.#maxPerSession) {
      throw new ApiError('429', `this session has ${this.#maxPerSession} event streams open already; close one first`, { headers: { 'retry-after': '5' } });
    }
    if (this.#streams.size >= this.#maxStreams) throw new ApiError('503', 'this instance serves as many event streams as it may; retry later', { headers: { 'retry-after': '5' } });
    const sealer = session.kind === 'secure' ? this.#sealer(session) : undefined;
    // Hooks asked about an event (`authorize`, serialization) see a request for this path without
    // its headers: holding each stream's whole request doubled the memory of an idle stream.
    void request;
    const stream = new EventStream({ session, request: this.#eventsRequest, subscriptions, maxPendingBytes: this.#maxPending, sealer, onClose: (closed) => this.#remove(closed) });
    this.#add(stream);
    this.#starting.add(stream);
    this.#retaining = true;
    this.#enqueue(() => this.#start(stream, lastEventId));
    return new Response(stream.body, {
      status: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' },
    });
  }

  #sealer(session: Session): EventSealer {
    const keys = messageKeys(base64.decode((session.extra as SecureSessionState).key), this.#ctx.symmetricCrypto);
    const lifetime = Math.max(1, session.expiresAt - this.#ctx.now());
    return new EventSealer(keys, () => this.#ctx.kv.increment(kvKeys.eventCounters(session.id), lifetime));
  }

  /** Runs in the queue: replays what `lastEventId` missed (or says `reset`), then a first comment. */
  async #start(stream: EventStream, lastEventId: string | undefined): Promise<void> {
    this.#starting.delete(stream);
    stream.comment('odbrest events');
    if (lastEventId === undefined) return;
    const seq = this.#seqOf(lastEventId);
    const oldest = this.#log[this.#logStart]?.seq ?? this.#seq + 1;
    if (seq === undefined || seq < oldest - 1 || seq > this.#seq) {
      await stream.event('reset', this.#id(this.#seq), '{}');
      return;
    }
    for (let i = this.#logStart; i < this.#log.length; i++) {
      const entry = this.#log[i]!;
      if (entry.seq > seq) await this.#deliver([stream], entry.message, entry.seq);
    }
  }

  #id(seq: number): string {
    return `${this.#tag}-${seq}`;
  }

  #seqOf(id: string): number | undefined {
    const dash = id.lastIndexOf('-');
    if (dash < 0 || id.slice(0, dash) !== this.#tag || !/^\d{1,15}$/.test(id.slice(dash + 1))) return undefined;
    return Number(id.slice(dash + 1));
  }

  #enqueue(task: () => Promise<void>): void {
    this.#queue = this.#queue.then(task).catch((error: unknown) => this.#ctx.onError(error));
  }

  async #receive(message: BusMessage | GapMessage): Promise<void> {
    if (message.kind === 'gap') return this.#gap();
    if (message.kind === 'model') return; // the model's own listener (objects/model/runtime.ts) reads it
    if (message.kind === 'end') {
      for (const stream of [...(this.#bySession.get(message.sessionId) ?? [])]) await stream.end(ENDED);
      return;
    }
    const change = message.partial ? await this.#complete(message) : message;
    const seq = ++this.#seq;
    const now = this.#ctx.now();
    if (this.#retaining) {
      this.#log.push({ seq, at: now, message: change });
      this.#trim(now);
    }
    const streams = this.#candidates(change);
    for (const stream of this.#byObject.get(change.id) ?? []) streams.add(stream);
    if (streams.size > 0) await this.#deliver(streams, change, seq);
  }

  /**
   * Messages may have been lost (the bus's connection was down): every stream gets `reset`, and the
   * retained events are dropped, so a client resuming from before the gap gets `reset` too.
   */
  async #gap(): Promise<void> {
    const seq = ++this.#seq;
    for (let i = this.#logStart; i < this.#log.length; i++) this.#log[i] = undefined;
    this.#logStart = this.#log.length;
    await Promise.all([...this.#streams].map((stream) => stream.event('reset', this.#id(seq), '{}')));
  }

  /** The streams of the change's class its filters may concern (through their equality index), and those of its object. */
  #candidates(change: ChangeMessage): Set<EventStream> {
    const index = this.#byClass.get(change.className);
    const streams = new Set<EventStream>(index?.all);
    for (const [field, byValue] of index?.byField ?? []) {
      for (const object of [change.object, change.before]) {
        const value = object === undefined ? undefined : fieldValue(object.fields, field);
        if (value === undefined || !isScalar(value)) continue;
        for (const stream of byValue.get(valueKey(value)) ?? []) streams.add(stream);
      }
    }
    return streams;
  }

  /** A message the bus carried by id only: the object as the store holds it now (no `before`). */
  async #complete(message: ChangeMessage): Promise<ChangeMessage> {
    const object = message.action === 'delete' ? undefined : await this.#ctx.store.get(message.id);
    return object ? { ...message, object } : { ...message, action: 'delete', object: undefined };
  }

  #trim(now: number): void {
    while (this.#logStart < this.#log.length && (this.#log.length - this.#logStart > this.#retainEvents || this.#log[this.#logStart]!.at < now - this.#retainMs)) {
      this.#log[this.#logStart++] = undefined;
    }
    if (this.#logStart > 1024 && this.#logStart * 2 > this.#log.length) {
      this.#log = this.#log.slice(this.#logStart);
      this.#logStart = 0;
    }
  }

  async #deliver(streams: Iterable<EventStream>, message: ChangeMessage, seq: number): Promise<void> {
    const views = new Map<string, SessionView>();
    const id = this.#id(seq);
    const sends: Promise<void>[] = [];
    for (const stream of streams) {
      // the filters first, synchronously: most streams of a class are not concerned by a given write
      if (stream.closed || this.#starting.has(stream) || !stream.subscriptions.some((subscription) => concerns(subscription, message.object) || concerns(subscription, message.before))) continue;
      let view = views.get(stream.session.id);
      if (!view) views.set(stream.session.id, (view = new SessionView(this.#ctx, stream.request, stream.session, message)));
      sends.push(this.#deliverOne(stream, view, message, id));
    }
    await Promise.all(sends);
  }

  async #deliverOne(stream: EventStream, view: SessionView, message: ChangeMessage, id: string): Promise<void> {
    let type: EventType | undefined;
    for (const subscription of stream.subscriptions) {
      const found = await eventOf(subscription, view, message);
      if (found && found !== 'leave') {
        type = found;
        break;
      }
      type ??= found;
    }
    if (type) await stream.event(type, id, await view.data(type));
  }

  #add(stream: EventStream): void {
    this.#streams.add(stream);
    add(this.#bySession, stream.session.id, stream);
    for (const subscription of stream.subscriptions) {
      if (subscription.objectId !== undefined) add(this.#byObject, subscription.objectId, stream);
      else this.#classIndex(subscription.className).add(subscription, stream);
    }
    this.#ticker ??= this.#startTicker();
  }

  #classIndex(className: string): ClassIndex {
    let index = this.#byClass.get(className);
    if (!index) this.#byClass.set(className, (index = new ClassIndex()));
    return index;
  }

  #remove(stream: EventStream): void {
    this.#streams.delete(stream);
    this.#starting.delete(stream);
    remove(this.#bySession, stream.session.id, stream);
    for (const subscription of stream.subscriptions) {
      if (subscription.objectId !== undefined) remove(this.#byObject, subscription.objectId, stream);
      else if (this.#byClass.get(subscription.className)?.remove(subscription, stream)) this.#byClass.delete(subscription.className);
    }
    if (this.#streams.size === 0 && this.#ticker !== undefined) {
      clearInterval(this.#ticker);
      this.#ticker = undefined;
    }
  }

  /**
   * Once a second: streams whose session reached its absolute end get `end`, and so do those whose
   * session's record is gone from the store though no message told (expired or deleted in Redis, ended
   * by a process without the bus): one lifetime read per session with streams, not per stream, and no
   * new round while one is still out. Every `keepAliveMs`: a comment line on each stream, and each
   * session with a stream is renewed (an open stream is use).
   */
  #startTicker(): ReturnType<typeof setInterval> {
    this.#lastKeepAlive = this.#ctx.now();
    const ticker = setInterval(() => this.#tick(), Math.min(1000, this.#keepAliveMs));
    (ticker as { unref?: () => void }).unref?.();
    return ticker;
  }

  #tick(): void {
    const now = this.#ctx.now();
    for (const [, streams] of this.#bySession) {
      const first = streams.values().next().value as EventStream;
      if (first.session.expiresAt <= now) this.#enqueue(() => this.#receive({ kind: 'end', sessionId: first.session.id }));
    }
    if (!this.#checkingSessions && this.#bySession.size > 0) {
      this.#checkingSessions = true;
      const ids = [...this.#bySession.keys()];
      void Promise.all(
        ids.map((sessionId) =>
          this.#ctx.sessions.gone(sessionId).then(
            (gone) => gone && this.#enqueue(() => this.#receive({ kind: 'end', sessionId })),
            () => undefined, // the store is out: the streams stay; the renewal below reports it
          ),
        ),
      ).finally(() => (this.#checkingSessions = false));
    }
    if (now - this.#lastKeepAlive < this.#keepAliveMs) return;
    this.#lastKeepAlive = now;
    for (const stream of this.#streams) stream.comment('keep-alive');
    for (const sessionId of this.#bySession.keys()) {
      this.#ctx.sessions.touch(sessionId).then(
        (session) => session || this.#enqueue(() => this.#receive({ kind: 'end', sessionId })),
        (error: unknown) => this.#ctx.onError(error),
      );
    }
  }
}

/** The service's events: the hub is made on first use (a publish or a stream), once the context it reads exists. */
export function changeEvents(ctx: () => ObjectsContext & Pick<AuthContext, 'symmetricCrypto'>, options?: EventOptions): ChangeEvents {
  let hub: EventHub | undefined;
  const get = () => (hub ??= new EventHub(ctx(), options));
  return { publish: (change) => get().publish(change), open: (...args) => get().open(...args), close: async () => hub?.close() };
}

/**
 * The streams subscribed to one class: those whose filter requires a field to equal a scalar by that
 * field and value (a write looks up its object's values), the others all together.
 */
type ClassSubscription = Extract<Subscription, { className: string }>;

class ClassIndex {
  readonly all = new Set<EventStream>();
  readonly byField = new Map<string, Map<string, Set<EventStream>>>();

  add(subscription: ClassSubscription, stream: EventStream): void {
    if (!subscription.equal) return void this.all.add(stream);
    let byValue = this.byField.get(subscription.equal.field);
    if (!byValue) this.byField.set(subscription.equal.field, (byValue = new Map()));
    add(byValue, subscription.equal.key, stream);
  }

  /** Removes; true when the index is empty. */
  remove(subscription: ClassSubscription, stream: EventStream): boolean {
    if (!subscription.equal) this.all.delete(stream);
    else {
      const byValue = this.byField.get(subscription.equal.field);
      if (byValue) {
        remove(byValue, subscription.equal.key, stream);
        if (byValue.size === 0) this.byField.delete(subscription.equal.field);
      }
    }
    return this.all.size === 0 && this.byField.size === 0;
  }
}

/** What `message` is to one subscription as one session sees it now, or nothing. */
async function eventOf(subscription: Subscription, view: SessionView, message: ChangeMessage): Promise<EventType | undefined> {
  const covers = (object: StoredObject | undefined) => concerns(subscription, object);
  const after = covers(message.object) && (await view.readableAfter());
  if (message.action === 'create') return after ? 'create' : undefined;
  const before = covers(message.before) && (await view.readableBefore());
  if (message.action === 'delete') return before ? 'delete' : undefined;
  if (message.partial) return after ? 'update' : 'leave';
  if (after) return before ? 'update' : 'enter';
  return before ? 'leave' : undefined;
}

/** Whether `object` is one `subscription` names: that object, or an object of its class its filter matches. */
function concerns(subscription: Subscription, object: StoredObject | undefined): boolean {
  if (object === undefined) return false;
  if (subscription.objectId !== undefined) return object.id === subscription.objectId;
  return object.className === subscription.className && subscription.test(object.fields);
}

function add<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}

function remove<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (set?.delete(value) && set.size === 0) map.delete(key);
}

function positive(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}
