import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { ApiError } from '../http/errors.js';
import type { ConfiguredProvider } from './providers.js';
import { providerFetch } from './provider-fetch.js';
import type { Identity, ProviderFetch } from './types.js';

/** What `GET /v1/auth/{name}` keeps server-side, keyed by `state`, for the callback. */
export interface PendingLogin {
  provider: string;
  verifier: string;
  nonce: string | undefined;
  appNames: string[];
}

/** A provider that does not answer within this time counts as unreachable (323). */
function httpOptions(provider: ConfiguredProvider, guarded: ProviderFetch) {
  return {
    [oauth.customFetch]: (url: string, options: RequestInit) => guarded(url, options),
    [oauth.allowInsecureRequests]: provider.insecure,
  };
}

function authorizationServer({ endpoints, discovered }: ConfiguredProvider): oauth.AuthorizationServer {
  return {
    id_token_signing_alg_values_supported: discovered?.algorithms,
    // Facebook has no issuer; oauth4webapi needs one, and no ID token is checked against it.
    issuer: endpoints.issuer ?? new URL(endpoints.authorization).origin,
    authorization_endpoint: endpoints.authorization,
    token_endpoint: endpoints.token,
    jwks_uri: endpoints.jwks,
  };
}

/**
 * Checks the callback, exchanges the code (PKCE verifier, client secret) and, for OpenID providers,
 * validates the ID token: issuer, audience, expiry, nonce, and the signature against the provider's
 * JWKS. Then the provider file turns the tokens into an identity. Failed checks are `322`, a
 * provider that cannot be reached or answers with an error `323`.
 */
export async function identify(
  provider: ConfiguredProvider,
  pending: PendingLogin,
  state: string,
  params: URLSearchParams,
  nowMs: number,
): Promise<Identity> {
  const { kind, endpoints, credentials } = provider;
  const guarded = providerFetch(provider.name);
  const http = httpOptions(provider, guarded);
  const as = authorizationServer(provider);
  // The service clock (the `now` option) is the one ID-token expiry is judged by.
  const client: oauth.Client = { client_id: credentials.clientIds[0]!, [oauth.clockSkew]: Math.round((nowMs - Date.now()) / 1000) };
  const callback = await classify(provider, async () => oauth.validateAuthResponse(as, client, params, state));
  const auth = await clientAuth(provider, nowMs);
  const response = await classify(provider, () =>
    oauth.authorizationCodeGrantRequest(as, client, auth, callback, provider.redirectUri, pending.verifier, http),
  );
  await refusedWithOk(provider, response);
  if (!kind.openid) {
    const tokens = await classify(provider, () => oauth.processAuthorizationCodeResponse(as, client, response));
    return kind.identity({ tokens, claims: undefined, callback, credentials, endpoints, fetch: guarded });
  }
  const unverified = await peekIdToken(response);
  const expectedAs = { ...as, issuer: kind.issuer?.(unverified, endpoints) ?? as.issuer };
  const expectedClient = { ...client, client_id: audience(unverified.aud, credentials.clientIds) };
  const tokens = await classify(provider, () =>
    oauth.processAuthorizationCodeResponse(expectedAs, expectedClient, response, { expectedNonce: pending.nonce, requireIdToken: true }),
  );
  await classify(provider, () => oauth.validateApplicationLevelSignature(expectedAs, response, { ...http, [oauth.jwksCache]: provider.jwksCache }));
  const claims = oauth.getValidatedIdTokenClaims(tokens);
  return kind.identity({ tokens, claims, callback, credentials, endpoints, fetch: guarded });
}

/** How the client authenticates the exchange: the secret in the form unless discovery chose otherwise. */
async function clientAuth({ kind, credentials, endpoints, discovered }: ConfiguredProvider, nowMs: number): Promise<oauth.ClientAuth> {
  const method = discovered?.tokenAuth ?? 'post';
  if (method === 'none') return oauth.None();
  const secret = await kind.clientSecret(credentials, endpoints, nowMs);
  return method === 'basic' ? oauth.ClientSecretBasic(secret) : oauth.ClientSecretPost(secret);
}

/** The ID token's claims before any check, to pick the expected issuer and audience. */
async function peekIdToken(response: Response): Promise<Record<string, unknown>> {
  if (response.status !== 200) return {};
  try {
    const body = (await response.clone().json()) as { id_token?: unknown };
    return typeof body.id_token === 'string' ? decodeJwt(body.id_token) : {};
  } catch {
    return {}; // oauth4webapi reports what is wrong with the answer
  }
}

/**
 * A token answer `200` with an `error` member: GitHub refuses a code so (RFC 6749 5.2 says `400`), and
 * it is the provider's refusal (`323`) like any other, not a malformed answer.
 */
async function refusedWithOk(provider: ConfiguredProvider, response: Response): Promise<void> {
  if (response.status !== 200) return;
  const body = (await response.clone().json().catch(() => undefined)) as { error?: unknown } | undefined;
  if (typeof body?.error === 'string') throw new ApiError('323', `${provider.name} refused the code exchange: ${safe(body.error)}`);
}

/** Which configured client id the token is for (Apple accepts several); the first when none matches. */
function audience(aud: unknown, clientIds: string[]): string {
  const audiences = Array.isArray(aud) ? aud : [aud];
  return clientIds.find((id) => audiences.includes(id)) ?? clientIds[0]!;
}

const safe = (value: unknown) => String(value).replace(/[^\w.-]/g, '').slice(0, 64);

/** Runs one protocol step and turns oauth4webapi's errors into the codes of PROTOCOL.md 1.4. */
async function classify<T>(provider: ConfiguredProvider, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const name = provider.name;
    if (error instanceof ApiError) throw error;
    if (error instanceof oauth.AuthorizationResponseError) throw new ApiError('322', `${name} reported an error to the callback: ${safe(error.error)}`);
    if (error instanceof oauth.ResponseBodyError) throw new ApiError('323', `${name} refused the code exchange: ${safe(error.error)}`);
    if (error instanceof oauth.WWWAuthenticateChallengeError) throw new ApiError('323', `${name} refused the code exchange`);
    if (error instanceof oauth.OperationProcessingError) {
      if (error.code === oauth.RESPONSE_IS_NOT_CONFORM || error.code === oauth.RESPONSE_IS_NOT_JSON) {
        const status = error.cause instanceof Response ? ` (HTTP ${error.cause.status})` : '';
        throw new ApiError('323', `${name} answered with an error${status}`);
      }
      throw new ApiError('322', `${name}: ${error.message}`);
    }
    if (error instanceof oauth.UnsupportedOperationError) throw new ApiError('322', `${name}: ${error.message}`);
    throw error;
  }
}
