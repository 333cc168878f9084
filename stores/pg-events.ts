/**
 * The event bus of instances sharing PostgreSQL (PROTOCOL.md 8): NOTIFY on one channel, and one
 * connection per instance that LISTENs (the object cache's `ChangeFeed`). PostgreSQL delivers
 * notifications in commit order to every listener, so every instance sees the writes in one order.
 */
import pg from 'pg';
import { decodeMessage, encodeMessage, type BusMessage, type EventBus } from '../src/index.js';
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

export class PostgresEventBus implements EventBus {
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #channel: string;
  readonly #feed: ChangeFeed;
  readonly #listeners = new Set<(message: BusMessage) => void>();
  /** Notifications are sent one after the other, so this instance's writes keep their order. */
  #sending: Promise<unknown> = Promise.resolve();
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
      listening,
      deaf: (error) => options.onConnectionError?.(error),
      changed: (payload) => {
        const message = decodeMessage(payload);
        if (message) for (const listener of this.#listeners) listener(message);
      },
    });
    this.#feed.start();
  }

  publish(message: BusMessage): Promise<void> {
    const sent = this.#sending.then(() => this.#pool.query('SELECT pg_notify($1, $2)', [this.#channel, payloadOf(message)]));
    this.#sending = sent.catch(() => undefined);
    return sent.then(() => undefined);
  }

  subscribe(listener: (message: BusMessage) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
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
