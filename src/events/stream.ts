/**
 * One `GET /v1/events` stream: Server-Sent Events frames in a web `ReadableStream`, so every adapter
 * and runtime streams it. Frames wait here only while the client is slow; a client that stops reading
 * is cut off once `maxPendingBytes` wait (it reconnects with `Last-Event-ID`), never buffered without bound.
 */
import type { Session } from '../auth/sessions.js';
import type { ApiRequest } from '../http/request.js';
import { sealEvent, type MessageKeys } from '../secure/messages.js';
import type { Subscription } from './types.js';

const encoder = new TextEncoder();
/** Bytes the web stream itself queues before frames wait in `pending`. */
const STREAM_BUFFER = 16 * 1024;
/** Event numbers one reservation gives a stream of a secure session. */
export const COUNTER_BLOCK = 2 ** 20;

/** Encrypts events of a secure session (PROTOCOL.md 8) under numbers from blocks reserved for this stream. */
export class EventSealer {
  #next = 0;
  #end = 0;

  constructor(
    private readonly keys: MessageKeys,
    /** Reserves the next block of the session's event numbers (1, 2, ...: one store increment). */
    private readonly reserve: () => Promise<number>,
  ) {}

  /** The `data` of a sealed event: its number, signature and ciphertext. */
  async seal(event: string, id: string, plaintext: string): Promise<string> {
    if (this.#next >= this.#end) {
      const block = await this.reserve();
      if (!Number.isSafeInteger(block) || block < 1 || block >= 2 ** 32) throw new Error('no event numbers left for this session');
      this.#next = (block - 1) * COUNTER_BLOCK + 1;
      this.#end = block * COUNTER_BLOCK + 1;
    }
    const k = this.#next++;
    const { body, signature } = await sealEvent(this.keys, k, event, id, plaintext);
    return JSON.stringify({ 'Secure-Counter': String(k), 'Secure-Signature': signature, body });
  }
}

export interface StreamInit {
  session: Session;
  request: ApiRequest;
  subscriptions: Subscription[];
  maxPendingBytes: number;
  sealer?: EventSealer;
  onClose(stream: EventStream): void;
}

export class EventStream {
  readonly session: Session;
  readonly request: ApiRequest;
  readonly subscriptions: Subscription[];
  readonly body: ReadableStream<Uint8Array>;
  readonly #sealer: EventSealer | undefined;
  readonly #maxPending: number;
  readonly #onClose: (stream: EventStream) => void;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #closed = false;

  constructor(init: StreamInit) {
    this.session = init.session;
    this.request = init.request;
    this.subscriptions = init.subscriptions;
    this.#sealer = init.sealer;
    this.#maxPending = init.maxPendingBytes;
    this.#onClose = init.onClose;
    // the stream's source is one small object and the size function is shared: three closures and a
    // size function per stream were a tenth of an idle stream's memory besides the web stream itself
    this.body = new ReadableStream<Uint8Array>(new StreamSource(this), { highWaterMark: STREAM_BUFFER, size: byteLength });
  }

  /** The web stream started: its controller takes the frames from now on. */
  started(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.#controller = controller;
  }

  /** The web stream has room again: frames that waited go on. */
  pulled(): void {
    this.#flush();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends one event (`data`: its JSON text, sealed first on a secure session). */
  async event(event: string, id: string | undefined, data: string): Promise<void> {
    if (this.#closed) return;
    const sent = this.#sealer ? await this.#sealer.seal(event, id ?? '', data) : data;
    this.#write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${sent}\n\n`);
  }

  /** A comment line (keeps proxies from closing an idle connection). */
  comment(text: string): void {
    this.#write(`: ${text}\n\n`);
  }

  /** Sends `end` with the envelope's status and closes. */
  async end(status: { internalStatus: string; statusMessage: string }): Promise<void> {
    if (this.#closed) return;
    await this.event('end', undefined, JSON.stringify(status)).catch(() => undefined);
    this.close(true);
  }

  /** Closes the stream; `drain`: what waits is still sent first. */
  close(drain = false): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#onClose(this);
    try {
      if (drain) for (const chunk of this.#pending) this.#controller.enqueue(chunk);
      this.#controller.close();
    } catch {
      // already cancelled by the client
    }
    this.#pending = [];
    this.#pendingBytes = 0;
  }

  #write(text: string): void {
    if (this.#closed) return;
    const chunk = encoder.encode(text);
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.byteLength;
    this.#flush();
    if (this.#pendingBytes > this.#maxPending) this.close(); // a client that does not read is cut off
  }

  #flush(): void {
    while (this.#pending.length > 0 && (this.#controller.desiredSize ?? 0) > 0) {
      const chunk = this.#pending.shift()!;
      this.#pendingBytes -= chunk.byteLength;
      this.#controller.enqueue(chunk);
    }
  }
}

const byteLength = (chunk: Uint8Array) => chunk.byteLength;

/** The underlying source of an `EventStream`'s web stream. */
class StreamSource implements UnderlyingDefaultSource<Uint8Array> {
  constructor(private readonly stream: EventStream) {}
  start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.stream.started(controller);
  }
  pull(): void {
    this.stream.pulled();
  }
  cancel(): void {
    this.stream.close();
  }
}
