import type { AccountUserOptions } from '../accounts/options.js';
import type { ObjectStore, StoredObject } from '../storage/types.js';
import { clientPassValue, dummyPasswordHash, verifyPassword } from './passwords.js';

/** Checks a `/v1/auth/df` login; returns the principal's object, or `undefined` for wrong credentials. */
export type CustomAuthenticator = (user: string, pass: string) => Promise<StoredObject | undefined>;

/** The `users` service option: database users (PROTOCOL.md 2). */
export interface UserOptions extends AccountUserOptions {
  /** Class of database users, found by `Name`. Default `User`. */
  className?: string;
  /** PBKDF2 iterations for hashes made by this service (seed passwords). Default 210,000. */
  passwordIterations?: number;
  /**
   * Accept `pass` as the password itself (the C# sample's form), MD5-hashed by the server before it
   * is checked, beside the lower-case hex MD5 the Dart client sends (PROTOCOL.md 2.1). Default true.
   */
  acceptPlainPasswords?: boolean;
  /** The group (its `Name`) whose members may act on other users (PROTOCOL.md 2.6, 2.8). Default: none. */
  admins?: string;
}

const MD5_FORM = /^[0-9a-f]{32}$/;

/**
 * The MD5 form of a login's `pass` (what stored hashes are made of): 32 lower-case hex digits are
 * that form already; anything else is the password itself, hashed here, or `undefined` when plain
 * passwords are turned off (the login then fails as a wrong password does).
 */
export function passValue(pass: string, acceptPlain = true): string | undefined {
  if (MD5_FORM.test(pass)) return pass;
  return acceptPlain ? clientPassValue(pass) : undefined;
}

/** The `customLogin` service option: `/v1/auth/df` principals (PROTOCOL.md 5.4). */
export interface CustomLoginOptions {
  /** Class checked by the default `/v1/auth/df` login, found by `Name`. Default `ContactPerson`. */
  className?: string;
  /** Replaces the default check. */
  authenticate?: CustomAuthenticator;
}

/** Which kind of principal a login checks: database users, or custom-login principals. */
export type PrincipalKind = 'db' | 'df';

/** A password check under way for the principal a login names. */
export interface PasswordCheck {
  /**
   * The principal the login names, known before its password is verified (so a login can prepare its
   * answer meanwhile); `undefined` when no such principal exists or the host's own check decides.
   */
  candidate: StoredObject | undefined;
  /** The principal once its password matched, or `undefined`. */
  verified: Promise<StoredObject | undefined>;
}

/**
 * Finds the principal a login names and verifies its password at a constant cost: an unknown name
 * costs one slow hash against a dummy, as a known one does.
 */
export class Principals {
  readonly userClass: string;
  /** `users.admins`: the group whose members may act on other users, if any. */
  readonly admins: string | undefined;
  readonly #customClass: string;
  readonly #authenticateCustom: CustomAuthenticator | undefined;
  readonly #iterations: number | undefined;
  readonly #acceptPlain: boolean;
  #dummyHash: Promise<string> | undefined;

  constructor(
    private readonly store: ObjectStore,
    users: UserOptions = {},
    custom: CustomLoginOptions = {},
  ) {
    this.userClass = users.className ?? 'User';
    this.admins = users.admins;
    this.#iterations = users.passwordIterations;
    this.#acceptPlain = users.acceptPlainPasswords ?? true;
    this.#customClass = custom.className ?? 'ContactPerson';
    this.#authenticateCustom = custom.authenticate;
  }

  /** The database user with this name, if any. */
  async findUser(name: string): Promise<StoredObject | undefined> {
    return this.#findByName(this.userClass, name);
  }

  /** Starts the password check of the principal `user` names (the hash runs while the caller goes on). */
  async check(kind: PrincipalKind, user: string, pass: string): Promise<PasswordCheck> {
    // the host's own check gets `pass` as sent and decides itself
    if (kind === 'df' && this.#authenticateCustom) return { candidate: undefined, verified: this.#authenticateCustom(user, pass) };
    const value = passValue(pass, this.#acceptPlain);
    const candidate = await this.#findByName(kind === 'db' ? this.userClass : this.#customClass, user);
    return { candidate, verified: this.#verify(candidate, value) };
  }

  /** A refused plain password costs the same slow hash as a wrong one. */
  async #verify(candidate: StoredObject | undefined, pass: string | undefined): Promise<StoredObject | undefined> {
    const stored = candidate?.fields._passwordHash;
    // a disabled user's password is checked all the same, so its refusal takes the time of a wrong password's
    if (typeof stored === 'string' && pass !== undefined) return (await verifyPassword(pass, stored)) && candidate?.fields._disabled !== true ? candidate : undefined;
    this.#dummyHash ??= dummyPasswordHash(this.#iterations);
    await verifyPassword(pass ?? '', await this.#dummyHash);
    return undefined;
  }

  async #findByName(className: string, name: string): Promise<StoredObject | undefined> {
    const { objects } = await this.store.find({ className, where: { Name: name }, limit: 1 });
    return objects[0];
  }
}
