import type { AuthContext } from './context.js';
import { ApiError } from '../http/errors.js';
import { andThen, type MaybePromise } from '../maybe.js';
import type { ApiRequest } from '../http/request.js';
import type { Route } from '../http/router.js';
import type { Session } from './sessions.js';

/** The secure transport's sessions: a Secure-Token sent as `sessionId` is refused with `205`, not `201`. */
export interface SecureSessions {
  sessionOf(token: string): Promise<Session | undefined>;
}

/**
 * Finds the session a request's credential names (PROTOCOL.md 2.3): `Authorization` for token
 * sessions, `sessionId` for plain ones; each renews the idle timeout. A credential used for another
 * kind of session is refused, a Secure-Token sent as `sessionId` with `205`. (Secure requests arrive
 * with their session already set by the secure transport.)
 */
export function sessionOf(ctx: AuthContext, secure: SecureSessions, request: ApiRequest): MaybePromise<Session> {
  const authorization = request.headers.get('authorization');
  const sessionId = request.headers.get('sessionid')?.trim();
  if (authorization) return tokenSession(ctx, authorization);
  if (sessionId) return andThen(ctx.sessions.touchNow(sessionId), (session) => plainSession(secure, sessionId, session));
  throw new ApiError('204', 'no session credential sent (sessionId, Authorization or Secure-Token header)');
}

async function tokenSession(ctx: AuthContext, authorization: string): Promise<Session> {
  const token = authorization.replace(/^Bearer\s+/i, '').trim();
  const sid = await ctx.tokens.verify(token, ctx.now());
  const session = sid === undefined ? undefined : await ctx.sessions.touch(sid);
  if (!session || session.kind !== 'token') throw new ApiError('201', 'token invalid, expired or logged out');
  return session;
}

/** The session a `sessionId` names, found (or not) by `touchNow`: a plain one, else the refusal. */
function plainSession(secureSessions: SecureSessions, sessionId: string, session: Session | undefined): MaybePromise<Session> {
  if (session?.kind === 'session') return session;
  if (session?.kind === 'secure') throw secureOnly();
  if (session) throw invalid();
  return secureSessions.sessionOf(sessionId).then((secure) => {
    throw secure ? secureOnly() : invalid();
  });
}

const secureOnly = () => new ApiError('205', 'this session accepts only secure requests');
// exactly this text: the C# sample looks for it (PROTOCOL.md 1.4)
const invalid = () => new ApiError('201', 'Session is invalid');

/**
 * The session a route with `auth` other than `none` admits: the request's (already set by the secure
 * transport, or found by `sessionOf`), unless it is the `340` session outside `/v1/2fa/*` and logout
 * (`403`), or a macro-only session on an object route (`307`). Answered without a promise when the
 * session is at hand.
 */
export function authorize(ctx: AuthContext, secure: SecureSessions, request: ApiRequest, route: Pick<Route, 'auth' | 'twoFactorSetup'>): MaybePromise<Session> {
  return andThen(request.session ?? sessionOf(ctx, secure, request), (session) => admitted(session, route));
}

function admitted(session: Session, route: Pick<Route, 'auth' | 'twoFactorSetup'>): Session {
  if (session.twoFactorSetupOnly && !route.twoFactorSetup) {
    throw new ApiError('403', 'this session may only set up two-factor login (/v1/2fa/*) and log out; log in again once it is set up');
  }
  if (route.auth === 'objects' && session.appNames.length === 0) {
    throw new ApiError('307', 'this session logged in without appNames and may only execute macros');
  }
  return session;
}
