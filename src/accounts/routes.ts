import * as v from 'valibot';
import { verifyPassword } from '../auth/passwords.js';
import type { Session } from '../auth/sessions.js';
import type { AuthContext } from '../auth/context.js';
import { okReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { route } from '../http/router.js';
import { DEFAULT_PER_PAGE, formatStoreTime } from '../objects/read/index.js';
import { TWO_FACTOR_FIELD } from '../auth/two-factor.js';
import { isSet, type StoredObject } from '../storage/types.js';
import { kvKeys } from '../storage/keys.js';
import type { AccountUserOptions, PasswordResetDelivery } from './options.js';
import { resetAddress, resetMail } from './reset-mail.js';
import { storedPasskeys } from './passkeys.js';
import { PasswordResets } from './password-reset.js';
import { sessionHandle, UserSessions } from './user-sessions.js';
import { passValue, UserAccounts } from './users.js';
import { ACCOUNTS, BAD_RESET_TOKEN, PasswordChangeSchema, ResetRequestSchema, ResetConfirmSchema, NewUserBody, UserChangeBody, SessionParams, UserParams, UserQuerySchema, UserListQuerySchema } from './contract.js';

/** Reset requests per user name and per address within the hour (PROTOCOL.md 2.8). */
const RESETS_PER_USER = 3;
const RESETS_PER_ADDRESS = 20;
const RESET_WINDOW_MS = 3_600_000;


/** What the account routes stand on, made once per service. */
export interface Accounts {
  users: UserAccounts;
  sessions: UserSessions;
  resets: PasswordResets;
  options: AccountUserOptions;
}

export function accounts(ctx: AuthContext, options: AccountUserOptions & { className?: string; passwordIterations?: number } = {}): Accounts {
  const sessions = new UserSessions(ctx.sessions, ctx.seats);
  return { users: new UserAccounts(ctx.store, sessions, options), sessions, resets: new PasswordResets(ctx.kv, ctx.now), options };
}

/** The session's own database user as stored; `201` when it is gone. */
async function ownUser(ctx: AuthContext, session: Session): Promise<StoredObject> {
  if (session.principal !== 'db') throw new ApiError('403', 'only database users have an account here (a custom-login principal belongs to the host)');
  const user = await ctx.store.get(session.principalId);
  if (!user) throw new ApiError('201', 'the user of this session no longer exists');
  return user;
}

/** One request counted against a limit of the reset requests; `429` with `Retry-After` beyond it. */
async function countReset(ctx: AuthContext, key: string, limit: number): Promise<void> {
  if ((await ctx.kv.increment(key, RESET_WINDOW_MS)) <= limit) return;
  const seconds = Math.max(1, Math.ceil((await ctx.kv.ttl(key)) / 1000));
  throw new ApiError('429', `too many password reset requests, try again in ${seconds} seconds`, { headers: { 'retry-after': String(seconds) } });
}

type Body<S extends v.GenericSchema> = { body: v.InferOutput<S> };
type Query<S extends v.GenericSchema> = { query: v.InferOutput<S> };
type Params<S extends v.GenericSchema> = { params: v.InferOutput<S> };

async function changePassword(ctx: AuthContext, acc: Accounts, request: ApiRequest, { body }: Body<typeof PasswordChangeSchema>) {
  const session = request.session!;
  const user = await ownUser(ctx, session);
  await acc.users.checkPolicy(body.newPass, String(user.fields.Name ?? session.user));
  const admission = await ctx.limiter.admit(session.user, request.clientAddress);
  const stored = user.fields._passwordHash;
  // the current password's check and the new one's hash run side by side: the change waits for one slow hash
  let matches: boolean;
  let hash: string;
  try {
    [matches, hash] = await Promise.all([typeof stored === 'string' ? verifyPassword(passValue(body.pass), stored) : false, acc.users.hash(body.newPass)]);
  } catch (error) {
    await admission.withdrawn();
    throw error;
  }
  if (!matches) {
    await admission.failed(); // a wrong current password counts as a failed login (PROTOCOL.md 2.8)
    throw new ApiError('302', 'the current password (pass) is wrong');
  }
  await admission.succeeded();
  await acc.users.setPasswordHash(user, hash, session.id);
  return okReply({}, 'password changed; every other session of this user has ended');
}

async function requestReset(ctx: AuthContext, acc: Accounts, request: ApiRequest, { body: { user: name } }: Body<typeof ResetRequestSchema>) {
  // counted for every name, known or not, before any work: the limits tell nothing about the user
  if (request.clientAddress !== undefined) await countReset(ctx, kvKeys.resetsOfAddress(request.clientAddress), RESETS_PER_ADDRESS);
  await countReset(ctx, kvKeys.resetsOfUser(name), RESETS_PER_USER);
  const user = await acc.users.find(name);
  const send = user && user.fields._disabled !== true ? resetDelivery(ctx, acc, user, request.exchange?.requestId) : undefined;
  // an unknown user gets a token for nobody: the same writes, the same time
  const { token, expiresAt } = await acc.resets.issue(send ? user!.id : undefined);
  if (send) {
    const delivery = { user: { id: user!.id, name: String(user!.fields.Name ?? name), fields: user!.fields }, token, expiresAt: new Date(expiresAt) };
    // delivered after the answer, never awaited by it, so that its time never tells that the user exists
    setTimeout(() => void Promise.resolve().then(() => send(delivery)).catch((error: unknown) => ctx.onError(error, { requestId: request.exchange?.requestId })), 0);
  }
  return okReply({}, 'if this user exists and can be reached, a reset token is on its way');
}

/**
 * How a reset token reaches `user`: the host's `users.sendPasswordReset`, or else (PROTOCOL.md 2.8)
 * with `mail` and its `resetLink` configured, a mail to the user's `Email`; `undefined` when neither can.
 */
function resetDelivery(ctx: AuthContext, acc: Accounts, user: StoredObject, requestId: string | undefined): ((delivery: PasswordResetDelivery) => unknown) | undefined {
  const send = acc.options.sendPasswordReset;
  if (send) return send;
  const template = ctx.mail.options?.resetLink;
  const to = resetAddress(user.fields);
  if (template === undefined || to === undefined) return undefined;
  return (delivery) => ctx.mail.deliver(resetMail(delivery, to, template, ctx.now()), requestId);
}

async function confirmReset(ctx: AuthContext, acc: Accounts, _request: ApiRequest, { body: { token, newPass } }: Body<typeof ResetConfirmSchema>) {
  const pending = await acc.resets.peek(token);
  const user = pending && (await ctx.store.get(pending.principalId));
  if (!pending || !user) throw new ApiError('400', BAD_RESET_TOKEN);
  await acc.users.checkPolicy(newPass, String(user.fields.Name ?? '')); // a refused password leaves the token valid
  if (!(await acc.resets.take(pending))) throw new ApiError('400', BAD_RESET_TOKEN);
  await acc.users.setPasswordHash(user, await acc.users.hash(newPass));
  return okReply({}, 'password changed; every session of this user has ended');
}

/** The principal whose sessions a request concerns: its own, or `?user=`'s (the route is then an administrator's: `admin`). */
async function sessionsOwner(acc: Accounts, request: ApiRequest, user: string | undefined): Promise<string> {
  if (user === undefined) return request.session!.principalId;
  const found = await acc.users.find(user);
  if (!found) throw new ApiError('404', `no user named ${JSON.stringify(clip(user))}`);
  return found.id;
}

async function listSessions(ctx: AuthContext, acc: Accounts, request: ApiRequest, { query }: Query<typeof UserQuerySchema>) {
  const owner = await sessionsOwner(acc, request, query.user);
  const live = await acc.sessions.live(owner);
  const elements = await Promise.all(
    live.map(async (session) => ({
      '~ObjectID': sessionHandle(session.id),
      Kind: session.kind,
      Created: formatStoreTime(session.createdAt),
      LastUsed: formatStoreTime(await ctx.sessions.lastUsed(session)),
      Address: session.client?.address ?? null,
      Device: session.client?.device ?? null,
      Apps: session.appNames,
      Current: session.id === request.session!.id,
    })),
  );
  return okReply({ '~Count': elements.length, '~UnfilteredCount': elements.length, '~Elements': elements });
}

async function endSession(ctx: AuthContext, acc: Accounts, request: ApiRequest, { params: { handle } }: Params<typeof SessionParams>) {
  const session = (await acc.sessions.live(request.session!.principalId)).find((live) => sessionHandle(live.id) === handle);
  if (!session) throw new ApiError('404', 'no live session of yours has this handle');
  await acc.sessions.end(session);
  return okReply({}, 'session ended');
}

async function endSessions(ctx: AuthContext, acc: Accounts, request: ApiRequest, { query }: Query<typeof UserQuerySchema>) {
  const owner = await sessionsOwner(acc, request, query.user);
  const ended = await acc.sessions.endAll(owner, owner === request.session!.principalId ? request.session!.id : undefined);
  return okReply({ ended }, `${ended} sessions ended`);
}

async function createUser(ctx: AuthContext, acc: Accounts, request: ApiRequest, { body: input }: Body<typeof NewUserBody>) {
  const user = await acc.users.create(input);
  // a user's Name is the text it was created or found by (users.ts writes it)
  return okReply({ '~ObjectID': user.id, Name: user.fields.Name as string }, 'user created');
}

async function updateUser(ctx: AuthContext, acc: Accounts, request: ApiRequest, { params: { name }, body: change }: Body<typeof UserChangeBody> & Params<typeof UserParams>) {
  const user = await acc.users.update(name, change, request.session!.id);
  return okReply({ '~ObjectID': user.id, Name: user.fields.Name as string, Disabled: user.fields._disabled === true }, 'user changed');
}

/** Whether a user holds a confirmed TOTP secret (PROTOCOL.md 2.6), read from its `_twoFactor` without opening it. */
function hasTwoFactor(user: StoredObject): boolean {
  const state = user.fields[TWO_FACTOR_FIELD];
  return typeof state === 'object' && state !== null && !Array.isArray(state) && (state as Record<string, unknown>).confirmed !== undefined;
}

/** A page of the users, ordered by name, as administrators see them: no `_` field, only what they tell. */
async function listUsers(ctx: AuthContext, acc: Accounts, request: ApiRequest, { query: { page = 0, perPage = DEFAULT_PER_PAGE } }: Query<typeof UserListQuerySchema>) {
  const { objects, total } = await ctx.store.find({ className: acc.users.userClass, orderBy: { field: 'Name' }, offset: page * perPage, limit: perPage });
  // every group of the page read at once
  const groupIds = new Set(objects.flatMap((user) => (isSet(user.fields.Groups) ? user.fields.Groups.$set : [])));
  const groups = new Map((await ctx.store.getMany([...groupIds])).map((group) => [group.id, group.fields.Name]));
  const elements = objects.map((user) => ({
    '~ObjectID': user.id,
    // the user class's Name and Description are text (users.ts writes them)
    Name: (user.fields.Name ?? null) as string | null,
    Description: (user.fields.Description ?? null) as string | null,
    Disabled: user.fields._disabled === true,
    Groups: (isSet(user.fields.Groups) ? user.fields.Groups.$set : []).map((id) => groups.get(id)).filter((group): group is string => typeof group === 'string').sort(),
    TwoFactor: hasTwoFactor(user),
    Passkeys: storedPasskeys(user).length,
  }));
  return okReply({ '~Count': elements.length, '~UnfilteredCount': total, '~Elements': elements });
}

/** Password change and reset, the user's sessions, and user administration (PROTOCOL.md 2.8). */
export function accountRoutes(ctx: AuthContext, acc: Accounts) {
  const handler =
    <I, R>(fn: (ctx: AuthContext, acc: Accounts, request: ApiRequest, input: I) => Promise<R>) =>
    (request: ApiRequest, input: I) =>
      fn(ctx, acc, request, input);
  return [
    route({
      ...ACCOUNTS.postUserPassword,
      auth: 'session',
      summary: "Changes the session user's password; every other session of the user ends",
      examples: { body: { pass: '3092480224001c66a3170bdd19af3b61', newPass: 'a-longer-new-secret' } },
      answer: 'nothing ({})',
      handler: handler(changePassword),
    }),
    route({
      ...ACCOUNTS.postUserPasswordReset,
      auth: 'none',
      summary: 'Asks for a password reset token, delivered by the host (the answer is the same for unknown users)',
      examples: { body: { user: 'erin' } },
      answer: 'nothing ({})',
      handler: handler(requestReset),
    }),
    route({
      ...ACCOUNTS.postUserPasswordResetConfirm,
      auth: 'none',
      summary: 'Sets a new password with a reset token; every session of the user ends',
      examples: { body: { token: 'mJ2q7Xw0Rk9vT4sLpZ8cYa', newPass: 'erin-second-secret' } },
      answer: 'nothing ({})',
      handler: handler(confirmReset),
    }),
    route({
      ...ACCOUNTS.getSessions,
      auth: 'session',
      summary: "The caller's live sessions, newest first (administrators: ?user=NAME)",
      examples: { answer: { '~Count': 1, '~UnfilteredCount': 1, '~Elements': [{ '~ObjectID': 'j6K_u5Rj1BKPL_1vkOMrBA', Kind: 'session', Created: '20261126T014329+00:00', LastUsed: '20261126T014329+00:00', Address: '::ffff:127.0.0.1', Device: null, Apps: ['crm'], Current: true }] } },
      admin: ({ query }) => query.user !== undefined,
      answer: 'a set of {~ObjectID (a handle, never a credential), Kind, Created, LastUsed, Address, Device, Apps, Current}',
      handler: handler(listSessions),
    }),
    route({
      ...ACCOUNTS.deleteSessions,
      auth: 'session',
      summary: "Ends all of the caller's sessions but the current one (administrators: ?user=NAME ends all of that user's)",
      examples: { answer: { ended: 1 } },
      admin: ({ query }) => query.user !== undefined,
      answer: 'ended: how many sessions ended',
      handler: handler(endSessions),
    }),
    route({
      ...ACCOUNTS.deleteSessionsByHandle,
      auth: 'session',
      summary: "Ends one of the caller's sessions, named by its handle",
      answer: 'nothing ({})',
      handler: handler(endSession),
    }),
    route({
      ...ACCOUNTS.getUsers,
      auth: 'session',
      admin: true,
      summary: 'A page of the users, ordered by name (administrators): no password, secret or other _ field',
      answer: 'a set of {~ObjectID, Name, Description, Disabled, Groups (names), TwoFactor (a confirmed TOTP secret), Passkeys (how many)}',
      handler: handler(listUsers),
    }),
    route({
      ...ACCOUNTS.postUser,
      auth: 'session',
      admin: true,
      summary: 'Creates a user (administrators)',
      examples: { body: { Name: 'erin', pass: 'erin-first-secret', Groups: ['sales'], Licences: ['crm'] }, answer: { '~ObjectID': 'K3Q9ZT2B', Name: 'erin' } },
      answer: '~ObjectID and Name of the new user',
      handler: handler(createUser),
    }),
    route({
      ...ACCOUNTS.patchUserByName,
      auth: 'session',
      admin: true,
      summary: 'Changes a user (administrators): Disabled, Groups, pass, Licences',
      examples: { body: { Disabled: false }, answer: { '~ObjectID': 'USR00002', Name: 'bob', Disabled: false } },
      answer: '~ObjectID, Name and Disabled of the user',
      handler: handler(updateUser),
    }),
  ];
}
