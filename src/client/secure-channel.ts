import { WINDOW_SIZE } from '../secure/replay.js';
import {
  decryptBody,
  messageKeys,
  responseSignature,
  sealRequest,
  signatureMatches,
  type MessageKeys,
} from '../secure/messages.js';
import type { SymmetricCrypto } from '../secure/symmetric.js';
import { OdbRestProtocolError } from './errors.js';

export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

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
