/**
 * The two-factor routes' contracts (PROTOCOL.md 2.6): method, path and schemas, without handlers
 * (http/route-spec.ts); auth/two-factor-routes.ts attaches the handlers.
 */
import * as v from 'valibot';
import { spec } from '../http/route-spec.js';
import { Nothing } from '../openapi/schemas.js';

const MAX_APP_NAME = 128;

export const TokenBodySchema = v.object({
  token: v.pipe(v.string('token must be a string (a TOTP code or a backup code)'), v.maxLength(1024, 'token must be at most 1024 characters')),
});

export const APP_REQUIRED = 'the query parameter app (the application whose two-factor policy applies) is required';

/** `?app=`: the application whose policy applies (PROTOCOL.md 2.6). */
export const AppQuerySchema = v.object({
  app: v.pipe(v.string(APP_REQUIRED), v.maxLength(MAX_APP_NAME, `app must be at most ${MAX_APP_NAME} characters`), v.description('the application whose two-factor policy applies')),
});

export const StatusQuerySchema = v.object({
  ...AppQuerySchema.entries,
  username: v.optional(v.pipe(v.string(), v.maxLength(1024, 'username must be at most 1024 characters'), v.description('another user (needs the users.admins group)'))),
});

/** A new TOTP secret (`POST /v1/2fa/secret`), shown only once. */
export const EnrolmentSchema = v.object({
  secret: v.pipe(v.string(), v.description('base32')),
  otpauthUri: v.pipe(v.string(), v.startsWith('otpauth://totp/')),
  qrCode: v.pipe(v.string(), v.startsWith('data:image/svg+xml;base64,')),
  backupCodes: v.pipe(v.array(v.string()), v.length(10)),
});

export const TWO_FACTOR = {
  getSecret: spec({
    method: 'GET',
    path: '/v1/2fa/secret',
    query: StatusQuerySchema,
    answerSchema: v.object({ isActivated: v.boolean(), isConfirmed: v.boolean(), '2faStatus': v.picklist([0, 1, 2, 3]) }),
  }),
  postSecret: spec({ method: 'POST', path: '/v1/2fa/secret', query: AppQuerySchema, answerSchema: EnrolmentSchema }),
  patchSecret: spec({ method: 'PATCH', path: '/v1/2fa/secret', query: AppQuerySchema, body: TokenBodySchema, answerSchema: Nothing }),
  deleteSecret: spec({ method: 'DELETE', path: '/v1/2fa/secret', query: AppQuerySchema, body: TokenBodySchema, answerSchema: Nothing }),
  postValidate: spec({ method: 'POST', path: '/v1/2fa/validate', query: AppQuerySchema, body: TokenBodySchema, answerSchema: Nothing }),
};
