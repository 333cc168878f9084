import { ApiError, clip } from '../http/errors.js';
import type { ObjectStore, StoredObject } from '../storage/types.js';
import type { SealingKey } from './sealing.js';
import { TwoFactor, twoFactorRequirement, twoFactorStatus, type TwoFactorPolicies, type TwoFactorPolicy, type TwoFactorRequirement } from './two-factor.js';

/** The `twoFactor` service option (PROTOCOL.md 2.6). */
export interface TwoFactorLoginOptions {
  /**
   * The policy of each application that offers two-factor login: `optional` or `forced`; an
   * application not named has none. (PROTOCOL.md writes this map as `twoFactor: {<app>: ...}`.)
   */
  policies?: Readonly<Record<string, TwoFactorPolicy>>;
  /**
   * Seals the users' TOTP secrets at rest, so that a copy of the database alone does not give them
   * away: at least 32 bytes (a string counts its UTF-8 bytes). Several for rotation: the first seals,
   * every one opens. Required as soon as any application has a policy.
   */
  key?: SealingKey | readonly SealingKey[];
  /** The name authenticator apps show for the service (`issuer` of the `otpauth://` URI). Default `odbrest`. */
  issuer?: string;
}

/** Two-factor login as configured: the policies, and the TOTP codes (absent when no key is configured). */
export class TwoFactorLogin {
  readonly policies: TwoFactorPolicies;
  readonly #codes: TwoFactor | undefined;

  constructor(objects: ObjectStore, options: TwoFactorLoginOptions = {}, now?: () => number) {
    const policies: Record<string, TwoFactorPolicy> = Object.create(null);
    for (const [app, policy] of Object.entries(options.policies ?? {})) {
      if (policy !== 'optional' && policy !== 'forced') {
        throw new Error(`twoFactor.policies.${app} must be "optional" or "forced", not ${JSON.stringify(policy)}`);
      }
      policies[app] = policy;
    }
    this.policies = Object.freeze(policies);
    if (Object.keys(policies).length > 0 && options.key === undefined) {
      throw new Error('twoFactor.key is required when twoFactor.policies names an application (it seals the users\' secrets)');
    }
    this.#codes = options.key === undefined ? undefined : new TwoFactor({ objects, keys: options.key, issuer: options.issuer, now });
  }

  /** The TOTP secrets and codes; `403` when the service has no two-factor key. */
  get codes(): TwoFactor {
    if (!this.#codes) throw new ApiError('403', 'two-factor login is not configured on this service');
    return this.#codes;
  }

  /** What a login asking for `appNames` must do about the second factor. */
  requirement(appNames: readonly string[], principal: StoredObject): TwoFactorRequirement {
    return twoFactorRequirement(this.policies, appNames, principal);
  }

  /** `2faStatus` of `app` for `principal` (0 not available, 1 deactivated, 2 optional and on, 3 forced). */
  status(app: string, principal: StoredObject): 0 | 1 | 2 | 3 {
    return twoFactorStatus(this.policies, app, principal);
  }

  /** The first of `appNames` whose policy is `forced` (the one a `340` names). */
  forcedApp(appNames: readonly string[]): string | undefined {
    return appNames.find((app) => Object.hasOwn(this.policies, app) && this.policies[app] === 'forced');
  }

  /** Throws `403` unless `app` has a policy (enrolment is offered only where two-factor login applies). */
  checkAvailable(app: string): void {
    if (!Object.hasOwn(this.policies, app)) {
      throw new ApiError('403', `two-factor login is not available for application ${JSON.stringify(clip(app))}`);
    }
  }
}
