import type { LoginContext } from './context.js';
import { okReply, type JsonReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import type { Route, RouteInput } from '../http/router.js';
import type { RouteSpec } from '../http/route-spec.js';
import { TWO_FACTOR } from './two-factor-contract.js';
import type { StoredObject } from '../storage/types.js';
import { TwoFactor } from './two-factor.js';


const WRONG_CODE = 'the two-factor code is wrong, expired or already used';


/** The session's principal as stored now. */
async function principalOf(ctx: LoginContext, request: ApiRequest): Promise<StoredObject> {
  const principal = await ctx.store.get(request.session!.principalId);
  if (!principal) throw new ApiError('201', 'the user of this session no longer exists');
  return principal;
}

/**
 * A route that checks a code: it takes its place in the failed-login limit and in the user's
 * second-factor count before the check, as a login does (`303` when either has none left), so codes
 * cannot be guessed here faster than at the login; `check` answers whether the code was right (a
 * wrong one counts in both: `342`),
 * or `undefined` when there was nothing to check it against (the place is given back).
 */
async function withCode(
  ctx: LoginContext,
  request: ApiRequest,
  token: string,
  check: (codes: TwoFactor, principal: StoredObject, token: string) => Promise<boolean | undefined>,
): Promise<boolean | undefined> {
  const codes = ctx.twoFactor.codes; // 403 before anything is counted when the service has no key
  const admission = await ctx.limiter.admit(request.session!.user, request.clientAddress);
  let accepted: boolean | undefined;
  try {
    const codeCheck = await admission.secondFactor();
    accepted = await principalOf(ctx, request)
      .then((principal) => check(codes, principal, token))
      .catch(async (error: unknown) => {
        await codeCheck.withdrawn();
        throw error;
      });
    await (accepted === undefined ? codeCheck.withdrawn() : accepted ? codeCheck.verified() : codeCheck.failed());
  } catch (error) {
    await admission.withdrawn();
    throw error;
  }
  if (accepted === false) {
    await admission.failed();
    throw new ApiError('342', WRONG_CODE);
  }
  await (accepted ? admission.succeeded() : admission.withdrawn());
  return accepted;
}

/** Whether `?username=` names another user than the session's own: the request is then an administrator's (`admin`). */
const namesAnother = (username: string | undefined, request: ApiRequest) => username !== undefined && username.toLowerCase() !== request.session!.user.toLowerCase();

/**
 * The principal `?username=` names (PROTOCOL.md 2.6, real client): the session's own without it, or
 * when it names the session's user; another user's for administrators (the dispatcher has checked
 * the `users.admins` group), `404` for an unknown name.
 */
async function statusPrincipal(ctx: LoginContext, request: ApiRequest, username: string | undefined): Promise<StoredObject> {
  if (!namesAnother(username, request)) return principalOf(ctx, request);
  const user = await ctx.principals.findUser(username!);
  if (!user) throw new ApiError('404', `no user ${JSON.stringify(clip(username!))}`);
  return user;
}

type Input = RouteInput<Record<string, string>, { app: string; username?: string }, { token: string } | undefined>;

async function status(ctx: LoginContext, request: ApiRequest, { query: { app, username } }: Input): Promise<JsonReply> {
  const principal = await statusPrincipal(ctx, request, username);
  return okReply({ ...TwoFactor.describe(principal), '2faStatus': ctx.twoFactor.status(app, principal) });
}

async function enrol(ctx: LoginContext, request: ApiRequest, { query: { app } }: Input): Promise<JsonReply> {
  ctx.twoFactor.checkAvailable(app);
  return okReply(await ctx.twoFactor.codes.enrol(await principalOf(ctx, request), request.session!.user));
}

async function confirm(ctx: LoginContext, request: ApiRequest, { body }: Input): Promise<JsonReply> {
  const confirmed = await withCode(ctx, request, body!.token, async (codes, principal, token) => {
    const outcome = await codes.confirm(principal, token);
    return outcome === 'none' ? undefined : outcome === 'confirmed';
  });
  if (confirmed === undefined) throw new ApiError('400', 'no new secret awaits confirmation: POST /v1/2fa/secret first');
  return okReply({}, 'two-factor login confirmed');
}

async function remove(ctx: LoginContext, request: ApiRequest, { body }: Input): Promise<JsonReply> {
  const removed = await withCode(ctx, request, body!.token, async (codes, principal, token) => {
    const outcome = await codes.remove(principal, token);
    return outcome === 'none' ? undefined : outcome === 'removed';
  });
  return okReply({}, removed ? 'two-factor login removed' : 'two-factor login was not set up');
}

async function validate(ctx: LoginContext, request: ApiRequest, { body }: Input): Promise<JsonReply> {
  await withCode(ctx, request, body!.token, (codes, principal, token) => codes.verify(principal, token));
  return okReply({}, 'two-factor code accepted');
}

/** `/v1/2fa/*` (PROTOCOL.md 2.6): any session, also the one a `340` answer gives. */
export function twoFactorRoutes(ctx: LoginContext) {
  type Described = Pick<Route, 'summary' | 'answer' | 'errors' | 'examples' | 'admin'>;
  // every one takes ?app= (GET also ?username=); the code routes a body {token} (two-factor-contract.ts)
  const route = (declared: RouteSpec, handler: (ctx: LoginContext, request: ApiRequest, input: Input) => Promise<JsonReply>, doc: Described): Route => ({
    ...declared,
    auth: 'session',
    twoFactorSetup: true,
    ...doc,
    handler: (request: ApiRequest, input: Input) => handler(ctx, request, input),
  });
  return [
    route(TWO_FACTOR.getSecret, status, {
      admin: ({ query }: Input, request: ApiRequest) => namesAnother(query.username, request),
      summary: "The session user's (or, for users.admins, another user's) two-factor state for an application",
      examples: { answer: { isActivated: true, isConfirmed: true, '2faStatus': 2 } },
      answer: 'isActivated, isConfirmed and 2faStatus (0 not available, 1 deactivated, 2 optional, 3 forced)',
    }),
    route(TWO_FACTOR.postSecret, enrol, {
      summary: 'A new, unconfirmed TOTP secret for the session user',
      examples: { answer: { secret: 'RG7L6HKTIR7E22BU4TRP2RVLK2PN2OIF', otpauthUri: 'otpauth://totp/odbrest%20demo:alice?issuer=odbrest%20demo&secret=RG7L6HKTIR7E22BU4TRP2RVLK2PN2OIF&algorithm=SHA1&digits=6&period=30', qrCode: 'data:image/svg+xml;base64,PHN2ZyB2aWV3Qm94PSIwIDAgNTcgNTciIHhtbG5zPSJodHRwOi8vd3d3LnczLm9yZy8yMDAwL3N2ZyI+...', backupCodes: ['endvz-amary', '8t3mj-vs1y1', 'y0gsw-db6wa', '40pzh-ts9c7', 'j2m0k-zzch5', 'j9vnf-7kxdh', 'qbwdh-9jkvh', '2bbjg-1c42k', 'fabw1-v31h2', 'eqhs9-y3j43'] } },
      answer: 'secret (base32), otpauthUri, qrCode (an SVG data URL) and backupCodes (10 strings), shown only here',
    }),
    route(TWO_FACTOR.patchSecret, confirm, { summary: 'Confirms the new secret with a code from the authenticator app', answer: 'nothing ({})', errors: ['342'] }),
    route(TWO_FACTOR.deleteSecret, remove, { summary: 'Removes two-factor login (with a TOTP or backup code)', answer: 'nothing ({})', errors: ['342'] }),
    route(TWO_FACTOR.postValidate, validate, { summary: 'Checks a two-factor code of the session user', answer: 'nothing ({})', errors: ['342'] }),
  ];
}
