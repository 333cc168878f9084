import * as v from 'valibot';
import type { LoginContext } from './context.js';
import { okReply, type JsonReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { route } from '../http/router.js';
import { parseInput } from '../http/validate.js';
import type { StoredObject } from '../storage/types.js';
import { deviceIdOf, loginAcls } from './acls.js';
import type { Admission } from './login-limit.js';
import type { PrincipalKind, Principals } from './principals.js';
import { readLicences } from './seats.js';
import type { Session, SessionClient, SessionKind } from './sessions.js';
import type { LoginData, ServedData, TokenLoginData } from '../openapi/schemas.js';
import { LOGIN, LoginBodySchema } from './login-contract.js';

export type LoginBody = v.InferOutput<typeof LoginBodySchema>;

/** A login JSON that arrived inside another (the decrypted credentials of the secure and hybrid logins). */
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
  /**
   * Waits for the verification: the principal, or `302` (recorded as a failure) or `306`. After a
   * second factor it is the record read again, no longer `candidate`.
   */
  finish(): Promise<StoredObject>;
}

/**
 * The credential check every login shares, in its order (PROTOCOL.md 2.4, 2.6, 2.7): the failed-login
 * limit (`303`), then the principal the login names, whose password is verified at a constant cost
 * (also for unknown names) while the caller may prepare its answer, then the second factor, then the
 * licences for the requested applications, then a `forced` application without a second factor.
 */
export async function beginLogin(ctx: LoginContext, body: LoginBody, address: string | undefined, kind: PrincipalKind = 'db'): Promise<LoginAttempt> {
  const admission = await ctx.limiter.admit(body.user, address);
  let check: Awaited<ReturnType<Principals['check']>>;
  try {
    check = await ctx.principals.check(kind, body.user, body.pass);
  } catch (error) {
    await admission.withdrawn();
    throw error;
  }
  return {
    candidate: check.candidate,
    finish: async () => {
      let principal: StoredObject | undefined;
      try {
        principal = await check.verified;
        if (!principal) throw wrongCredentials();
        const requirement = ctx.twoFactor.requirement(body.appNames, principal);
        if (requirement === 'code') principal = await checkSecondFactor(ctx, principal, body['2faToken'], admission);
        await admission.succeeded();
        checkLicences(principal, body.appNames);
        if (requirement === 'enrol') throw await setupOnlyRefusal(ctx, principal, body, kind);
        return principal;
      } catch (error) {
        // a wrong password or code is a failure; anything else ends the attempt without a verdict (a no-op once it succeeded)
        const failure = error instanceof ApiError && (error.code === '302' || error.code === '342');
        await (failure ? admission.failed() : admission.withdrawn());
        throw error;
      }
    },
  };
}

/**
 * `341` without a code (the caller withdraws the attempt), `342` for a wrong one (a failure of the
 * user, and of its second factor: PROTOCOL.md 2.4). A code is checked only with a place in the
 * user's second-factor count (`303` when wrong codes filled it). An accepted code is used up in the
 * principal's record, so the principal is read again: the login answers the record as it is now
 * stored (its `~StoreTime` included).
 */
async function checkSecondFactor(ctx: LoginContext, principal: StoredObject, token: string | null | undefined, admission: Admission): Promise<StoredObject> {
  if (!token) {
    throw new ApiError('341', 'two-factor login is on for this user: send the code of the authenticator app (or a backup code) as 2faToken');
  }
  const codeCheck = await admission.secondFactor();
  let right: boolean;
  try {
    right = await ctx.twoFactor.codes.verify(principal, token);
  } catch (error) {
    await codeCheck.withdrawn();
    throw error;
  }
  if (!right) {
    await codeCheck.failed();
    throw new ApiError('342', 'the two-factor code is wrong, expired or already used');
  }
  await codeCheck.verified();
  return (await ctx.store.get(principal.id)) ?? principal;
}

/** The `340` answer: a stored session that may only set up two-factor login and log out, in `data.sessionId`. */
async function setupOnlyRefusal(ctx: LoginContext, principal: StoredObject, body: LoginBody, principalKind: PrincipalKind): Promise<ApiError> {
  const session = newSession(ctx, 'session', principal, { user: body.user, appNames: [] }, { principalKind, twoFactorSetupOnly: true });
  await ctx.sessions.save(session);
  const app = JSON.stringify(clip(ctx.twoFactor.forcedApp(body.appNames) ?? ''));
  return new ApiError(
    '340',
    `application ${app} requires two-factor login and this user has not set it up: use the session in data.sessionId with /v1/2fa/secret, then log in again`,
    { data: { sessionId: session.id } },
  );
}

