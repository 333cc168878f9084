import { base64 } from '@scure/base';
import type { LRUCache } from 'lru-cache';
import { lruCache } from '../caches.js';
import type { Session } from '../auth/sessions.js';
import type { AuthContext } from '../auth/context.js';
import { isSecureContentType, readBodyText } from '../http/body.js';
import { errorReply, toResponse, type Answer } from '../http/envelope.js';
import { textResponse } from '../http/light-response.js';
import { binaryReopener, isBinaryAnswer } from '../files/binary.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import type { SecureSessionState } from './replay.js';
import { openToken } from './token.js';
import { WindowUpdates } from './window-updates.js';
import { gone, rejected } from './refusals.js';
import {
  cipherStream,
  decryptBody,
  messageKeys,
  parseCounter,
  requestHead,
  requestSignature,
  responseHead,
  sealResponse,
  signatureMatches,
  type MessageKeys,
  type Sealed,
} from './messages.js';

const encoder = new TextEncoder();

/**
 * Every sealed answer is one message, readable only under its own number: no cache may keep it. A
 * file's answer carried `private, no-cache` and an `ETag`, so a browser kept it and revalidated the
 * next download itself (`If-None-Match`): the `304` then gave the page the old ciphertext (sealed
 * under the old number) with the new number and signature, and that download failed its signature.
 */
const NOT_STORED = 'no-store';

/**
 * The secure transport of PROTOCOL.md 4 for requests carrying `Secure-Token`. Failures before the
 * message is accepted (token, signature, counter, body) are thrown and answered unencrypted; once
 * accepted, every answer, errors included, is encrypted and signed under the request's number.
 */
export class SecureTransport {
  /**
   * Opening a token and preparing its keys are pure and cost as much as the rest of a small request.
   * A token's opening is kept as its promise while it runs, so concurrent first requests of a session
   * share one opening and go on together, in order, and then as the session id it found (a request
   * of a known token waits for nothing); a token that names no session is not kept.
   */
  readonly #sessionIds: LRUCache<string, Promise<string | undefined> | { id: string }>;
  readonly #keys: LRUCache<string, MessageKeys>;
  readonly #windows: WindowUpdates;

  /** `cacheSize`: sessions whose opened token and prepared keys are kept in this process (the state stays in the store). */
  constructor(
    private readonly ctx: AuthContext,
    cacheSize: number,
  ) {
    this.#sessionIds = lruCache(cacheSize);
    this.#keys = lruCache(cacheSize);
    this.#windows = new WindowUpdates(ctx.kv, () => ctx.now(), cacheSize);
  }

  claims(headers: Headers): boolean {
    return headers.has('secure-token');
  }

