import { SignJWT, jwtVerify } from 'jose';

/** HS256 tokens for `/v2/login` (PROTOCOL.md 2.3), through jose. */
export class TokenSigner {
  readonly #key: Uint8Array;

  constructor(secret: string | Uint8Array | undefined) {
    this.#key = typeof secret === 'string' ? new TextEncoder().encode(secret) : (secret ?? crypto.getRandomValues(new Uint8Array(32)));
    if (this.#key.length < 32) throw new Error('jwtSecret must be at least 32 bytes');
  }

  sign(user: string, sessionId: string, expiresAt: number, now: number): Promise<string> {
    return new SignJWT({ sid: sessionId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user)
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor(expiresAt / 1000))
      .sign(this.#key);
  }

  /** The session id of a valid token, or `undefined` for anything else (bad alg, signature, expiry). */
  async verify(token: string, now: number): Promise<string | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: ['HS256'],
        currentDate: new Date(now),
        requiredClaims: ['sub', 'sid', 'exp', 'iat'],
      });
      return typeof payload.sid === 'string' ? payload.sid : undefined;
    } catch {
      return undefined;
    }
  }
}
