/**
 * The external login routes' contracts (PROTOCOL.md 5): method, path and schemas, without handlers
 * (http/route-spec.ts); oauth/routes.ts attaches the handlers.
 */
import * as v from 'valibot';
import { LoginBodySchema } from '../auth/login-contract.js';
import { spec } from '../http/route-spec.js';
import { LoginAnswer } from '../openapi/schemas.js';

/** `/v1/extLogin`: the login body of PROTOCOL.md 2.1 plus the dfUuid. */
const ExtLoginSchema = v.object({
  ...LoginBodySchema.entries,
  dfUuid: v.pipe(v.string('dfUuid must be a string'), v.maxLength(64, 'dfUuid must be at most 64 characters')),
});

/** The query of `GET /v1/auth/{name}` as documented (`appNames` may repeat, so it is read with `getAll` below). */
const StartQuerySchema = v.object({
  appkey: v.optional(v.pipe(v.string(), v.description('the app key, for a browser that cannot send the appkey header'))),
  appNames: v.optional(v.pipe(v.string(), v.description('the applications of the session: repeated, or separated by commas; none means a macro-only session'))),
});

/** What a provider's redirect carries (the provider decides the rest); checked by the flow: `322` when wrong. */
const CallbackParamsSchema = v.object({
  // optional to the dispatcher: a callback without it is the flow's `322` (PROTOCOL.md 5.2), not a `400`
  state: v.optional(v.pipe(v.string(), v.description('the one-time state of the login (required: a callback without it is 322)'))),
  code: v.optional(v.pipe(v.string(), v.description('the authorization code'))),
});
/** The provider a login goes through, as the host configured it (an unknown one is `321`). */
const ProviderParams = v.object({ name: v.pipe(v.string(), v.description('the provider, as the host configured it')) });

const CallbackAnswer = v.union([LoginAnswer, v.object({ dfUuid: v.pipe(v.string(), v.description('for /v1/extLogin: the identity has no database user yet')) })]);

export const OAUTH = {
  getAuthByName: spec({ method: 'GET', path: '/v1/auth/:name', params: ProviderParams, query: StartQuerySchema }),
  getByNameCallback: spec({ method: 'GET', path: '/v1/:name/callback', params: ProviderParams, query: CallbackParamsSchema, answerSchema: CallbackAnswer }),
  postByNameCallback: spec({ method: 'POST', path: '/v1/:name/callback', params: ProviderParams, answerSchema: CallbackAnswer }),
  postExtLogin: spec({ method: 'POST', path: '/v1/extLogin', body: ExtLoginSchema, answerSchema: LoginAnswer }),
};
