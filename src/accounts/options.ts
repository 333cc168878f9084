/**
 * The account options (PROTOCOL.md 2.8): members of the `users` option (`UserOptions` extends
 * `AccountUserOptions`) and the top-level `passkeys` option.
 */

/** What `users.sendPasswordReset` is given: the user's record as stored, the token (shown only here) and its end. */
export interface PasswordResetDelivery {
  /** The user as stored (its `Name`, and whatever field holds a way to reach it). */
  user: { id: string; name: string; fields: Readonly<Record<string, unknown>> };
  /** The reset token: 256 bits, base64url. Valid once, until `expiresAt`. */
  token: string;
  expiresAt: Date;
}

/** Why a new password is refused (shown to the user as the `400`'s message), or `undefined` to accept it. */
export type PasswordPolicy = (password: string, user: { name: string }) => string | undefined | Promise<string | undefined>;

export interface AccountUserOptions {
  /**
   * Checks a new password given in plain form (`newPass` of a change or reset, `pass` of an
   * administrator's create or change). Default: at least 10 characters and not the user name.
   */
  passwordPolicy?: PasswordPolicy;
  /**
   * Delivers a password reset token to the user (mail, message, ...). Called after the answer, so the
   * time of the answer never tells whether the user exists; its failures go to `onError`. Default:
   * none, so no reset token is ever made.
   */
  sendPasswordReset?: (delivery: PasswordResetDelivery) => void | Promise<void>;
  /** The group (its `Name`) whose members administer users and sessions (PROTOCOL.md 2.8). Default: none. */
  admins?: string;
  /** Class of the groups a user's `Groups` set references, found by `Name`. Default `UserGroup`. */
  groupClassName?: string;
}

/** The `passkeys` option: WebAuthn login (PROTOCOL.md 2.8); absent means no passkey routes answer but `403`. */
export interface PasskeyOptions {
  /** The relying party id: the site's registrable domain (`example.com`, or `localhost`). */
  rpID: string;
  /** The name authenticators show. */
  rpName: string;
  /** The exact origins (`https://app.example.com`) whose pages may register and use passkeys. */
  origins: readonly string[];
}

export const DEFAULT_MIN_PASSWORD_LENGTH = 10;

/** The default policy: at least 10 characters, and not the user name (case ignored). */
export const defaultPasswordPolicy: PasswordPolicy = (password, user) => {
  if ([...password].length < DEFAULT_MIN_PASSWORD_LENGTH) return `the new password must have at least ${DEFAULT_MIN_PASSWORD_LENGTH} characters`;
  if (password.toLowerCase() === user.name.toLowerCase()) return 'the new password must not be the user name';
  return undefined;
};
