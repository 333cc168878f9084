import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { ApiError } from '../http/errors.js';
import { optionalText } from './identity.js';
import { secretClient } from './settings.js';
import type { ProviderKind } from './types.js';

const GRAPH = 'https://graph.facebook.com/v19.0';
const encoder = new TextEncoder();

/**
 * Facebook Login: plain OAuth 2.0 (no ID token); the user comes from the graph `me` endpoint, called
 * with `appsecret_proof` so a leaked access token alone cannot be replayed against the app.
 */
export const facebook: ProviderKind = {
  type: 'facebook',
  endpoints: {
    authorization: 'https://www.facebook.com/v19.0/dialog/oauth',
    token: `${GRAPH}/oauth/access_token`,
    userinfo: `${GRAPH}/me`,
  },
  scope: 'email public_profile',
  openid: false,
  ...secretClient,
  identity: async ({ tokens, credentials, endpoints, fetch }) => {
    const url = new URL(endpoints.userinfo!);
    url.searchParams.set('fields', 'id,first_name,last_name,email');
    url.searchParams.set('appsecret_proof', bytesToHex(hmac(sha256, encoder.encode(credentials.clientSecret!), encoder.encode(tokens.access_token))));
    const response = await fetch(url.href, { headers: { authorization: `Bearer ${tokens.access_token}`, accept: 'application/json' } });
    if (!response.ok) throw new ApiError('323', `facebook graph endpoint answered HTTP ${response.status}`);
    const user = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    const subject = optionalText(user?.id);
    if (!subject) throw new ApiError('323', 'facebook graph endpoint answered without a user id');
    return { subject, name: optionalText(user?.first_name), surname: optionalText(user?.last_name), email: optionalText(user?.email) };
  },
};
