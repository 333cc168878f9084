/**
 * The event bus of instances sharing PostgreSQL (PROTOCOL.md 8): NOTIFY on one channel, and one
 * connection per instance that LISTENs (the object cache's `ChangeFeed`). PostgreSQL delivers
 * notifications in commit order to every listener, so every instance sees the writes in one order.
 */
import pg from 'pg';
import { decodeMessage, encodeMessage, type BusMessage, type EventBus, type GapMessage } from '../src/index.js';
import { ChangeFeed } from './pg-cache.js';
import { checkIdentifiers, openPool, type PostgresPoolOptions } from './pg-common.js';

/** NOTIFY's payload limit is 8,000 bytes; a message longer than this carries only the object's id. */
export const NOTIFY_PAYLOAD_LIMIT = 7999;

export interface PostgresEventBusOptions extends PostgresPoolOptions {
  /** The notification channel. Default `odbrest_events`; every instance of one service uses the same. */
  channel?: string;
  /** Called with errors of the listening connection (it reconnects by itself). */
  onConnectionError?: (error?: Error) => void;
}

/** Delays between the tries of a notification that failed (PostgreSQL restarting, a connection lost): about 6 s in all. */
const PUBLISH_RETRIES_MS = [100, 200, 400, 800, 1600, 3200];

export class PostgresEventBus implements EventBus {
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #channel: string;
  readonly #feed: ChangeFeed;
  readonly #listeners = new Set<(message: BusMessage | GapMessage) => void>();
  /** Notifications are sent one after the other, so this instance's writes keep their order. */
  #sending: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** Whether the listening connection was lost since it last listened: notifications of the meantime are gone. */
  #deaf = false;
  /** Settles once the listening connection listens (messages published before may be missed). */
  readonly ready: Promise<void>;

  constructor(options: PostgresEventBusOptions = {}) {
    this.#channel = options.channel ?? 'odbrest_events';
    checkIdentifiers('PostgresEventBus', this.#channel);
    ({ pool: this.#pool, owned: this.#ownsPool } = openPool({ ...options, maxConnections: options.maxConnections ?? 2 }));
    const connection: pg.ClientConfig = options.pool?.options ?? { connectionString: options.connectionString, connectionTimeoutMillis: options.connectTimeoutMs ?? 2000 };
    let listening!: () => void;
    this.ready = new Promise((resolve) => (listening = resolve));
    this.#feed = new ChangeFeed(connection, this.#channel, {
      listening: () => {
        listening();
        if (!this.#deaf) return;
        this.#deaf = false;
        for (const listener of this.#listeners) listener({ kind: 'gap' });
      },
      deaf: (error) => {
        this.#deaf = true;
        options.onConnectionError?.(error);
      },
      changed: (payload) => {
        const message = decodeMessage(payload);
        if (message) for (const listener of this.#listeners) listener(message);
      },
    });
    this.#feed.start();
  }

  /** Sends the message, trying again for a few seconds while PostgreSQL cannot be reached; in order either way. */
  publish(message: BusMessage): Promise<void> {
    const sent = this.#sending.then(() => this.#notify(payloadOf(message)));
    this.#sending = sent.catch(() => undefined);
    return sent;
  }

  async #notify(payload: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#pool.query('SELECT pg_notify($1, $2)', [this.#channel, payload]);
        return;
      } catch (error) {
        const delay = PUBLISH_RETRIES_MS[attempt];
        if (delay === undefined || this.#closed) throw error;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  subscribe(listener: (message: BusMessage | GapMessage) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#sending;
    await this.#feed.close();
    if (this.#ownsPool) await this.#pool.end();
  }
}

/** The message as a payload, or (over NOTIFY's limit) only what names the object: receivers read it from the store. */
export function payloadOf(message: BusMessage): string {
  const full = encodeMessage(message);
  if (message.kind !== 'change' || new TextEncoder().encode(full).length <= NOTIFY_PAYLOAD_LIMIT) return full;
  return encodeMessage({ kind: 'change', action: message.action, className: message.className, id: message.id, partial: true });
}
