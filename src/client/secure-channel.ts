import { WINDOW_SIZE } from '../secure/replay.js';
import { base64 } from '@scure/base';
import {
  cipherStream,
  decryptBody,
  messageKeys,
  openEvent,
  requestHead,
  responseHead,
  responseSignature,
  sealRequest,
  signatureMatches,
  type MessageKeys,
} from '../secure/messages.js';
import type { SymmetricCrypto } from '../secure/symmetric.js';
import { OdbRestProtocolError } from './errors.js';
import type { FetchFunction } from './types.js';
import { blobOf, isBrowser } from './upload-body.js';

interface ChannelAnswer {
  status: number;
  /** The decrypted body, or the raw body of an unencrypted answer. */
  text: string;
  /** False for answers the server sent in the clear (only its refusals of the message itself). */
  encrypted: boolean;
  headers: Headers;
}

const encoder = new TextEncoder();

/**
 * The client side of the secure transport (PROTOCOL.md 4) for one secure session: numbers, encrypts
 * and signs requests, and checks and decrypts their answers.
 *
 * Concurrency: the server accepts a number only above (highest accepted - 64). A new number is
 * therefore handed out only while it is less than 64 above every number still in flight; beyond
 * that a request waits, so no request can arrive outside the window however they are reordered.
 */
export class SecureChannel {
  readonly token: string;
  readonly #keys: MessageKeys;
  #next = 1;
  readonly #inFlight = new Set<number>();
  #waiting: Array<() => void> = [];

  constructor(token: string, key: Uint8Array, symmetric?: SymmetricCrypto) {
    this.token = token;
    this.#keys = messageKeys(key, symmetric);
  }

  async exchange(fetchFn: FetchFunction, method: string, url: string, target: string, headers: Headers, json: string | undefined): Promise<ChannelAnswer> {
    const keys = this.#keys;
    const n = await this.#acquire();
    try {
      const { body, signature } = await sealRequest(keys, n, method, target, json ?? '');
      headers.set('secure-token', this.token);
      headers.set('secure-counter', String(n));
      headers.set('secure-signature', signature);
      if (body.length > 0) headers.set('content-type', 'application/text');
      const response = await fetchFn(url, { method, headers, body: body.length === 0 ? undefined : body });
      const text = await response.text();
      if (response.headers.get('encrypted') !== 'true') return { status: response.status, text, encrypted: false, headers: response.headers };
      return { status: response.status, text: await this.#open(keys, n, response, text), encrypted: true, headers: response.headers };
    } finally {
      this.#release(n);
    }
  }

  /**
   * A file exchange (PROTOCOL.md 6.6): `file`, when given, is sent as raw AES-CTR ciphertext (read
   * twice, streamed both times: once for the signature header, once as the body; in a browser, which
   * cannot stream a request body, encrypted once into a Blob that is then sent); an answer of type
   * `application/octet-stream` is a file, decrypted as it is read, whose stream fails at its end when
   * the signature does not match. Other answers are envelopes, opened as `exchange` opens them.
   */
  async exchangeFile(fetchFn: FetchFunction, method: string, url: string, target: string, headers: Headers, file?: Blob): Promise<ChannelAnswer & { stream?: ReadableStream<Uint8Array> }> {
    const keys = this.#keys;
    const n = await this.#acquire();
    try {
      const head = requestHead(n, method, target);
      let signature: string;
      let body: ReadableStream<Uint8Array> | Blob | undefined;
      const sealing = () => cipherStream(keys, n, 0, head, false);
      if (file && isBrowser()) {
        // a browser cannot stream the body (upload-body.ts): the ciphertext is made once, as a Blob, and signed on the way
        const sealed = sealing();
        body = await blobOf(file.stream().pipeThrough(sealed.transform));
        signature = base64.encode(sealed.digest());
      } else if (file) {
        const signing = sealing();
        await file.stream().pipeThrough(signing.transform).pipeTo(new WritableStream());
        signature = base64.encode(signing.digest());
        body = file.stream().pipeThrough(sealing().transform);
      } else signature = base64.encode(keys.mac(encoder.encode(head)));
      if (file) headers.set('content-type', 'application/octet-stream');
      headers.set('secure-token', this.token);
      headers.set('secure-counter', String(n));
      headers.set('secure-signature', signature);
      const streamed = body instanceof ReadableStream;
      const response = await fetchFn(url, { method, headers, body, ...(streamed ? { duplex: 'half' } : {}) } as RequestInit);
      const binary = response.headers.get('content-type') === 'application/octet-stream' && response.headers.get('encrypted') === 'true';
      if (!binary) {
        const text = await response.text();
        if (response.headers.get('encrypted') !== 'true') return { status: response.status, text, encrypted: false, headers: response.headers };
        return { status: response.status, text: await this.#open(keys, n, response, text), encrypted: true, headers: response.headers };
      }
      if (response.headers.get('secure-counter') !== String(n)) throw new OdbRestProtocolError(`secure response refused: Secure-Counter is not ${n}`, response.status);
      const opening = cipherStream(keys, n, 1, responseHead(n, response.status), true);
      const expected = response.headers.get('secure-signature');
      const verify = new TransformStream<Uint8Array, Uint8Array>({
        flush: () => {
          if (!signatureMatches(expected, opening.digest())) throw new OdbRestProtocolError('secure response refused: Secure-Signature does not match', response.status);
        },
      });
      const stream = (response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() })).pipeThrough(opening.transform).pipeThrough(verify);
      return { status: response.status, text: '', encrypted: true, headers: response.headers, stream };
    } finally {
      this.#release(n);
    }
  }

