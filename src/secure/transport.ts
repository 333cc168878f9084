import { base64 } from '@scure/base';
import type { LRUCache } from 'lru-cache';
import { lruCache } from '../caches.js';
import type { Session } from '../auth/sessions.js';
import type { ServiceContext } from '../context.js';
import { isSecureContentType, readBodyText } from '../http/body.js';
import { answerText, errorReply, type Answer } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import type { SecureSessionState } from './replay.js';
import { openToken } from './token.js';
import { WindowUpdates } from './window-updates.js';
import { gone, rejected } from './refusals.js';
import {
  decryptBody,
  messageKeys,
  parseCounter,
  requestSignature,
  sealResponse,
  signatureMatches,
  type MessageKeys,
} from './messages.js';

const encoder = new TextEncoder();

/**
 * The secure transport of PROTOCOL.md 4 for requests carrying `Secure-Token`. Failures before the
 * message is accepted (token, signature, counter, body) are thrown and answered unencrypted; once
 * accepted, every answer, errors included, is encrypted and signed under the request's number.
 */
export class SecureTransport {
  /**
   * Opening a token and preparing its keys are pure and cost as much as the rest of a small request.
   * A token's opening is kept as its promise, so concurrent first requests of a session share one
   * opening and go on together, in order; a token that names no session is not kept.
   */
  readonly #sessionIds: LRUCache<string, Promise<string | undefined>>;
  readonly #keys: LRUCache<string, MessageKeys>;
  readonly #windows: WindowUpdates;

  /** `cacheSize`: sessions whose opened token and prepared keys are kept in this process (the state stays in the store). */
  constructor(
    private readonly ctx: ServiceContext,
    cacheSize: number,
  ) {
    this.#sessionIds = lruCache(cacheSize);
    this.#keys = lruCache(cacheSize);
    this.#windows = new WindowUpdates(ctx.sessions);
  }

  claims(headers: Headers): boolean {
    return headers.has('secure-token');
  }

  /** The session id sealed in a Secure-Token, or `undefined` for a token this service did not issue. */
  #sessionIdOf(token: string): Promise<string | undefined> {
    const cached = this.#sessionIds.get(token);
    if (cached) return cached;
    const tokenKey = this.ctx.serverKey.current?.tokenKey;
    if (!tokenKey) return Promise.resolve(undefined);
    const opening = openToken(tokenKey, token).then((id) => {
      if (id === undefined && this.#sessionIds.peek(token) === opening) this.#sessionIds.delete(token);
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

  async handle(request: ApiRequest, next: (request: ApiRequest) => Promise<Answer>): Promise<Response> {
    const token = request.headers.get('secure-token')!.trim();
    if (token === '') throw new ApiError('204', 'Secure-Token header is empty');
    const id = await this.#sessionIdOf(token);
    // A session's key never changes, so known keys spare a store read; the window update below reads it anyway.
    const keys = id === undefined ? undefined : (this.#keys.get(id) ?? (await this.#loadKeys(token)));
    if (id === undefined || keys === undefined) throw gone();
    const n = parseCounter(request.headers.get('secure-counter'));
    if (n === undefined) throw rejected('Secure-Counter must be a positive decimal integer');
    const bodyText = await readBodyText(request.raw, this.ctx.maxBodyBytes).catch((error: unknown) => {
      throw error instanceof ApiError && error.code === '400' ? rejected('body is not base64') : error;
    });

    const expected = requestSignature(keys, n, request.method, request.target, encoder.encode(bodyText));
    if (!signatureMatches(request.headers.get('secure-signature'), expected)) {
      if (!(await this.sessionOf(token))) throw gone();
      throw rejected('Secure-Signature does not match (key, counter, method, target or body)');
    }
    const session = await this.#windows.accept(id, n); // also renews the idle timeout
    const plaintext = await decryptBody(keys, n, 0, bodyText);
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
    return this.#seal(answer, keys, n);
  }

  async #loadKeys(token: string): Promise<MessageKeys | undefined> {
    const session = await this.sessionOf(token);
    if (!session) return undefined;
    const keys = messageKeys(base64.decode((session.extra as SecureSessionState).key), this.ctx.symmetricCrypto);
    this.#keys.set(session.id, keys);
    return keys;
  }

  /** The one `Response` of an accepted message: the answer encrypted and signed under its number, its other headers kept. */
  async #seal(answer: Answer, keys: MessageKeys, n: number): Promise<Response> {
    const { body, signature } = await sealResponse(keys, n, answer.status, await answerText(answer));
    const sealing = { 'content-type': 'application/text', encrypted: 'true', 'secure-counter': String(n), 'secure-signature': signature };
    const payload = body.length === 0 ? null : body;
    if (!(answer instanceof Response)) return new Response(payload, { status: answer.status, headers: { ...answer.headers, ...sealing } });
    // a route's own Response: its headers are kept, its framing and type replaced
    const headers = answer.headers;
    headers.delete('content-length');
    for (const [name, value] of Object.entries(sealing)) headers.set(name, value);
    return new Response(payload, { status: answer.status, headers });
  }
}
