import * as v from 'valibot';
import { verifyPassword } from '../auth/passwords.js';
import type { Session } from '../auth/sessions.js';
import type { AuthContext } from '../auth/context.js';
import { okReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { route } from '../http/router.js';
import { integerParam } from '../http/validate.js';
import { DEFAULT_PER_PAGE, formatStoreTime, MAX_PER_PAGE } from '../objects/read/index.js';
import { TWO_FACTOR_FIELD } from '../auth/two-factor.js';
import { integer, Nothing, setOf, UserList } from '../openapi/schemas.js';
import { isSet, type StoredObject } from '../storage/types.js';
import { kvKeys } from '../storage/keys.js';
import type { AccountUserOptions, PasswordResetDelivery } from './options.js';
import { resetAddress, resetMail } from './reset-mail.js';
import { storedPasskeys } from './passkeys.js';
import { PasswordResets } from './password-reset.js';
import { sessionHandle, UserSessions } from './user-sessions.js';
import { LicencesSchema, MAX_PASSWORD, passValue, passwordMember, UserAccounts } from './users.js';

/** Reset requests per user name and per address within the hour (PROTOCOL.md 2.8). */
const RESETS_PER_USER = 3;
const RESETS_PER_ADDRESS = 20;
const RESET_WINDOW_MS = 3_600_000;
const BAD_RESET_TOKEN = 'the reset token is unknown, used or expired: ask for a new one';
const MAX_NAME = 256;

const name = (member: string) =>
  v.pipe(v.string(`${member} must be a string`), v.minLength(1, `${member} must not be empty`), v.maxLength(MAX_NAME, `${member} must be at most ${MAX_NAME} characters`));
const groupNames = v.array(name('each of Groups'), 'Groups must be an array of group names');

const PasswordChangeSchema = v.object({ pass: passwordMember('pass'), newPass: passwordMember('newPass') });
const ResetRequestSchema = v.object({ user: name('user') });
const ResetConfirmSchema = v.object({
  token: v.pipe(v.string('token must be a string'), v.maxLength(MAX_PASSWORD, BAD_RESET_TOKEN)),
  newPass: passwordMember('newPass'),
});
/** The body `schema` describes, and `400` naming the first member it does not define. */
function onlyMembers<S extends v.ObjectSchema<v.ObjectEntries, undefined>>(schema: S): v.GenericSchema<v.InferInput<S>, v.InferOutput<S>> {
  const allowed = Object.keys(schema.entries);
  const unknownMember = (body: object) => Object.keys(body).find((member) => !allowed.includes(member));
  return v.pipe(
    v.looseObject(schema.entries),
    v.check((body) => unknownMember(body) === undefined, (issue) => `unknown member ${JSON.stringify(clip(unknownMember(issue.input)!))}; allowed: ${allowed.join(', ')}`),
  ) as unknown as v.GenericSchema<v.InferInput<S>, v.InferOutput<S>>;
}

const NewUserSchema = v.object({
  Name: name('Name'),
  pass: passwordMember('pass'),
  Groups: v.optional(groupNames),
  Description: v.optional(v.pipe(v.string('Description must be a string'), v.maxLength(4096, 'Description must be at most 4096 characters'))),
  Licences: v.optional(LicencesSchema),
});
const UserChangeSchema = v.object({
  Disabled: v.optional(v.boolean('Disabled must be true or false')),
  Groups: v.optional(groupNames),
  pass: v.optional(passwordMember('pass')),
  Licences: v.optional(LicencesSchema),
});
const NewUserBody = onlyMembers(NewUserSchema);
const UserChangeBody = onlyMembers(UserChangeSchema);
/** A session of the caller, by the handle `GET /v1/sessions` lists (never its credential). */
const SessionParams = v.object({ handle: v.pipe(v.string(), v.description('the session handle (~ObjectID of GET /v1/sessions)')) });
/** A user by name. */
const UserParams = v.object({ name: v.pipe(v.string(), v.description('the user name')) });

const UserQuerySchema = v.object({
  user: v.optional(v.pipe(v.string(), v.maxLength(MAX_NAME, `user must be at most ${MAX_NAME} characters`), v.description('another user (administrators only)'))),
});

const storeTime = v.pipe(v.string(), v.description('~StoreTime form'));
/** `GET /v1/sessions`: the live sessions, each by its handle (never a credential). */
const SessionList = setOf(
  v.strictObject({
    '~ObjectID': v.pipe(v.string(), v.description('the session handle, never a credential')),
    Kind: v.picklist(['session', 'token', 'secure']),
    Created: storeTime,
    LastUsed: storeTime,
    Address: v.nullable(v.string()),
    Device: v.pipe(v.unknown(), v.description('what the login sent as its device, or null')),
    Apps: v.array(v.string()),
    Current: v.pipe(v.boolean(), v.description('the session of this request')),
  }),
  'the sessions in ~Elements',
  'the sessions in ~Elements',
  { '~Count': 1, '~UnfilteredCount': 1, '~Elements': [{ '~ObjectID': 'j6K_u5Rj1BKPL_1vkOMrBA', Kind: 'session', Created: '20261126T014329+00:00', LastUsed: '20261126T014329+00:00', Address: '::ffff:127.0.0.1', Device: null, Apps: ['crm'], Current: true }] },
);
const UserRef = { '~ObjectID': v.string(), Name: v.string() };

const UserListQuerySchema = v.object({
  page: integerParam('page', 1_000_000_000, 'the page, from 0'),
  perPage: integerParam('perPage', MAX_PER_PAGE, `users per page, default ${DEFAULT_PER_PAGE}`),
});


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
      method: 'POST',
      path: '/v1/user/password',
      auth: 'session',
      summary: "Changes the session user's password; every other session of the user ends",
      examples: { body: { pass: '3092480224001c66a3170bdd19af3b61', newPass: 'a-longer-new-secret' } },
      body: PasswordChangeSchema,
      answer: 'nothing ({})',
      answerSchema: Nothing,
      handler: handler(changePassword),
    }),
    route({
      method: 'POST',
      path: '/v1/user/password/reset',
      auth: 'none',
      summary: 'Asks for a password reset token, delivered by the host (the answer is the same for unknown users)',
      examples: { body: { user: 'erin' } },
      body: ResetRequestSchema,
      answer: 'nothing ({})',
      answerSchema: Nothing,
      handler: handler(requestReset),
    }),
    route({
      method: 'POST',
      path: '/v1/user/password/reset/confirm',
      auth: 'none',
      summary: 'Sets a new password with a reset token; every session of the user ends',
      examples: { body: { token: 'mJ2q7Xw0Rk9vT4sLpZ8cYa', newPass: 'erin-second-secret' } },
      body: ResetConfirmSchema,
      answer: 'nothing ({})',
      answerSchema: Nothing,
      handler: handler(confirmReset),
    }),
    route({
      method: 'GET',
      path: '/v1/sessions',
      auth: 'session',
      summary: "The caller's live sessions, newest first (administrators: ?user=NAME)",
      examples: { answer: { '~Count': 1, '~UnfilteredCount': 1, '~Elements': [{ '~ObjectID': 'j6K_u5Rj1BKPL_1vkOMrBA', Kind: 'session', Created: '20261126T014329+00:00', LastUsed: '20261126T014329+00:00', Address: '::ffff:127.0.0.1', Device: null, Apps: ['crm'], Current: true }] } },
      query: UserQuerySchema,
      admin: ({ query }) => query.user !== undefined,
      answer: 'a set of {~ObjectID (a handle, never a credential), Kind, Created, LastUsed, Address, Device, Apps, Current}',
      answerSchema: SessionList,
      handler: handler(listSessions),
    }),
    route({
      method: 'DELETE',
      path: '/v1/sessions',
      auth: 'session',
      summary: "Ends all of the caller's sessions but the current one (administrators: ?user=NAME ends all of that user's)",
      examples: { answer: { ended: 1 } },
      query: UserQuerySchema,
      admin: ({ query }) => query.user !== undefined,
      answer: 'ended: how many sessions ended',
      answerSchema: v.strictObject({ ended: v.pipe(integer, v.minValue(0)) }),
      handler: handler(endSessions),
    }),
    route({
      method: 'DELETE',
      path: '/v1/sessions/:handle',
      auth: 'session',
      summary: "Ends one of the caller's sessions, named by its handle",
      params: SessionParams,
      answer: 'nothing ({})',
      answerSchema: Nothing,
      handler: handler(endSession),
    }),
    route({
      method: 'GET',
      path: '/v1/users',
      auth: 'session',
      admin: true,
      summary: 'A page of the users, ordered by name (administrators): no password, secret or other _ field',
      query: UserListQuerySchema,
      answerSchema: UserList,
      answer: 'a set of {~ObjectID, Name, Description, Disabled, Groups (names), TwoFactor (a confirmed TOTP secret), Passkeys (how many)}',
      handler: handler(listUsers),
    }),
    route({
      method: 'POST',
      path: '/v1/user',
      auth: 'session',
      admin: true,
      summary: 'Creates a user (administrators)',
      examples: { body: { Name: 'erin', pass: 'erin-first-secret', Groups: ['sales'], Licences: ['crm'] }, answer: { '~ObjectID': 'K3Q9ZT2B', Name: 'erin' } },
      body: NewUserBody,
      answer: '~ObjectID and Name of the new user',
      answerSchema: v.strictObject(UserRef),
      handler: handler(createUser),
    }),
    route({
      method: 'PATCH',
      path: '/v1/user/:name',
      auth: 'session',
      admin: true,
      summary: 'Changes a user (administrators): Disabled, Groups, pass, Licences',
      params: UserParams,
      examples: { body: { Disabled: false }, answer: { '~ObjectID': 'USR00002', Name: 'bob', Disabled: false } },
      body: UserChangeBody,
      answer: '~ObjectID, Name and Disabled of the user',
      answerSchema: v.strictObject({ ...UserRef, Disabled: v.boolean() }),
      handler: handler(updateUser),
    }),
  ];
}
