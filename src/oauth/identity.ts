import { ApiError } from '../http/errors.js';
import type { Identity } from './types.js';

/** A provider-supplied text, capped; empty or not a string is absent. */
export function optionalText(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value.slice(0, 256) : undefined;
}

/**
 * The identity in validated OpenID claims: `sub` identifies; given and family name and e-mail are
 * informational (never used to link).
 */
export function identityFromClaims(claims: Record<string, unknown> | undefined, extra: Partial<Identity> = {}): Identity {
  const subject = optionalText(claims?.sub);
  if (!subject) throw new ApiError('322', 'the ID token names no subject');
  return {
    subject,
    name: extra.name ?? optionalText(claims?.given_name),
    surname: extra.surname ?? optionalText(claims?.family_name),
    email: extra.email ?? optionalText(claims?.email),
  };
}
