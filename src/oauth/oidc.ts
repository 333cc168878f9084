import * as oauth from 'oauth4webapi';
import * as v from 'valibot';
import { ApiError } from '../http/errors.js';
import { optionalText } from './identity.js';
import { EndpointsSchema, httpsUrl, nonEmpty, parseAdditionalData } from './settings.js';
import type { Credentials, Discovered, ProviderKind, TokenAuth } from './types.js';

const OidcSettingsSchema = v.object({
  issuer: httpsUrl('issuer'),
  clientId: nonEmpty('clientId'),
  /** Absent for a public client (PKCE alone protects the exchange). */
  clientSecret: v.optional(nonEmpty('clientSecret')),
  scopes: v.optional(
    v.pipe(
      v.union([nonEmpty('scopes'), v.pipe(v.array(nonEmpty('scopes')), v.minLength(1, 'scopes must not be empty'), v.transform((list) => list.join(' ')))], 'scopes must be a string or a list of strings'),
      v.check((scope) => scope.split(/\s+/).includes('openid'), 'scopes must include openid'),
    ),
  ),
  endpoints: v.optional(EndpointsSchema),
});

/** A client secret goes as HTTP Basic (the OpenID default) unless the issuer accepts only the form post. */
function tokenAuth(credentials: Credentials, supported: unknown): TokenAuth {
  if (credentials.clientSecret === undefined) return 'none';
  const methods = Array.isArray(supported) ? supported : ['client_secret_basic'];
  return !methods.includes('client_secret_basic') && methods.includes('client_secret_post') ? 'post' : 'basic';
}

/**
 * Any OpenID Connect provider (Keycloak, Okta, Authentik, Entra ID, Google Workspace), by its
 * issuer: the endpoints, keys and signing algorithms come from its discovery document, read once at
 * start. Names and e-mail come from the standard claims, the e-mail only when `email_verified`.
 */
export const oidc: ProviderKind = {
  type: 'oidc',
  endpoints: {},
  scope: 'openid email profile',
  openid: true,
  credentials: async (data): Promise<Credentials> => {
    const settings = parseAdditionalData(OidcSettingsSchema, data);
    return {
      clientIds: [settings.clientId],
      clientSecret: settings.clientSecret,
      issuer: settings.issuer,
      scope: settings.scopes,
      endpoints: settings.endpoints,
    };
  },
  clientSecret: async (credentials) => credentials.clientSecret ?? '',
  discover: async (credentials, fetch, insecure): Promise<Discovered> => {
    const issuer = new URL(credentials.issuer!);
    const http = { [oauth.customFetch]: fetch, [oauth.allowInsecureRequests]: insecure };
    let metadata: oauth.AuthorizationServer;
    try {
      metadata = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...http }));
    } catch (error) {
      const reason = error instanceof ApiError ? 'it could not be reached' : (error as Error).message;
      throw new Error(`the discovery document of issuer ${issuer.href} (${issuer.href.replace(/\/$/, '')}/.well-known/openid-configuration) was not accepted: ${reason}`);
    }
    const algorithms = metadata.id_token_signing_alg_values_supported?.filter((alg) => alg !== 'none');
    return {
      endpoints: {
        issuer: metadata.issuer,
        authorization: metadata.authorization_endpoint,
        token: metadata.token_endpoint,
        jwks: metadata.jwks_uri,
        userinfo: metadata.userinfo_endpoint,
      },
      algorithms: algorithms?.length ? algorithms : undefined,
      tokenAuth: tokenAuth(credentials, metadata.token_endpoint_auth_methods_supported),
    };
  },
  identity: async ({ claims }) => {
    const subject = optionalText(claims?.sub);
    if (!subject) throw new ApiError('322', 'the ID token names no subject');
    return {
      subject,
      name: optionalText(claims?.given_name),
      surname: optionalText(claims?.family_name),
      email: claims?.email_verified === true ? optionalText(claims.email) : undefined,
    };
  },
};
