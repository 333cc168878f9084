/**
 * `client.subscribe()` (PROTOCOL.md 8): change events as an async iterator or through callbacks,
 * reconnecting with backoff and `Last-Event-ID`; on a secure session every event is checked and
 * decrypted, and an unsigned one ends the subscription with an error.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { OdbRestError, OdbRestProtocolError, OdbRestUnauthenticatedRefusal } from './errors.js';
import type { SecureChannel } from './secure-channel.js';

/** One subscription: a class with the listing's query (a JSON query object or query text), or one object. */
export type EventSubscription = { className: string; query?: Record<string, unknown> | string } | { objectId: string };

/** An event as `subscribe` delivers it. */
export interface ChangeEvent {
  /** The stream's event id (absent on `end`). */
  id?: string;
  type: 'create' | 'update' | 'delete' | 'enter' | 'leave' | 'reset' | 'end';
  /** `create`, `update`, `delete`, `enter`, `leave`: the class, id and object (metadata only for `delete` and `leave`). */
  className?: string;
  objectId?: string;
  object?: Record<string, unknown>;
  /** `end`: the status of the session's end (`internalStatus` `201`). */
  status?: { internalStatus: string; statusMessage: string };
}

export interface SubscribeOptions {
  /** Resume after this event id (as a previous subscription's `lastEventId` gave it). */
  lastEventId?: string;
  /** Stops the subscription. */
  signal?: AbortSignal;
  /**
   * First reconnection delay (until the server sends its own with `retry:`); doubled per failure up
   * to `maxDelayMs`. Each wait is the delay plus up to half of it at random, so clients cut off
   * together (a server restart) do not all come back in the same millisecond. Default 500 ms.
   */
  minDelayMs?: number;
  /** Default 30 s. */
  maxDelayMs?: number;
  /** Callback style: called with each event (the returned subscription need not be iterated then). */
  onEvent?: (event: ChangeEvent) => void;
  /** Callback style: called once with the error that ended the subscription. */
  onError?: (error: unknown) => void;
  /**
   * Whether events flow: called with `{open: true}` each time the stream is served, and with the
   * refusal (`429`, `503`), the network error or the cut, and the wait before the next try (jitter
   * included), each time it is not. The subscription retries by itself either way; this lets an app say that it waits.
   */
  onConnection?: (state: ConnectionState) => void;
}

/** What `onConnection` is told: the stream is served, or it is not and is tried again after `retryInMs`. */
export type ConnectionState = { open: true } | { open: false; error: unknown; retryInMs: number };

/** A running subscription: iterate it (`for await`), or pass `onEvent`. */
export interface EventSubscriptionHandle extends AsyncIterable<ChangeEvent> {
  /** The id of the last event received (for resuming later). */
  readonly lastEventId: string | undefined;
  close(): void;
}

/** What `subscribe` needs of the client. */
export interface EventConnector {
  /** Opens the stream with the current credential: a `Response` of the stream, or throws the refusal. */
  connect(query: string, lastEventId: string | undefined, signal: AbortSignal): Promise<{ response: Response; channel?: SecureChannel }>;
  /** Logs in again after a `201`/`204` when the client is set up to; false when it is not. */
  relogin(error: unknown): Promise<boolean>;
}

interface Frame {
  id?: string;
  event: string;
  data: string;
}

