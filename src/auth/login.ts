import * as v from 'valibot';
import type { Core } from '../core.js';
import { okReply, type JsonReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import { readJsonObject, type ApiRequest } from '../http/request.js';
import type { Route } from '../http/router.js';
import { parseInput } from '../http/validate.js';
import type { StoredObject } from '../storage/types.js';
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

/** Which kind of principal a login checks. */
export type PrincipalKind = 'db' | 'df';

/**
 * Called with the database user a login names as soon as it is found, while its password is still
 * being checked, so a login can prepare its answer meanwhile; the work is dropped if the check fails.
 */
export type WhileChecking = (candidate: StoredObject) => void;

/**
 * The credential check every login shares: failed-login limits, a constant-cost password check
 * (also for unknown users), then the licences for the requested applications. `whileChecking` is
 * called for database users only, so the overloads allow it only with them.
 */
export async function authenticate(core: Core, body: LoginBody, address: string | undefined, kind?: 'db', whileChecking?: WhileChecking): Promise<StoredObject>;
export async function authenticate(core: Core, body: LoginBody, address: string | undefined, kind: PrincipalKind): Promise<StoredObject>;
export async function authenticate(
  core: Core,
  body: LoginBody,
  address: string | undefined,
  kind: PrincipalKind = 'db',
  whileChecking?: WhileChecking,
): Promise<StoredObject> {
  await core.limiter.check(body.user, address);
  const principal =
    kind === 'db' ? await core.checkDatabaseUser(body.user, body.pass, whileChecking) : await core.checkCustomUser(body.user, body.pass);
  if (!principal) {
    await core.limiter.recordFailure(body.user, address);
    throw new ApiError('302', 'wrong user name or password');
  }
  await core.limiter.recordSuccess(body.user);
  checkLicences(principal, body.appNames);
  return principal;
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
  /** A session id from `core.sessions.newId()`; a new one by default. */
  id?: string;
}

/** The session a login makes for a principal, not stored yet (`core.sessions.save`). */
export function newSession(
  core: Core,
  kind: SessionKind,
  principal: StoredObject,
  login: Pick<LoginBody, 'user' | 'appNames'>,
  { principalKind = 'db', extra, id }: StartSessionOptions = {},
): Session {
  return core.sessions.prepare(
    { kind, principalId: principal.id, user: login.user, principal: principalKind, appNames: login.appNames, ...(extra ? { extra } : {}) },
    id,
  );
}

/** The `data` every login answers with. */
export async function loginData(core: Core, principal: StoredObject, session: Session): Promise<Record<string, unknown>> {
  return {
    sessionId: session.id,
    user: await core.serializer.object(principal),
    databaseName: core.databaseName,
    expiresAt: new Date(session.expiresAt).toISOString(),
  };
}

/** Creates and stores the session for an authenticated principal; returns it with the `data` every login answers with. */
export async function startSession(
  core: Core,
  kind: SessionKind,
  principal: StoredObject,
  login: Pick<LoginBody, 'user' | 'appNames'>,
  options: StartSessionOptions = {},
): Promise<{ session: Session; data: Record<string, unknown> }> {
  const session = newSession(core, kind, principal, login, options);
  await core.sessions.save(session);
  return { session, data: await loginData(core, principal, session) };
}

async function plainLogin(core: Core, request: ApiRequest, principalKind: PrincipalKind): Promise<JsonReply> {
  const body = parseLoginBody(readJsonObject(request));
  const principal = await authenticate(core, body, request.clientAddress, principalKind);
  const { data } = await startSession(core, 'session', principal, body, { principalKind });
  return okReply(data);
}

export function loginRoutes(core: Core): Route[] {
  return [
    { method: 'POST', path: '/v1/login', auth: 'none', handler: (request) => plainLogin(core, request, 'db') },
    { method: 'POST', path: '/v1/auth/df', auth: 'none', handler: (request) => plainLogin(core, request, 'df') },
    {
      method: 'POST',
      path: '/v2/login',
      auth: 'none',
      handler: async (request) => {
        const body = parseLoginBody(readJsonObject(request));
        const principal = await authenticate(core, body, request.clientAddress);
        const { session, data } = await startSession(core, 'token', principal, body);
        const { sessionId: _hidden, ...rest } = data;
        const token = await core.tokens.sign(body.user, session.id, session.expiresAt, core.now());
        return okReply({ token, ...rest });
      },
    },
    {
      method: 'POST',
      path: '/v1/logout',
      auth: 'session',
      handler: async (request) => {
        await core.sessions.delete(request.session!.id);
        return okReply({}, 'logged out');
      },
    },
  ];
}
