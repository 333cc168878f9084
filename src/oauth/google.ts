import { identityFromClaims } from './identity.js';
import { secretClient } from './settings.js';
import type { ProviderKind } from './types.js';

const ISSUER = 'https://accounts.google.com';

/** Google Sign-In: OpenID Connect with a client secret. */
export const google: ProviderKind = {
  type: 'google',
  endpoints: {
    authorization: 'https://accounts.google.com/o/oauth2/v2/auth',
    token: 'https://oauth2.googleapis.com/token',
    jwks: 'https://www.googleapis.com/oauth2/v3/certs',
    issuer: ISSUER,
  },
  scope: 'openid email profile',
  openid: true,
  ...secretClient,
  // Google documents both spellings of its issuer; accept the bare one only for Google itself.
  issuer: (claims, endpoints) => (endpoints.issuer === ISSUER && claims.iss === 'accounts.google.com' ? 'accounts.google.com' : endpoints.issuer),
  identity: async ({ claims }) => identityFromClaims(claims),
};
