import { ApiError } from '../http/errors.js';
import { optionalText } from './identity.js';
import { secretClient } from './settings.js';
import type { ProviderKind, TokenResult } from './types.js';

/** GET on the GitHub REST API with the user's token; a failure is the provider's (`323`). */
async function readApi({ tokens, fetch }: TokenResult, url: string): Promise<unknown> {
  const response = await fetch(url, {
    headers: {
      authorization: `Bearer ${tokens.access_token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'odbrest', // the API refuses requests without one
    },
  });
  if (!response.ok) throw new ApiError('323', `github answered HTTP ${response.status} to GET ${new URL(url).pathname}`);
  return response.json().catch(() => {
    throw new ApiError('323', `github answered GET ${new URL(url).pathname} with no JSON`);
  });
}

/** "Ada King Lovelace" is name "Ada King", surname "Lovelace"; one word is a name alone. */
function splitName(full: string | undefined): { name?: string; surname?: string } {
  const trimmed = full?.trim();
  if (!trimmed) return {};
  const at = trimmed.lastIndexOf(' ');
  return at < 0 ? { name: trimmed } : { name: trimmed.slice(0, at).trim(), surname: trimmed.slice(at + 1) };
}

/**
 * GitHub: OAuth 2.0 without an ID token. The subject is the account's numeric id (a login name can
 * be renamed and reused); the e-mail only the verified primary address from `GET /user/emails`.
 */
export const github: ProviderKind = {
  type: 'github',
  endpoints: {
    authorization: 'https://github.com/login/oauth/authorize',
    token: 'https://github.com/login/oauth/access_token',
    userinfo: 'https://api.github.com/user',
  },
  scope: 'read:user user:email',
  openid: false,
  ...secretClient,
  identity: async (result) => {
    const userinfo = result.endpoints.userinfo!.replace(/\/+$/, '');
    const user = (await readApi(result, userinfo)) as Record<string, unknown> | null;
    const id = user?.id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw new ApiError('323', 'github answered GET /user without a numeric id');
    const emails = await readApi(result, `${userinfo}/emails`);
    const primary = Array.isArray(emails) ? emails.find((entry) => entry?.primary === true && entry?.verified === true) : undefined;
    return { subject: String(id), ...splitName(optionalText(user?.name)), email: optionalText(primary?.email) };
  },
};
