/**
 * The account routes' contracts (PROTOCOL.md 2.8): method, path and schemas, without handlers
 * (http/route-spec.ts); the route module attaches the handlers.
 */
import * as v from 'valibot';
import { clip } from '../http/errors.js';
import { spec } from '../http/route-spec.js';
import { integerParam } from '../http/validate.js';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from '../objects/read/index.js';
import { integer, Nothing, setOf, UserList } from '../openapi/schemas.js';
import { LicencesSchema, MAX_PASSWORD, passwordMember } from './users.js';
import { AppNamesSchema } from '../auth/login-contract.js';

export const BAD_RESET_TOKEN = 'the reset token is unknown, used or expired: ask for a new one';
const MAX_NAME = 256;

const name = (member: string) =>
  v.pipe(v.string(`${member} must be a string`), v.minLength(1, `${member} must not be empty`), v.maxLength(MAX_NAME, `${member} must be at most ${MAX_NAME} characters`));
const groupNames = v.array(name('each of Groups'), 'Groups must be an array of group names');

export const PasswordChangeSchema = v.object({ pass: passwordMember('pass'), newPass: passwordMember('newPass') });
export const ResetRequestSchema = v.object({ user: name('user') });
export const ResetConfirmSchema = v.object({
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
export const NewUserBody = onlyMembers(NewUserSchema);
export const UserChangeBody = onlyMembers(UserChangeSchema);
/** A session of the caller, by the handle `GET /v1/sessions` lists (never its credential). */
export const SessionParams = v.object({ handle: v.pipe(v.string(), v.description('the session handle (~ObjectID of GET /v1/sessions)')) });
/** A user by name. */
export const UserParams = v.object({ name: v.pipe(v.string(), v.description('the user name')) });

export const UserQuerySchema = v.object({
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

export const UserListQuerySchema = v.object({
  page: integerParam('page', 1_000_000_000, 'the page, from 0'),
  perPage: integerParam('perPage', MAX_PER_PAGE, `users per page, default ${DEFAULT_PER_PAGE}`),
});

export const ACCOUNTS = {
  postUserPassword: spec({ method: 'POST', path: '/v1/user/password', body: PasswordChangeSchema, answerSchema: Nothing }),
  postUserPasswordReset: spec({ method: 'POST', path: '/v1/user/password/reset', body: ResetRequestSchema, answerSchema: Nothing }),
  postUserPasswordResetConfirm: spec({ method: 'POST', path: '/v1/user/password/reset/confirm', body: ResetConfirmSchema, answerSchema: Nothing }),
  getSessions: spec({ method: 'GET', path: '/v1/sessions', query: UserQuerySchema, answerSchema: SessionList }),
  deleteSessions: spec({ method: 'DELETE', path: '/v1/sessions', query: UserQuerySchema, answerSchema: v.strictObject({ ended: v.pipe(integer, v.minValue(0)) }) }),
  deleteSessionsByHandle: spec({ method: 'DELETE', path: '/v1/sessions/:handle', params: SessionParams, answerSchema: Nothing }),
  getUsers: spec({ method: 'GET', path: '/v1/users', query: UserListQuerySchema, answerSchema: UserList }),
  postUser: spec({ method: 'POST', path: '/v1/user', body: NewUserBody, answerSchema: v.strictObject(UserRef) }),
  patchUserByName: spec({ method: 'PATCH', path: '/v1/user/:name', params: UserParams, body: UserChangeBody, answerSchema: v.strictObject({ ...UserRef, Disabled: v.boolean() }) }),
};

/** The WebAuthn response as `@simplewebauthn/browser` gives it: checked for shape here, verified by `@simplewebauthn/server`. */
export const ResponseSchema = v.looseObject(
  { id: v.string('response.id must be a string'), rawId: v.string('response.rawId must be a string'), type: v.string(), response: v.looseObject({}, 'response.response must be an object') },
  'response must be the WebAuthn response object (startRegistration or startAuthentication of @simplewebauthn/browser)',
);
export const RegisterSchema = v.object({
  response: ResponseSchema,
  name: v.optional(v.pipe(v.string('name must be a string'), v.maxLength(100, 'name must be at most 100 characters'))),
});
export const LoginOptionsSchema = v.optional(v.object({ user: v.optional(v.pipe(v.string('user must be a string'), v.maxLength(256, 'user must be at most 256 characters'))) }));
export const LoginSchema = v.object({ response: ResponseSchema, appNames: AppNamesSchema, device: v.optional(v.unknown()) });

export const PASSKEYS = {
  postPasskeyRegisterOptions: spec({ method: 'POST', path: '/v1/passkey/register/options' }),
  postPasskeyRegister: spec({ method: 'POST', path: '/v1/passkey/register', body: RegisterSchema }),
  postPasskeyLoginOptions: spec({ method: 'POST', path: '/v1/passkey/login/options', body: LoginOptionsSchema }),
  postPasskeyLogin: spec({ method: 'POST', path: '/v1/passkey/login', body: LoginSchema }),
  getPasskeys: spec({ method: 'GET', path: '/v1/passkeys' }),
  deletePasskeysById: spec({ method: 'DELETE', path: '/v1/passkeys/:id', params: v.object({ id: v.pipe(v.string(), v.description('the passkey (~ObjectID of GET /v1/passkeys)')) }) }),
};
