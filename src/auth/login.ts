import * as v from 'valibot';
import type { ServiceContext } from '../context.js';
import { okReply, type JsonReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import { readJsonObject, type ApiRequest } from '../http/request.js';
import type { Route } from '../http/router.js';
import { parseInput } from '../http/validate.js';
import type { StoredObject } from '../storage/types.js';
import type { PrincipalKind } from './principals.js';
import type { Session, SessionKind } from './sessions.js';

const MAX_CREDENTIAL = 1024;
const credential = (name: string) =>
  v.pipe(v.string(`${name} must be a string`), v.maxLength(MAX_CREDENTIAL, `${name} must be at most ${MAX_CREDENTIAL} characters`));

/** The login body of PROTOCOL.md 2.1; unknown members are ignored. */
export const LoginBodySchema = v.object({
  user: credential('user'),
  pass: credential('pass'),
  appNames: v.union(
    [v.pipe(v.string(), v.transform((name) => [name])), v.array(v.string())],
    'appNames must be an array of strings or a string',
  ),
});
export type LoginBody = v.InferOutput<typeof LoginBodySchema>;

export function parseLoginBody(value: unknown): LoginBody {
  return parseInput(LoginBodySchema, value);
}

/** A login under way: its principal found, its password being verified. */
export interface LoginAttempt {
  /**
   * The database user or custom principal the login names, known while its password is still being
   * verified, so a login can prepare its answer side by side (dropped unless `finish` succeeds).
   */
  candidate: StoredObject | undefined;
  /** Waits for the verification: the principal, or `302` (recorded as a failure) or `306`. */
  finish(): Promise<StoredObject>;
}

/**
 * The credential check every login shares, in its order: the failed-login limit (`303`), then the
 * principal the login names, whose password is verified at a constant cost (also for unknown
 * names) while the caller may prepare its answer, then the licences for the requested applications.
 */
export async function beginLogin(ctx: ServiceContext, body: LoginBody, address: string | undefined, kind: PrincipalKind = 'db'): Promise<LoginAttempt> {
  const admission = await ctx.limiter.admit(body.user, address);
  const { candidate, verified } = await ctx.principals.check(kind, body.user, body.pass);
  return {
    candidate,
    finish: async () => {
      const principal = await verified;
      if (!principal) throw new ApiError('302', 'wrong user name or password'); // its place in the counts stays taken
      await admission.succeeded();
      checkLicences(principal, body.appNames);
      return principal;
    },
  };
}

/** `beginLogin` for callers with nothing to prepare meanwhile. */
export async function authenticate(ctx: ServiceContext, body: LoginBody, address: string | undefined, kind: PrincipalKind = 'db'): Promise<StoredObject> {
  return (await beginLogin(ctx, body, address, kind)).finish();
}

/** Throws `306` unless the principal holds a licence for every requested application. */
export function checkLicences(principal: StoredObject, appNames: readonly string[]): void {
  const licences = principal.fields._licences;
  const held = new Set(Array.isArray(licences) ? licences : []);
  const missing = appNames.find((name) => !held.has(name));
  if (missing !== undefined) throw new ApiError('306', `user holds no licence for application ${JSON.stringify(clip(missing))}`);
}

export interface StartSessionOptions {
  /** Database user (default) or custom-login principal. */
  principalKind?: PrincipalKind;
  /** Per-kind state kept in the session (the secure transport's key and window). */
  extra?: Record<string, unknown>;
  /** A session id from `ctx.sessions.newId()`; a new one by default. */
  id?: string;
}

/** The session a login makes for a principal, not stored yet (`ctx.sessions.save`). */
export function newSession(
  ctx: ServiceContext,
  kind: SessionKind,
  principal: StoredObject,
  login: Pick<LoginBody, 'user' | 'appNames'>,
  { principalKind = 'db', extra, id }: StartSessionOptions = {},
): Session {
  return ctx.sessions.prepare(
    { kind, principalId: principal.id, user: login.user, principal: principalKind, appNames: login.appNames, ...(extra ? { extra } : {}) },
    id,
  );
}

/** The `data` every login answers with. */
export async function loginData(ctx: ServiceContext, principal: StoredObject, session: Session): Promise<Record<string, unknown>> {
  return {
    sessionId: session.id,
    user: await ctx.serializer.object(principal),
    databaseName: ctx.databaseName,
    expiresAt: new Date(session.expiresAt).toISOString(),
  };
}

/** Creates and stores the session for an authenticated principal; returns it with the `data` every login answers with. */
export async function startSession(
  ctx: ServiceContext,
  kind: SessionKind,
  principal: StoredObject,
  login: Pick<LoginBody, 'user' | 'appNames'>,
  options: StartSessionOptions = {},
): Promise<{ session: Session; data: Record<string, unknown> }> {
  const session = newSession(ctx, kind, principal, login, options);
  await ctx.sessions.save(session);
  return { session, data: await loginData(ctx, principal, session) };
}

/** A plain session (`/v1/login`, `/v1/auth/df`, the hybrid `/v2/login`) for a login body of any shape (`400` unless 2.1's). */
export async function sessionLogin(ctx: ServiceContext, json: unknown, address: string | undefined, principalKind: PrincipalKind = 'db'): Promise<Record<string, unknown>> {
  const body = parseLoginBody(json);
  const principal = await authenticate(ctx, body, address, principalKind);
  return (await startSession(ctx, 'session', principal, body, { principalKind })).data;
}

/** The JWT login of `/v2/login` (PROTOCOL.md 2.2): the session's data with a `token` instead of its id. */
export async function tokenLogin(ctx: ServiceContext, json: unknown, address: string | undefined): Promise<JsonReply> {
  const body = parseLoginBody(json);
  const principal = await authenticate(ctx, body, address);
  const { session, data } = await startSession(ctx, 'token', principal, body);
  const { sessionId: _hidden, ...rest } = data;
  const token = await ctx.tokens.sign(body.user, session.id, session.expiresAt, ctx.now());
  return okReply({ token, ...rest });
}

const plainLogin = async (ctx: ServiceContext, request: ApiRequest, kind: PrincipalKind) =>
  okReply(await sessionLogin(ctx, readJsonObject(request), request.clientAddress, kind));

/** The plain logins and logout; `/v2/login` (token and hybrid) is in secure/routes.ts. */
export function loginRoutes(ctx: ServiceContext): Route[] {
  return [
    { method: 'POST', path: '/v1/login', auth: 'none', handler: (request) => plainLogin(ctx, request, 'db') },
    { method: 'POST', path: '/v1/auth/df', auth: 'none', handler: (request) => plainLogin(ctx, request, 'df') },
    {
      method: 'POST',
      path: '/v1/logout',
      auth: 'session',
      batch: false,
      handler: async (request) => {
        await ctx.sessions.delete(request.session!.id);
        return okReply({}, 'logged out');
      },
    },
  ];
}