  /**
   * Opens an event stream (PROTOCOL.md 8): a signed GET whose answer, when it is the stream, carries
   * a signed empty head; any other answer is an envelope, opened as `exchange` opens it.
   */
  async openEvents(fetchFn: FetchFunction, url: string, target: string, headers: Headers, signal?: AbortSignal): Promise<ChannelAnswer & { stream?: Response }> {
    const keys = this.#keys;
    const n = await this.#acquire();
    try {
      const { signature } = await sealRequest(keys, n, 'GET', target, '');
      headers.set('secure-token', this.token);
      headers.set('secure-counter', String(n));
      headers.set('secure-signature', signature);
      const response = await fetchFn(url, { method: 'GET', headers, signal });
      if (response.status === 200 && response.headers.get('content-type')?.startsWith('text/event-stream')) {
        const refuse = (why: string) => new OdbRestProtocolError(`secure event stream refused: ${why}`, response.status);
        if (response.headers.get('secure-counter') !== String(n)) throw refuse(`Secure-Counter is not ${n}`);
        if (!signatureMatches(response.headers.get('secure-signature'), responseSignature(keys, n, 200, new Uint8Array()))) throw refuse('Secure-Signature does not match');
        return { status: 200, text: '', encrypted: true, headers: response.headers, stream: response };
      }
      const text = await response.text();
      if (response.headers.get('encrypted') !== 'true') return { status: response.status, text, encrypted: false, headers: response.headers };
      return { status: response.status, text: await this.#open(keys, n, response, text), encrypted: true, headers: response.headers };
    } finally {
      this.#release(n);
    }
  }

  /** An event's plaintext: its `data` must be sealed (number, signature, ciphertext), or it is refused. */
  async openEvent(event: string, id: string, data: string): Promise<{ k: number; plaintext: string }> {
    let sealed: { 'Secure-Counter'?: unknown; 'Secure-Signature'?: unknown; body?: unknown } | undefined;
    try {
      sealed = JSON.parse(data) as typeof sealed;
    } catch {
      sealed = undefined;
    }
    const k = typeof sealed?.['Secure-Counter'] === 'string' && /^[1-9]\d{0,15}$/.test(sealed['Secure-Counter']) ? Number(sealed['Secure-Counter']) : undefined;
    const signature = sealed?.['Secure-Signature'];
    const body = sealed?.body;
    if (k === undefined || typeof signature !== 'string' || typeof body !== 'string') {
      throw new OdbRestProtocolError(`secure event refused: ${event} is not sealed (no counter, signature and body)`, 200);
    }
    const plaintext = await openEvent(this.#keys, k, event, id, body, signature);
    if (plaintext === undefined) throw new OdbRestProtocolError(`secure event refused: the signature of ${event} does not match`, 200);
    return { k, plaintext };
  }

  async #open(keys: MessageKeys, n: number, response: Response, text: string): Promise<string> {
    const refuse = (why: string) => new OdbRestProtocolError(`secure response refused: ${why}`, response.status);
    if (response.headers.get('secure-counter') !== String(n)) throw refuse(`Secure-Counter is not ${n}`);
    const expected = responseSignature(keys, n, response.status, encoder.encode(text));
    if (!signatureMatches(response.headers.get('secure-signature'), expected)) throw refuse('Secure-Signature does not match');
    const plaintext = await decryptBody(keys, n, 1, text);
    if (plaintext === undefined) throw refuse('body does not decrypt');
    return plaintext;
  }

  async #acquire(): Promise<number> {
    while (this.#inFlight.size > 0 && this.#next - Math.min(...this.#inFlight) >= WINDOW_SIZE) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    const n = this.#next++;
    this.#inFlight.add(n);
    return n;
  }

  #release(n: number): void {
    this.#inFlight.delete(n);
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const wake of waiting) wake();
  }
}
