import { LOGIN_ANSWER, authenticate, startSession } from '../auth/login.js';
import { OAUTH } from './contract.js';
import type { LoginContext } from '../auth/context.js';
import { isFormContentType } from '../http/body.js';
import { okReply } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { route } from '../http/router.js';
import type { ExternalLogin } from './flow.js';

const MAX_APP_NAMES = 64;

const CALLBACK_ANSWER = 'as /v1/login when the identity is linked to a database user; else dfUuid, to be assigned one with /v1/extLogin';

/**
 * A browser navigating to `/v1/auth/{name}` cannot send headers, so the app key may also come as
 * `?appkey=`; the header wins when both are present. A query value no header could carry (`%FF`
 * decodes to U+FFFD, `%C4%80` to U+0100, `%00` to NUL) is no app key: `100`.
 */
function checkAppKey(ctx: LoginContext, request: ApiRequest, fromQuery: string | undefined): void {
  if (request.headers.has('appkey') || fromQuery === undefined) return ctx.checkAppKey(request.headers);
  let headers: Headers;
  try {
    headers = new Headers({ appkey: fromQuery });
  } catch {
    throw new ApiError('100', 'appkey not accepted: it is not a valid header value');
  }
  ctx.checkAppKey(headers);
}

/** `?appNames=crm&appNames=shop` or `?appNames=crm,shop`; none means a macro-only session (PROTOCOL.md 2.1). */
function appNamesParam(request: ApiRequest): string[] {
  const names = request.searchParams
    .getAll('appNames')
    .flatMap((value) => value.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length > MAX_APP_NAMES || names.some((name) => name.length > 128)) {
    throw new ApiError('400', `appNames must be at most ${MAX_APP_NAMES} names of at most 128 characters`);
  }
  return names;
}

/** The callback's parameters: the query of a GET, or the form body of a POST (Apple's `form_post`). */
function callbackParams(request: ApiRequest): URLSearchParams {
  if (request.method === 'GET') return request.searchParams;
  if (!isFormContentType(request.headers.get('content-type'))) {
    throw new ApiError('415', 'the callback POST must be application/x-www-form-urlencoded');
  }
  return new URLSearchParams(request.bodyText);
}

export function externalLoginRoutes(ctx: LoginContext, flow: ExternalLogin) {
  const callback = (request: ApiRequest, { params }: { params: { name: string } }) => flow.callback(request, flow.provider(params.name), callbackParams(request));
  return [
    route({
      ...OAUTH.getAuthByName,
      auth: 'none',
      appKey: false, // checked below: header or query
      summary: "Starts an external login: redirects to the provider's authorization page",
      rawAnswer: { status: 302, description: "a redirect to the provider's authorization URL (state, PKCE and nonce kept server-side)", headers: { Location: "the provider's authorization URL" } },
      errors: ['100', '321', '303'],
      handler: async (request, { params, query }) => {
        checkAppKey(ctx, request, query.appkey);
        return flow.start(flow.provider(params.name), appNamesParam(request), request.clientAddress);
      },
    }),
    // The provider's redirect carries no app key; the one-time state authenticates it.
    route({
      ...OAUTH.getByNameCallback,
      auth: 'none',
      appKey: false,
      summary: "The provider's redirect back (its one-time state authenticates it)",
      answer: CALLBACK_ANSWER,
      errors: ['101', '306', '321', '322', '323', '340', '403'],
      handler: callback,
    }),
    route({
      ...OAUTH.postByNameCallback,
      auth: 'none',
      appKey: false,
      summary: "The provider's form POST back (Apple's form_post)",
      bodyTypes: ['application/x-www-form-urlencoded'],
      answer: CALLBACK_ANSWER,
      errors: ['101', '306', '321', '322', '323', '340', '403'],
      handler: callback,
    }),
    route({
      ...OAUTH.postExtLogin,
      auth: 'none',
      summary: 'Assigns a database user to an external identity (its dfUuid) and logs that user in',
      answer: LOGIN_ANSWER,
      errors: ['101', '302', '303', '306', '320', '340', '341', '342'],
      handler: async (request, { body }) => {
        await flow.checkDfUuid(body.dfUuid);
        const user = await authenticate(ctx, body, request.clientAddress);
        await flow.link(body.dfUuid, user);
        const { data } = await startSession(ctx, 'session', user, body);
        return okReply(data);
      },
    }),
  ];
}
