/**
 * The login routes' contracts (PROTOCOL.md 2.1): method, path and schemas, without handlers
 * (http/route-spec.ts); auth/login.ts attaches the handlers.
 */
import * as v from 'valibot';
import { spec } from '../http/route-spec.js';
import { LoginAnswer, Nothing, type Same } from '../openapi/schemas.js';

export const MAX_CREDENTIAL = 1024;
export const credential = (name: string) =>
  v.pipe(v.string(`${name} must be a string`), v.maxLength(MAX_CREDENTIAL, `${name} must be at most ${MAX_CREDENTIAL} characters`));

/** `appNames` of a login or `/v1/license/release`: a string means a one-element array. */
export const AppNamesSchema = v.union(
  [v.pipe(v.string(), v.transform((name) => [name])), v.array(v.string())],
  'appNames must be an array of strings or a string',
);

/** The login body of PROTOCOL.md 2.1; unknown members are ignored. `2faToken` `""` (or null, as a C# client may send it) means none. */
const loginBodySchema = v.object({
  user: credential('user'),
  pass: credential('pass'),
  appNames: AppNamesSchema,
  '2faToken': v.nullish(credential('2faToken')),
  /** The real client's device description; only `device.deviceId` is read (for `acls`), any shape is accepted. */
  device: v.optional(v.unknown()),
});
/** `LoginBodySchema`'s type, named so that declarations refer to it rather than repeat it. */
export interface LoginBodySchema extends Same<typeof loginBodySchema> {}
export const LoginBodySchema: LoginBodySchema = loginBodySchema;

export const LOGIN = {
  postLogin: spec({ method: 'POST', path: '/v1/login', body: LoginBodySchema, answerSchema: LoginAnswer }),
  postAuthDf: spec({ method: 'POST', path: '/v1/auth/df', body: LoginBodySchema, answerSchema: LoginAnswer }),
  postLogout: spec({ method: 'POST', path: '/v1/logout', answerSchema: Nothing }),
};

export const ReleaseBodySchema = v.object({ appNames: AppNamesSchema });

export const LICENCE = {
  postLicenseRelease: spec({ method: 'POST', path: '/v1/license/release', body: ReleaseBodySchema, answerSchema: Nothing }),
};
