import { ApiError } from '../http/errors.js';
import type { Identity } from './types.js';

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value.slice(0, 256) : undefined;
}

/**
 * The identity in validated OpenID claims: `sub` identifies; given and family name and e-mail are
 * informational (never used to link).
 */
export function identityFromClaims(claims: Record<string, unknown> | undefined, extra: Partial<Identity> = {}): Identity {
  const subject = text(claims?.sub);
  if (!subject) throw new ApiError('322', 'the ID token names no subject');
  return {
    subject,
    name: extra.name ?? text(claims?.given_name),
    surname: extra.surname ?? text(claims?.family_name),
    email: extra.email ?? text(claims?.email),
  };
}

export { text as optionalText };
