import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import type { Session, SessionStore } from './sessions.js';
import type { TokenSigner } from './jwt.js';

/**
 * Finds the session a request's credential names (PROTOCOL.md 2.3): `Authorization` for token
 * sessions, `sessionId` for plain ones. A credential used for another kind of session is refused;
 * `secureSession` recognizes a Secure-Token sent as `sessionId` (answered `205`).
 */
export async function sessionFromHeaders(
  request: ApiRequest,
  sessions: SessionStore,
  tokens: TokenSigner,
  now: number,
  secureSession: (token: string) => Promise<Session | undefined>,
): Promise<Session> {
  const authorization = request.headers.get('authorization');
  const sessionId = request.headers.get('sessionid');
  if (authorization) {
    const token = authorization.replace(/^Bearer\s+/i, '').trim();
    const sid = await tokens.verify(token, now);
    const session = sid === undefined ? undefined : await sessions.touch(sid);
    if (!session || session.kind !== 'token') throw new ApiError('201', 'token invalid, expired or logged out');
    return session;
  }
  if (sessionId) {
    const session = await sessions.touch(sessionId.trim());
    if (session?.kind === 'secure' || (!session && (await secureSession(sessionId.trim())))) {
      throw new ApiError('205', 'this session accepts only secure requests');
    }
    if (!session || session.kind !== 'session') throw new ApiError('201', 'session invalid, expired or logged out');
    return session;
  }
  throw new ApiError('204', 'no session credential sent (sessionId, Authorization or Secure-Token header)');
}
