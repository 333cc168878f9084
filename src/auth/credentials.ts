import type { ServiceContext } from '../context.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import type { Session } from './sessions.js';

/**
 * Finds the session a request's credential names (PROTOCOL.md 2.3): `Authorization` for token
 * sessions, `sessionId` for plain ones; each renews the idle timeout. A credential used for another
 * kind of session is refused, a Secure-Token sent as `sessionId` with `205`. (Secure requests arrive
 * with their session already set by the secure transport.)
 */
export async function sessionOf(ctx: ServiceContext, request: ApiRequest): Promise<Session> {
  const authorization = request.headers.get('authorization');
  const sessionId = request.headers.get('sessionid')?.trim();
  if (authorization) {
    const token = authorization.replace(/^Bearer\s+/i, '').trim();
    const sid = await ctx.tokens.verify(token, ctx.now());
    const session = sid === undefined ? undefined : await ctx.sessions.touch(sid);
    if (!session || session.kind !== 'token') throw new ApiError('201', 'token invalid, expired or logged out');
    return session;
  }
  if (sessionId) {
    const session = await ctx.sessions.touch(sessionId);
    if (session?.kind === 'secure' || (!session && (await ctx.secureSessionOf(sessionId)))) {
      throw new ApiError('205', 'this session accepts only secure requests');
    }
    if (!session || session.kind !== 'session') throw new ApiError('201', 'session invalid, expired or logged out');
    return session;
  }
  throw new ApiError('204', 'no session credential sent (sessionId, Authorization or Secure-Token header)');
}