export function subscribeEvents(connector: EventConnector, subscriptions: EventSubscription[], options: SubscribeOptions = {}): EventSubscriptionHandle {
  const controller = new AbortController();
  options.signal?.addEventListener('abort', () => controller.abort(), { once: true });
  const query = `subscribe=${encodeURIComponent(JSON.stringify(subscriptions))}`;
  let lastEventId = options.lastEventId;
  let minDelay = options.minDelayMs ?? 500;
  const maxDelay = options.maxDelayMs ?? 30_000;
  /** The server's `retry:` becomes the first delay (PROTOCOL.md 8; WHATWG "reconnection time"). */
  const onRetry = (ms: number) => (minDelay = ms);
  /** Waits `delay` plus up to half of it (jitter), at least `floor`. */
  const wait = (delay: number, cause: unknown, floor = 0) => {
    const delayMs = Math.max(floor, Math.round(delay * (1 + Math.random() / 2)));
    options.onConnection?.({ open: false, error: cause, retryInMs: delayMs });
    return sleep(delayMs, controller.signal);
  };

  async function* run(): AsyncGenerator<ChangeEvent> {
    let delay = minDelay;
    while (!controller.signal.aborted) {
      let opened: Awaited<ReturnType<EventConnector['connect']>>;
      try {
        opened = await connector.connect(query, lastEventId, controller.signal);
      } catch (error) {
        if (controller.signal.aborted) return;
        // a secure session's refusals come unsigned (OdbRestUnauthenticatedRefusal): logging in again or waiting is still safe
        const code = error instanceof OdbRestError || error instanceof OdbRestUnauthenticatedRefusal ? error.internalStatus : undefined;
        if ((code === '201' || code === '204') && (await connector.relogin(error))) continue;
        if (code !== '429' && code !== '503' && !isNetworkError(error)) throw error;
        await wait(delay, error, ((error as OdbRestError).retryAfter ?? 0) * 1000);
        delay = Math.min(maxDelay, delay * 2);
        continue;
      }
      let lastK = 0;
      let cause: unknown = 'the stream ended';
      options.onConnection?.({ open: true });
      try {
        for await (const frame of frames(opened.response, controller.signal, onRetry)) {
          delay = minDelay;
          let data = frame.data;
          if (opened.channel) {
            const { k, plaintext } = await opened.channel.openEvent(frame.event, frame.id ?? '', data);
            if (k <= lastK) throw new OdbRestProtocolError(`secure event refused: its number ${k} is not above ${lastK}`, 200);
            lastK = k;
            data = plaintext;
          }
          const event = toEvent(frame, data);
          if (frame.id !== undefined) lastEventId = frame.id;
          yield event;
          if (event.type === 'end') return;
        }
      } catch (error) {
        if (controller.signal.aborted) return;
        if (error instanceof OdbRestProtocolError) throw error;
        cause = error; // a cut connection: reconnect below
      }
      await wait(Math.max(delay, minDelay), cause);
      delay = Math.min(maxDelay, Math.max(delay, minDelay) * 2);
    }
  }

  const iterator = run();
  const handle: EventSubscriptionHandle = {
    get lastEventId() {
      return lastEventId;
    },
    close: () => controller.abort(),
    [Symbol.asyncIterator]: () => iterator,
  };
  if (options.onEvent) {
    const onEvent = options.onEvent;
    void (async () => {
      try {
        for await (const event of iterator) onEvent(event);
      } catch (error) {
        options.onError?.(error);
      }
    })();
  }
  return handle;
}

function toEvent(frame: Frame, data: string): ChangeEvent {
  let json: any;
  try {
    json = JSON.parse(data);
  } catch {
    throw new OdbRestProtocolError(`event ${frame.event} carries no JSON data`, 200);
  }
  const type = frame.event as ChangeEvent['type'];
  if (type === 'end') return { type, status: json };
  if (type === 'reset') return { id: frame.id, type };
  return { id: frame.id, type, className: json.className, objectId: json['~ObjectID'], object: json.object };
}

/**
 * The Server-Sent Events of a response, frame by frame, as the WHATWG parsing rules say (any of
 * `\r\n`, `\r`, `\n` cut anywhere between chunks, comments skipped, `retry:` to `onRetry`).
 */
/**
 * The stream's events, parsed by `eventsource-parser` (a line or a `\r\n` cut between chunks is
 * joined, `retry:` heard). Its parser, not its stream class: that one extends `TransformStream` when
 * the module loads, which touches the global on Node 20.
 */
async function* frames(response: Response, signal: AbortSignal, onRetry: (ms: number) => void): AsyncGenerator<Frame> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const parsed: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => parsed.push(message), onRetry });
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      for (const message of parsed.splice(0)) yield { id: message.id, event: message.event ?? 'message', data: message.data };
    }
  } finally {
    signal.removeEventListener('abort', cancel);
    cancel();
  }
}

function isNetworkError(error: unknown): boolean {
  return error instanceof Error && error.name === 'OdbRestNetworkError';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