/** `beginLogin` for callers with nothing to prepare meanwhile. */
export async function authenticate(ctx: LoginContext, body: LoginBody, address: string | undefined, kind: PrincipalKind = 'db'): Promise<StoredObject> {
  return (await beginLogin(ctx, body, address, kind)).finish();
}

/** Throws `306` unless the principal holds a licence for every requested application; answers its licences (PROTOCOL.md 2.7). */
export function checkLicences(principal: StoredObject, appNames: readonly string[]): Map<string, number | undefined> {
  const held = readLicences(principal.fields._licences);
  const missing = appNames.find((name) => !held.has(name));
  if (missing !== undefined) throw new ApiError('306', `user holds no licence for application ${JSON.stringify(clip(missing))}`);
  return held;
}

export interface StartSessionOptions {
  /** Database user (default) or custom-login principal. */
  principalKind?: PrincipalKind;
  /** Per-kind state kept in the session (the secure transport's key). */
  extra?: Record<string, unknown>;
  /** A session id from `ctx.sessions.newId()`; a new one by default. */
  id?: string;
  /** The `340` session, limited to `/v1/2fa/*` and logout. */
  twoFactorSetupOnly?: boolean;
  /** Where the login came from (`sessionClient`), shown in the user's list of sessions. */
  client?: SessionClient;
}

/** Largest `device` member kept for the list of sessions (serialized); a larger one is shown as null. */
const MAX_DEVICE = 1024;

/** The address and the `device` member (PROTOCOL.md 2.1 ignores it otherwise) of a login body, for `StartSessionOptions.client`. */
export function sessionClient(body: unknown, address: string | undefined): SessionClient {
  const device = typeof body === 'object' && body !== null ? (body as { device?: unknown }).device : undefined;
  const kept = device === undefined ? null : JSON.stringify(device).length <= MAX_DEVICE ? device : null;
  return { address: address ?? null, device: kept };
}

/** The session a login makes for a principal, not stored yet (`ctx.sessions.save`). */
export function newSession(
  ctx: LoginContext,
  kind: SessionKind,
  principal: StoredObject,
  login: Pick<LoginBody, 'user' | 'appNames'>,
  { principalKind = 'db', extra, id, twoFactorSetupOnly, client }: StartSessionOptions = {},
): Session {
  return ctx.sessions.prepare(
    {
      kind,
      principalId: principal.id,
      user: login.user,
      principal: principalKind,
      appNames: login.appNames,
      ...(extra ? { extra } : {}),
      ...(twoFactorSetupOnly ? { twoFactorSetupOnly: true } : {}),
      ...(client ? { client } : {}),
    },
    id,
  );
}

/**
 * Stores a login's session, then takes its licence seats (PROTOCOL.md 2.7): one of each requested
 * application whose licence has a seat count. One seat too many is `101`: nothing is taken and the
 * session is removed again. (The seats are taken after the session is stored, because a seat whose
 * session cannot be found is free for others.)
 */
export async function openSession(ctx: LoginContext, session: Session, principal: StoredObject): Promise<void> {
  await ctx.sessions.save(session);
  const held = readLicences(principal.fields._licences);
  const requests = session.appNames.map((app) => ({ app, parallel: held.get(app) }));
  try {
    await ctx.seats.take(principal.id, requests, session, (id) => ctx.sessions.isLive(id));
  } catch (error) {
    await ctx.sessions.delete(session.id);
    throw error;
  }
}

/**
 * The `data` every login answers with. The user is serialized as the new session may read it (the
 * access rules, PROTOCOL.md 6.4), like any object it reads later: a reference it may not read keeps
 * only its metadata.
 */
export async function loginData(ctx: LoginContext, principal: StoredObject, session: Session, deviceId: string | null = null): Promise<LoginData> {
  const guard = ctx.access.guard(session, () => ctx.macroContext(undefined, session));
  return {
    sessionId: session.id,
    // a serialized object always holds its ~ObjectID
    user: (await ctx.serializer.object(principal, guard)) as ServedData,
    databaseName: ctx.databaseName,
    expiresAt: new Date(session.expiresAt).toISOString(),
    acls: loginAcls(principal, session.user, session.appNames, deviceId),
  };
}

/** A wrong user name or password, and a disabled user, which must not be told apart (PROTOCOL.md 2.8). */
const wrongCredentials = () => new ApiError('302', 'wrong user name or password');

