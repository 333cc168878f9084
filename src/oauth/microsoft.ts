import { identityFromClaims } from './identity.js';
import { secretClient } from './settings.js';
import type { ProviderKind } from './types.js';

/**
 * Microsoft identity platform, multi-tenant (`common`): OpenID Connect with a client secret. The
 * issuer differs per tenant, so the expected `iss` is the template with the token's own `tid`; the
 * signature check against Microsoft's keys then makes the pair trustworthy.
 */
export const microsoft: ProviderKind = {
  type: 'microsoft',
  endpoints: {
    authorization: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    token: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    jwks: 'https://login.microsoftonline.com/common/discovery/v2.0/keys',
    issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0',
  },
  scope: 'openid email profile',
  openid: true,
  ...secretClient,
  issuer: (claims, endpoints) => {
    const tid = claims.tid;
    if (typeof tid !== 'string' || !/^[0-9A-Za-z-]{1,64}$/.test(tid)) return endpoints.issuer;
    return endpoints.issuer?.replace('{tenantid}', tid);
  },
  identity: async ({ claims }) => identityFromClaims(claims),
};
