import { base64 } from '@scure/base';
import type { Session } from '../auth/sessions.js';
import type { Core, Transport } from '../core.js';
import { readBodyText } from '../http/body.js';
import { errorResponse } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { KeyedLock } from './lock.js';
import { acceptCounter, emptyWindow, type ReplayWindow } from './replay.js';
import { openToken } from './token.js';
import { decryptBody, encryptBody, macKey, parseCounter, requestSignature, responseSignature, signatureMatches } from './transport.js';

/** What a secure-login session keeps in `session.extra`. */
export type SecureSessionState = {
  /** `symmetricKey`: standard base64 of the 32-byte AES-256 key K. */
  key: string;
  window: ReplayWindow;
};

export function newSecureState(key: Uint8Array): SecureSessionState {
  return { key: base64.encode(key), window: emptyWindow() };
}

const encoder = new TextEncoder();
const rejected = (why: string) => new ApiError('205', `secure request rejected: ${why}`);

/** `application/text` (the real client) or `text/plain`, parameters allowed. */
function isSecureContentType(value: string | null): boolean {
  return value !== null && /^(application\/text|text\/plain)\s*(;|$)/i.test(value.trim());
}

/**
 * The secure transport of PROTOCOL.md 4 for requests carrying `Secure-Token`. Failures before the
 * message is accepted (token, signature, counter, body) are thrown and answered unencrypted; once
 * accepted, every answer, errors included, is encrypted and signed under the request's number.
 */
export class SecureTransport implements Transport {
  readonly #locks = new KeyedLock();

  constructor(private readonly core: Core) {}

  claims(headers: Headers): boolean {
    return headers.has('secure-token');
  }

  /** The live secure session a Secure-Token names, or `undefined`. */
  async sessionOf(token: string): Promise<Session | undefined> {
    const tokenKey = this.core.serverKey.current?.tokenKey;
    const id = tokenKey && openToken(tokenKey, token);
    const found = id ? await this.core.sessions.read(id) : undefined;
    return found?.session.kind === 'secure' ? found.session : undefined;
  }

  async handle(request: ApiRequest, next: (request: ApiRequest) => Promise<Response>): Promise<Response> {
    const token = request.headers.get('secure-token')!.trim();
    if (token === '') throw new ApiError('204', 'Secure-Token header is empty');
    const session = await this.sessionOf(token);
    if (!session) throw new ApiError('201', 'secure session invalid, expired or logged out');
    const n = parseCounter(request.headers.get('secure-counter'));
    if (n === undefined) throw rejected('Secure-Counter must be a positive decimal integer');
    const bodyText = await readBodyText(request.raw, this.core.maxBodyBytes).catch((error: unknown) => {
      throw error instanceof ApiError && error.code === '400' ? rejected('body is not base64') : error;
    });

    const state = session.extra as unknown as SecureSessionState;
    const key = base64.decode(state.key);
    const mac = macKey(key);
    const expected = requestSignature(mac, n, request.method, request.target, encoder.encode(bodyText));
    if (!signatureMatches(request.headers.get('secure-signature'), expected)) {
      throw rejected('Secure-Signature does not match (key, counter, method, target or body)');
    }
    const accepted = await this.#accept(session.id, n);
    const plaintext = decryptBody(key, n, 0, bodyText);
    if (plaintext === undefined) throw rejected('body does not decrypt to UTF-8 text');

    let response: Response;
    if (bodyText !== '' && !isSecureContentType(request.headers.get('content-type'))) {
      response = errorResponse(new ApiError('415', 'Content-Type of an encrypted body must be application/text'));
    } else {
      request.bodyText = plaintext;
      request.secure = true;
      request.session = accepted;
      response = await next(request);
    }
    return this.#seal(response, key, mac, n);
  }

  /** Records `n` in the session's replay window, atomically; this also renews the idle timeout. */
  #accept(sessionId: string, n: number): Promise<Session> {
    return this.#locks.run(sessionId, () =>
      this.core.sessions.update(sessionId, (current) => {
        const state = current.extra as unknown as SecureSessionState;
        const result = acceptCounter(state.window, n);
        if ('refused' in result) {
          throw rejected(result.refused === 'replayed' ? `Secure-Counter ${n} was already used` : `Secure-Counter ${n} is below the replay window`);
        }
        return { ...current, extra: { ...state, window: result.window } };
      }),
    );
  }

  async #seal(response: Response, key: Uint8Array, mac: Uint8Array, n: number): Promise<Response> {
    const body = encryptBody(key, n, 1, await response.text());
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    headers.set('content-type', 'application/text');
    headers.set('encrypted', 'true');
    headers.set('secure-counter', String(n));
    headers.set('secure-signature', base64.encode(responseSignature(mac, n, response.status, encoder.encode(body))));
    return new Response(body === '' ? null : body, { status: response.status, headers });
  }
}
