import * as v from 'valibot';
import { LoginBodySchema, authenticate, startSession } from '../auth/login.js';
import type { ServiceContext } from '../context.js';
import { isFormContentType } from '../http/body.js';
import { okReply } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import { readJsonObject, type ApiRequest } from '../http/request.js';
import type { Route } from '../http/router.js';
import { parseInput } from '../http/validate.js';
import type { ExternalLogin } from './flow.js';

/** `/v1/extLogin`: the login body of PROTOCOL.md 2.1 plus the dfUuid. */
const ExtLoginSchema = v.object({
  ...LoginBodySchema.entries,
  dfUuid: v.pipe(v.string('dfUuid must be a string'), v.maxLength(64, 'dfUuid must be at most 64 characters')),
});

const MAX_APP_NAMES = 64;

/**
 * A browser navigating to `/v1/auth/{name}` cannot send headers, so the app key may also come as
 * `?appkey=`; the header wins when both are present. A query value no header could carry (`%FF`
 * decodes to U+FFFD, `%C4%80` to U+0100, `%00` to NUL) is no app key: `100`.
 */
function checkAppKey(ctx: ServiceContext, request: ApiRequest): void {
  const fromQuery = request.searchParams.get('appkey');
  if (request.headers.has('appkey') || fromQuery === null) return ctx.checkAppKey(request.headers);
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

export function externalLoginRoutes(ctx: ServiceContext, flow: ExternalLogin): Route[] {
  const callback = (request: ApiRequest) => flow.callback(request, flow.provider(request.params.name!), callbackParams(request));
  return [
    {
      method: 'GET',
      path: '/v1/auth/:name',
      auth: 'none',
      appKey: false, // checked below: header or query
      handler: async (request) => {
        checkAppKey(ctx, request);
        return flow.start(flow.provider(request.params.name!), appNamesParam(request), request.clientAddress);
      },
    },
    // The provider's redirect carries no app key; the one-time state authenticates it.
    { method: 'GET', path: '/v1/:name/callback', auth: 'none', appKey: false, handler: callback },
    { method: 'POST', path: '/v1/:name/callback', auth: 'none', appKey: false, handler: callback },
    {
      method: 'POST',
      path: '/v1/extLogin',
      auth: 'none',
      handler: async (request) => {
        const body = parseInput(ExtLoginSchema, readJsonObject(request));
        await flow.checkDfUuid(body.dfUuid);
        const user = await authenticate(ctx, body, request.clientAddress);
        await flow.link(body.dfUuid, user);
        const { data } = await startSession(ctx, 'session', user, body);
        return okReply(data);
      },
    },
  ];
}