  /** The session id sealed in a Secure-Token, or `undefined` for a token this service did not issue; at once for a token opened before. */
  #sessionIdOf(token: string): string | Promise<string | undefined> {
    const cached = this.#sessionIds.get(token);
    if (cached) return cached instanceof Promise ? cached : cached.id;
    const tokenKey = this.ctx.serverKey.current?.tokenKey;
    if (!tokenKey) return Promise.resolve(undefined);
    const opening = openToken(tokenKey, token).then((id) => {
      if (this.#sessionIds.peek(token) === opening) {
        if (id === undefined) this.#sessionIds.delete(token);
        else this.#sessionIds.set(token, { id });
      }
      return id;
    });
    this.#sessionIds.set(token, opening);
    return opening;
  }

  /** The live secure session a Secure-Token names, or `undefined`. */
  async sessionOf(token: string): Promise<Session | undefined> {
    const id = await this.#sessionIdOf(token);
    const found = id === undefined ? undefined : await this.ctx.sessions.read(id);
    return found?.session.kind === 'secure' ? found.session : undefined;
  }

  /** `rawBody`: the route streams its body (a file upload, PROTOCOL.md 6.6); see `#handleStreamed`. */
  async handle(request: ApiRequest, next: (request: ApiRequest) => Promise<Answer>, rawBody = false): Promise<Response> {
    const token = request.headers.get('secure-token')!.trim();
    if (token === '') throw new ApiError('204', 'Secure-Token header is empty');
    const opened = this.#sessionIdOf(token);
    const id = typeof opened === 'string' ? opened : await opened;
    // A session's key never changes, so known keys spare a store read; the window update below reads it anyway.
    const keys = id === undefined ? undefined : (this.#keys.get(id) ?? (await this.#loadKeys(token)));
    if (id === undefined || keys === undefined) throw gone();
    const n = parseCounter(request.headers.get('secure-counter'));
    if (n === undefined) throw rejected('Secure-Counter must be a positive decimal integer');
    if (rawBody) return this.#handleStreamed(request, next, token, id, keys, n);
    // a bodiless request (a GET) has nothing to read: no stream, no promise
    const bodyText =
      request.raw.body === null && !request.headers.has('content-length')
        ? ''
        : await readBodyText(request.raw, this.ctx.maxBodyBytes).catch((error: unknown) => {
            throw error instanceof ApiError && error.code === '400' ? rejected('body is not base64') : error;
          });

    const expected = requestSignature(keys, n, request.method, request.target, encoder.encode(bodyText));
    if (!signatureMatches(request.headers.get('secure-signature'), expected)) {
      if (!(await this.sessionOf(token))) throw gone();
      throw rejected('Secure-Signature does not match (key, counter, method, target or body)');
    }
    const session = await this.#accept(id, n);
    const plaintext = bodyText === '' ? '' : await decryptBody(keys, n, 0, bodyText);
    if (plaintext === undefined) throw rejected('body does not decrypt to UTF-8 text');

    let answer: Answer;
    if (bodyText !== '' && !isSecureContentType(request.headers.get('content-type'))) {
      answer = errorReply(new ApiError('415', 'Content-Type of an encrypted body must be application/text'));
    } else {
      request.bodyText = plaintext;
      request.secure = true;
      request.session = session;
      answer = await next(request);
    }
    return this.#seal(request, answer, keys, n);
  }

  /**
   * A streamed body (PROTOCOL.md 6.6): raw AES-CTR ciphertext, decrypted as the route reads it while
   * its MAC is computed; its end checks the signature and then accepts the counter, so a body that is
   * forged, replayed or cut short fails the route's read and nothing of it is kept. The answer is
   * encrypted only once the message was accepted: a route that refused before reading the whole body
   * (no right, unknown upload, `413`) is answered unencrypted, like any refusal of an unaccepted message.
   */
  async #handleStreamed(request: ApiRequest, next: (request: ApiRequest) => Promise<Answer>, token: string, id: string, keys: MessageKeys, n: number): Promise<Response> {
    const session = await this.sessionOf(token);
    if (!session) throw gone();
    if (!isBinaryContentType(request.headers.get('content-type'))) {
      await request.raw.body?.cancel().catch(() => undefined);
      throw rejected('Content-Type of an encrypted file body must be application/octet-stream');
    }
    const cipher = cipherStream(keys, n, 0, requestHead(n, request.method, request.target), true);
    let accepted = false;
    const signature = request.headers.get('secure-signature');
    const verify = new TransformStream<Uint8Array, Uint8Array>({
      flush: async () => {
        if (!signatureMatches(signature, cipher.digest())) throw rejected('Secure-Signature does not match (key, counter, method, target or body)');
        await this.#accept(id, n);
        accepted = true;
      },
    });
    const source = request.raw.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    request.body = source.pipeThrough(cipher.transform).pipeThrough(verify);
    request.secure = true;
    request.session = session;
    const answer = await next(request);
    if (!accepted) {
      await request.body.cancel().catch(() => undefined); // what the route left unread stays unread
      return toResponse(answer);
    }
    return this.#seal(request, answer, keys, n);
  }

  /**
   * Accepts message `n` of the session: its number goes into the replay window and the session's idle
   * timeout is renewed, the two store operations side by side. A session that ended is `201` whatever
   * its window says; a number the window refuses is `205`.
   */
  async #accept(id: string, n: number): Promise<Session> {
    const [touched, recorded] = await Promise.allSettled([this.ctx.sessions.touch(id), this.#windows.accept(id, n)]);
    if (touched.status === 'rejected') throw touched.reason;
    if (touched.value?.kind !== 'secure') throw gone();
    if (recorded.status === 'rejected') throw recorded.reason;
    return touched.value;
  }

  async #loadKeys(token: string): Promise<MessageKeys | undefined> {
    const session = await this.sessionOf(token);
    if (!session) return undefined;
    const keys = messageKeys(base64.decode((session.extra as SecureSessionState).key), this.ctx.symmetricCrypto);
    this.#keys.set(session.id, keys);
    return keys;
  }

  /** The one `Response` of an accepted message: the answer encrypted and signed under its number, its other headers kept. */
  #seal(request: ApiRequest, answer: Answer, keys: MessageKeys, n: number): Response | Promise<Response> {
    // an envelope's text is at hand, and with synchronous primitives the sealing too: no promise is made
    if (!(answer instanceof Response)) return this.#sealed(request, answer, keys, n, sealResponse(keys, n, answer.status, answer.text));
    if (isBinaryAnswer(answer)) return this.#sealBinary(answer, keys, n);
    if (isEventStream(answer)) return this.#sealEventStream(answer, keys, n);
    const response: Response = answer;
    return response.text().then((text) => this.#sealed(request, response, keys, n, sealResponse(keys, n, response.status, text)));
  }

  #sealed(request: ApiRequest, answer: Answer, keys: MessageKeys, n: number, sealing: Sealed | Promise<Sealed>): Response | Promise<Response> {
    if (sealing instanceof Promise) return sealing.then((done) => this.#sealed(request, answer, keys, n, done));
    const { body, signature } = sealing;
    const sealed = { 'content-type': 'application/text', encrypted: 'true', 'secure-counter': String(n), 'secure-signature': signature, 'cache-control': NOT_STORED };
    const payload = body.length === 0 ? null : body;
    if (!(answer instanceof Response)) {
      const headers = { ...answer.headers, ...sealed };
      // the sealed bytes as they are: a light Response where the adapter writes answers itself
      return payload ? textResponse(payload, answer.status, headers, request.lightResponses) : new Response(null, { status: answer.status, headers });
    }
    // a route's own Response: its headers are kept, its framing and type replaced
    const headers = answer.headers;
    headers.delete('content-length');
    for (const [name, value] of Object.entries(sealed)) headers.set(name, value);
    return new Response(payload, { status: answer.status, headers });
  }

  /**
   * An event stream (PROTOCOL.md 8): each event is encrypted and signed on its own, under the server's
   * event numbers; the answer's head is signed as a response with an empty body.
   */
  async #sealEventStream(answer: Response, keys: MessageKeys, n: number): Promise<Response> {
    const { signature } = await sealResponse(keys, n, answer.status, '');
    answer.headers.set('secure-counter', String(n));
    answer.headers.set('secure-signature', signature);
    return answer;
  }

  /**
   * A file's bytes (PROTOCOL.md 6.6): raw AES-CTR ciphertext, signed like any body. The signature
   * travels in a header, before the body, so the bytes are read twice: once to compute it, once to
   * send them, each pass streamed (never the whole file in memory).
   */
  async #sealBinary(answer: Response, keys: MessageKeys, n: number): Promise<Response> {
    const head = responseHead(n, answer.status);
    const signing = cipherStream(keys, n, 1, head, false);
    if (answer.body) await answer.body.pipeThrough(signing.transform).pipeTo(new WritableStream());
    const signature = base64.encode(signing.digest());
    const reopened = answer.body ? await binaryReopener(answer)!() : null;
    const headers = answer.headers;
    headers.set('content-type', 'application/octet-stream');
    headers.set('encrypted', 'true');
    headers.set('secure-counter', String(n));
    headers.set('secure-signature', signature);
    headers.set('cache-control', NOT_STORED);
    const body = reopened && reopened.pipeThrough(cipherStream(keys, n, 1, head, false).transform);
    return new Response(body, { status: answer.status, headers });
  }
}

function isEventStream(answer: Answer): answer is Response {
  return answer instanceof Response && answer.headers.get('content-type')?.startsWith('text/event-stream') === true;
}

function isBinaryContentType(value: string | null): boolean {
  return value?.split(';', 1)[0]!.trim().toLowerCase() === 'application/octet-stream';
}