/** Creates and stores the session for an authenticated principal and takes its seats; returns it with the `data` every login answers with. */
export async function startSession(
  ctx: LoginContext,
  kind: SessionKind,
  principal: StoredObject,
  login: Pick<LoginBody, 'user' | 'appNames'>,
  options: StartSessionOptions = {},
): Promise<{ session: Session; data: LoginData }> {
  // every login kind ends here (password, external identity, passkey, default user): a disabled user's is refused as a wrong password is (PROTOCOL.md 2.8)
  if (principal.fields._disabled === true) throw wrongCredentials();
  const session = newSession(ctx, kind, principal, login, options);
  await openSession(ctx, session, principal);
  return { session, data: await loginData(ctx, principal, session, deviceIdOf(login)) };
}

/** A plain session (`/v1/login`, `/v1/auth/df`, the hybrid `/v2/login`) for a login body of any shape (`400` unless 2.1's). */
export async function sessionLogin(ctx: LoginContext, body: LoginBody, address: string | undefined, principalKind: PrincipalKind = 'db'): Promise<LoginData> {
  const principal = await authenticate(ctx, body, address, principalKind);
  return (await startSession(ctx, 'session', principal, body, { principalKind, client: sessionClient(body, address) })).data;
}

/** The JWT login of `/v2/login` (PROTOCOL.md 2.2): the session's data with a `token` instead of its id. */
export async function tokenLogin(ctx: LoginContext, body: LoginBody, address: string | undefined): Promise<JsonReply<TokenLoginData>> {
  const principal = await authenticate(ctx, body, address);
  const { session, data } = await startSession(ctx, 'token', principal, body, { client: sessionClient(body, address) });
  const { sessionId: _hidden, ...rest } = data;
  const token = await ctx.tokens.sign(body.user, session.id, session.expiresAt, ctx.now());
  return okReply({ token, ...rest });
}

const plainLogin = async (ctx: LoginContext, request: ApiRequest, body: LoginBody, kind: PrincipalKind) => okReply(await sessionLogin(ctx, body, request.clientAddress, kind));

/** What `data` of a login's answer holds (PROTOCOL.md 2.2). */
export const LOGIN_ANSWER = 'sessionId, user (the serialized user object), databaseName, expiresAt and acls (one licence entry per application)';

/** The plain logins and logout; `/v2/login` (token and hybrid) is in secure/routes.ts. */
export function loginRoutes(ctx: LoginContext) {
  return [
    route({
      ...LOGIN.postLogin,
      auth: 'none',
      summary: 'Logs a database user in: a plain session, used with the sessionId header',
      examples: { body: { user: 'alice', pass: '3092480224001c66a3170bdd19af3b61', appNames: ['crm'] } },
      answer: LOGIN_ANSWER,
      errors: ['101', '302', '303', '306', '340', '341', '342'],
      handler: (request, { body }) => plainLogin(ctx, request, body, 'db'),
    }),
    route({
      ...LOGIN.postAuthDf,
      auth: 'none',
      summary: 'Logs in a principal that is not a database user (custom login): a plain session',
      examples: { body: { user: 'carol', pass: 'c0613281add3b771af7636bdd5995b9f', appNames: 'crm' }, answer: { sessionId: 'Qm9uZ0p1c3RBbkV4YW1wbGU', user: { '~ClassName': 'ContactPerson', '~ObjectID': 'CON00001', '~StoreTime': '20261121T055408+00:00', Name: 'carol', Name1: 'Carol', Name2: 'Meyer', Name3: 'Front office', Bild: { '~ClassName': 'Bild', '~ObjectID': 'IMG00003', '~StoreTime': '20261121T055408+00:00' } }, databaseName: 'demo', expiresAt: '2026-11-21T17:54:08.000Z', acls: { '~Count': 1, '~Elements': [{ Oid: 'CON00001:crm', Status: 0, UserName: 'carol', DeviceID: null, LicenseKey: 'crm', LicenseLevel: null, ParallelConnections: 0, TFAActivated: false, TFAConfirmed: false, Application: 'crm', AddOns: { '~Count': 0, '~Elements': [] } }] } } },
      answer: LOGIN_ANSWER,
      errors: ['101', '302', '303', '306', '340', '341', '342'],
      handler: (request, { body }) => plainLogin(ctx, request, body, 'df'),
    }),
    route({
      ...LOGIN.postLogout,
      auth: 'session',
      summary: 'Ends the session the credential names (any of the three kinds)',
      answer: 'nothing ({})',
      batch: false,
      twoFactorSetup: true,
      handler: async (request) => {
        const session = request.session!;
        await ctx.sessions.delete(session.id);
        await ctx.seats.release(session.principalId, session.id);
        return okReply({}, 'logged out');
      },
    }),
  ];
}
