/**
 * The event bus of instances sharing PostgreSQL (PROTOCOL.md 8): NOTIFY on one channel, and one
 * connection per instance that LISTENs (the object cache's `ChangeFeed`). PostgreSQL delivers
 * notifications in commit order to every listener, so every instance sees the writes in one order.
 *
 * A message over NOTIFY's 8,000-byte limit (a large object, its `before` and `object`) is written
 * whole to a payload table in the same statement that notifies its row id; receivers read the row,
 * so `enter` and `leave` are told for large objects too. Rows live 5 minutes; a row no longer there
 * (or unreadable) leaves the receiver the object's id alone, which the hub reads from the store.
 */
import pg from 'pg';
import { decodeMessage, encodeMessage, type BusMessage, type EventBus, type GapMessage } from '../src/index.js';
import { ChangeFeed } from './pg-cache.js';
import { checkIdentifiers, openPool, type PostgresPoolOptions } from './pg-common.js';

/** NOTIFY's payload limit is 8,000 bytes; a message longer than this goes through the payload table. */
export const NOTIFY_PAYLOAD_LIMIT = 7999;

/** How long a large message's row is kept for the receivers to read it. */
const PAYLOAD_KEEP = '5 minutes';

export interface PostgresEventBusOptions extends PostgresPoolOptions {
  /** The notification channel. Default `odbrest_events`; every instance of one service uses the same. */
  channel?: string;
  /**
   * The table holding messages over NOTIFY's limit, created on first use: `name` (in the first schema
   * of the connection's search_path) or `schema.name`. Default `<channel>_payloads`.
   */
  payloadTable?: string;
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
  readonly #payloadTable: string;
  /** Settles once the payload table exists (made on the first message over the limit). */
  #payloadTableReady: Promise<unknown> | undefined;
  /** Notifications are sent one after the other, so this instance's writes keep their order. */
  #sending: Promise<unknown> = Promise.resolve();
  /** Received messages are handed on one after the other, in notification order, though a large one is read first. */
  #receiving: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** Whether the listening connection was lost since it last listened: notifications of the meantime are gone. */
  #deaf = false;
  /** Settles once the listening connection listens (messages published before may be missed). */
  readonly ready: Promise<void>;

  constructor(options: PostgresEventBusOptions = {}) {
    this.#channel = options.channel ?? 'odbrest_events';
    this.#payloadTable = options.payloadTable ?? `${this.#channel}_payloads`;
    checkIdentifiers('PostgresEventBus', this.#channel, ...this.#payloadTable.split('.', 2));
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
        if (!message) return;
        this.#receiving = this.#receiving
          .then(() => this.#whole(message))
          .then((whole) => {
            for (const listener of this.#listeners) listener(whole);
          })
          .catch(() => undefined); // a listener's failure does not stop the messages after it
      },
    });
    this.#feed.start();
  }

  /** Sends the message, trying again for a few seconds while PostgreSQL cannot be reached; in order either way. */
  publish(message: BusMessage): Promise<void> {
    const sent = this.#sending.then(() => this.#retrying(() => this.#send(message)));
    this.#sending = sent.catch(() => undefined);
    return sent;
  }

  /** Runs `send`, trying again for a few seconds while PostgreSQL cannot be reached. */
  async #retrying(send: () => Promise<void>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await send();
        return;
      } catch (error) {
        const delay = PUBLISH_RETRIES_MS[attempt];
        if (delay === undefined || this.#closed) throw error;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  async #send(message: BusMessage): Promise<void> {
    const full = encodeMessage(message);
    if (message.kind !== 'change' || new TextEncoder().encode(full).length <= NOTIFY_PAYLOAD_LIMIT) {
      await this.#pool.query('SELECT pg_notify($1, $2)', [this.#channel, full]);
      return;
    }
    await (this.#payloadTableReady ??= this.#createPayloadTable());
    // one statement: the row is there (committed) when the notification naming it arrives; old rows go
    const ref = encodeMessage({ kind: 'change', action: message.action, className: message.className, id: message.id, partial: true });
    await this.#pool.query(
      `WITH gone AS (DELETE FROM ${this.#payloadTable} WHERE at < now() - interval '${PAYLOAD_KEEP}'),
            row AS (INSERT INTO ${this.#payloadTable} (body) VALUES ($2) RETURNING id)
       SELECT pg_notify($1, ($3::jsonb || jsonb_build_object('payload', row.id))::text) FROM row`,
      [this.#channel, full, ref],
    );
  }

  #createPayloadTable(): Promise<unknown> {
    const created = this.#pool
      .query(`CREATE TABLE IF NOT EXISTS ${this.#payloadTable} (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), body text NOT NULL)`)
      .catch((error: { code?: string }) => {
        // two instances creating it at once: one of them finds it made (unique violation on its type)
        if (error.code !== '23505' && error.code !== '42P07') throw error;
      });
    created.catch(() => (this.#payloadTableReady = undefined)); // tried again with the next large message
    return created;
  }

  /** The message whole: a large one's body read from the payload table (else the id alone, for the hub to read). */
  async #whole(message: BusMessage): Promise<BusMessage> {
    const row = message.kind === 'change' ? (message as { payload?: unknown }).payload : undefined;
    if (typeof row !== 'number') return message;
    const { payload: _row, ...partial } = message as BusMessage & { payload: number };
    try {
      const { rows } = await this.#pool.query<{ body: string }>(`SELECT body FROM ${this.#payloadTable} WHERE id = $1`, [row]);
      return (rows[0] && decodeMessage(rows[0].body)) ?? partial;
    } catch {
      return partial;
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
    await this.#receiving;
    if (this.#ownsPool) await this.#pool.end();
  }
}
