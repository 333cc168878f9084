/**
 * Realtime change events (PROTOCOL.md 8): what travels between instances, and the bus that carries it.
 * A leaf module: the write path, the hub and the stores' bus implementations all import only this.
 */
import type { Session } from '../auth/sessions.js';
import type { ApiRequest } from '../http/request.js';
import type { Fields, StoredObject } from '../storage/types.js';

/** One subscription: the objects of a class a filter matches, or one object by id. */
export type Subscription =
  | {
      className: string;
      objectId?: undefined;
      test: (fields: Fields) => boolean;
      /** A field the filter requires to equal a scalar (`{"City":"Kiel"}`): writes are matched to it through an index. */
      equal?: { field: string; key: string };
    }
  | { objectId: string; className?: undefined };

/** A write that happened, as every instance's hub receives it. */
export interface ChangeMessage {
  kind: 'change';
  action: 'create' | 'update' | 'delete';
  className: string;
  /** The object's id. */
  id: string;
  /** The object as stored before (update, delete). */
  before?: StoredObject;
  /** The object as stored (create, update). */
  object?: StoredObject;
  /**
   * Set when the bus could carry only the id (a PostgreSQL payload over its 8,000-byte limit): the
   * receiving hub reads the object from the store, and knows nothing of `before`.
   */
  partial?: true;
}

/** What a write tells the hub (the write path's `WriteResult` has this shape). */
export interface WrittenChange {
  action: ChangeMessage['action'];
  className: string;
  before?: StoredObject;
  object?: StoredObject;
}

/** Realtime events as the routes see them: the write path publishes every write, `GET /v1/events` opens streams. */
export interface ChangeEvents {
  /**
   * Resolves once the bus took the change (never rejects): a write is answered only then, so a later
   * write of the same object, on any instance, reaches every subscriber after it.
   */
  publish(change: WrittenChange): Promise<void>;
  /** The stream's `Response` (`429`/`503` beyond the limits); with `lastEventId`, what it missed first. */
  open(request: ApiRequest, session: Session, subscriptions: Subscription[], lastEventId: string | undefined): Promise<Response>;
  /** Ends every stream and closes the bus. */
  close(): Promise<void>;
}

/** A session ended (logout, revocation, password change): every instance ends its streams. */
export interface EndMessage {
  kind: 'end';
  sessionId: string;
}

/**
 * A class's run-time declaration changed (PROTOCOL.md 6.12): every instance reads it again from the
 * store and checks writes against it from then on.
 */
export interface ModelMessage {
  kind: 'model';
  className: string;
}

export type BusMessage = ChangeMessage | EndMessage | ModelMessage;

/**
 * Told by a bus to its own instance's listeners (never sent to others) when messages may have been
 * lost: its connection was down and is back. Each hub then tells its streams `reset` (PROTOCOL.md 8).
 */
export interface GapMessage {
  kind: 'gap';
}

/**
 * Carries messages to every instance sharing the store, the publishing one included, in the order
 * one instance published them. Implementations: `InProcessBus` (one instance), `PostgresEventBus`
 * (`odbrest/postgres`, LISTEN/NOTIFY) and `RedisEventBus` (`odbrest/redis`, pub/sub).
 */
export interface EventBus {
  publish(message: BusMessage): Promise<void>;
  /** Calls `listener` with every message from now on, and a `gap` where some may be missing; returns the function that stops it. */
  subscribe(listener: (message: BusMessage | GapMessage) => void): () => void;
  close?(): Promise<void>;
}

/** The `events` service option (PROTOCOL.md 8). */
export interface EventOptions {
  /** How writes reach the other instances. Default: in process (one instance). */
  bus?: EventBus;
  /** A comment line this often keeps proxies from closing an idle stream. Default 25 s. */
  keepAliveMs?: number;
  /** Open streams per session (beyond: `429`). Default 5. */
  maxStreamsPerSession?: number;
  /** Open streams of this instance (beyond: `503`). Default 10,000. */
  maxStreams?: number;
  /** Events kept for `Last-Event-ID` resumption: at most this many... Default 10,000. */
  retainEvents?: number;
  /** ...and none older than this. Default 5 minutes. */
  retainMs?: number;
  /**
   * Bytes a stream may hold for a client that does not read: beyond it the stream is cut (the client
   * reconnects with `Last-Event-ID`). Default 1 MiB.
   */
  maxPendingBytes?: number;
}

/** A bus message as one JSON text (the PostgreSQL and Redis buses send this). */
export function encodeMessage(message: BusMessage): string {
  return JSON.stringify(message);
}

/** A bus message from its JSON text; `undefined` for anything that is not one (never thrown). */
export function decodeMessage(text: string): BusMessage | undefined {
  try {
    const message = JSON.parse(text) as BusMessage;
    if (message?.kind === 'end' && typeof message.sessionId === 'string') return message;
    if (message?.kind === 'model' && typeof message.className === 'string') return message;
    if (message?.kind === 'change' && typeof message.id === 'string' && typeof message.className === 'string') return message;
  } catch {
    // not ours
  }
  return undefined;
}
