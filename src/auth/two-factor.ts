import { base64 } from '@scure/base';
import { Secret, TOTP } from 'otpauth';
import encodeQR from 'qr';
import * as v from 'valibot';
import { ApiError } from '../http/errors.js';
import { StoreConflictError } from '../storage/errors.js';
import type { Fields, ObjectStore, StoredObject } from '../storage/types.js';
import { SecretSealer, type SealingKey } from './sealing.js';
import type { EnrolmentSchema } from './two-factor-contract.js';

/** A host's policy for one application (PROTOCOL.md 2.6); an application without one has no two-factor login. */
export type TwoFactorPolicy = 'optional' | 'forced';
export type TwoFactorPolicies = Readonly<Record<string, TwoFactorPolicy>>;

/** The principal's field holding its `TwoFactorState` (internal: `_` fields are never serialized). */
export const TWO_FACTOR_FIELD = '_twoFactor';

/** RFC 6238 as PROTOCOL.md 2.6 fixes it: HMAC-SHA-1, 6 digits, 30-second steps, one step of drift either way. */
const TOTP_PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
const STEP_MS = TOTP_PARAMS.period * 1000;
const DRIFT_STEPS = 1;
const SECRET_BYTES = 20; // 160 bits, the length RFC 4226 recommends for HMAC-SHA-1
const BACKUP_CODE_COUNT = 10;
/** Backup codes: 10 characters of Crockford's base32 (50 bits), shown as `xxxxx-xxxxx`. */
const BACKUP_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const BACKUP_CODE_LENGTH = 10;
const MAX_TOKEN_LENGTH = 64;
const MAX_WRITE_ATTEMPTS = 20;

const SecretSchema = v.object({ secret: v.string(), backupCodes: v.array(v.string()) });
const StateSchema = v.object({
  confirmed: v.optional(SecretSchema),
  pending: v.optional(SecretSchema),
  lastStep: v.optional(v.pipe(v.number(), v.integer())),
});

/**
 * What `_twoFactor` holds: the confirmed secret and an enrolment awaiting confirmation (which leaves
 * the confirmed one in force until it is confirmed itself), each sealed (`SecretSealer`) with its
 * backup codes as MACs; and the last TOTP time step accepted, so no code is accepted twice.
 */
export type TwoFactorState = v.InferOutput<typeof StateSchema>;
type SealedSecret = v.InferOutput<typeof SecretSchema>;

/** One try of a read-modify-write: its outcome, and the state to write (`null`: remove it; absent: write nothing). */
interface Change<R> {
  outcome: R;
  next?: TwoFactorState | null;
}

/** What `POST /v1/2fa/secret` answers (its `answerSchema`); shown only once. */
export type Enrolment = v.InferOutput<typeof EnrolmentSchema>;

/** What a login has to do about the second factor (PROTOCOL.md 2.6). */
export type TwoFactorRequirement =
  /** no application asked for has a policy, or the user has no secret and none is forced */
  | 'none'
  /** the user holds a confirmed secret: the login needs a `2faToken` (`341` without one, `342` when wrong) */
  | 'code'
  /** a `forced` application and no confirmed secret: `340` with a session limited to `/v1/2fa/*` and logout */
  | 'enrol';

/** Which principal a call is about: its object id, or the object itself when the caller just read it. */
export type PrincipalRef = string | StoredObject;

export interface TwoFactorOptions {
  objects: ObjectStore;
  /** The host's sealing key (at least 32 bytes); several for rotation: the first seals, all open. */
  keys: SealingKey | readonly SealingKey[];
  /** `issuer` in the `otpauth://` URI: the name authenticator apps show. Default `odbrest`. */
  issuer?: string;
  now?: () => number;
}

/**
 * TOTP second factor (PROTOCOL.md 2.6) through `otpauth`, kept in each principal's `_twoFactor` field.
 * Every change is a conditional write of the principal (`ifStoreTime`) retried on conflict, so a code
 * is accepted once per user even when several instances check it at the same moment.
 */
export class TwoFactor {
  readonly #objects: ObjectStore;
  readonly #sealer: SecretSealer;
  readonly #issuer: string;
  readonly #now: () => number;

  constructor(options: TwoFactorOptions) {
    this.#objects = options.objects;
    this.#sealer = new SecretSealer(options.keys);
    this.#issuer = options.issuer ?? 'odbrest';
    this.#now = options.now ?? Date.now;
  }

  /** `isActivated`: the principal holds a secret, confirmed or not; `isConfirmed`: a confirmed one. */
  static describe(principal: StoredObject): { isActivated: boolean; isConfirmed: boolean } {
    const state = readTwoFactorState(principal.fields);
    return { isActivated: state?.confirmed !== undefined || state?.pending !== undefined, isConfirmed: state?.confirmed !== undefined };
  }

  /** A new unconfirmed secret and backup codes for the principal; a confirmed secret stays in force until this one is confirmed. */
  async enrol(principal: PrincipalRef, accountName: string): Promise<Enrolment> {
    return this.#change(principal, async (owner, state) => {
      const secret = new Secret({ size: SECRET_BYTES });
      const backupCodes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
      const otpauthUri = new TOTP({ ...TOTP_PARAMS, issuer: this.#issuer, label: accountName, secret }).toString();
      const pending = {
        secret: await this.#sealer.seal(owner, secret.bytes),
        backupCodes: await Promise.all(backupCodes.map((code) => this.#sealer.mac(owner, normalizeBackupCode(code)))),
      };
      return { outcome: { secret: secret.base32, otpauthUri, qrCode: qrCodeDataUrl(otpauthUri), backupCodes }, next: { ...state, pending } };
    });
  }

  /** Confirms the pending secret with a TOTP code of it. `none`: no enrolment awaits confirmation. */
  async confirm(principal: PrincipalRef, token: string): Promise<'confirmed' | 'refused' | 'none'> {
    return this.#change(principal, async (owner, state) => {
      if (!state?.pending) return { outcome: 'none' };
      const step = await this.#totpStep(owner, state.pending, undefined, token);
      if (step === undefined) return { outcome: 'refused' };
      return { outcome: 'confirmed', next: { confirmed: state.pending, lastStep: step } };
    });
  }

  /**
   * Checks a login's `2faToken` or a `/v1/2fa/validate` token against the confirmed secret: a TOTP code
   * of a time step later than the last one accepted, or an unused backup code. An accepted code is
   * used up. False for anything else, also when the principal holds no confirmed secret.
   */
  async verify(principal: PrincipalRef, token: string): Promise<boolean> {
    return this.#change(principal, async (owner, state) => {
      if (!state?.confirmed) return { outcome: false };
      const next = await this.#use(owner, state, 'confirmed', token);
      return next ? { outcome: true, next } : { outcome: false };
    });
  }

  /**
   * Removes the principal's two-factor login, proven by a TOTP or backup code of its confirmed secret
   * (or, with none confirmed, of the pending one). `none`: there is nothing to remove.
   */
  async remove(principal: PrincipalRef, token: string): Promise<'removed' | 'refused' | 'none'> {
    return this.#change(principal, async (owner, state) => {
      const slot = state?.confirmed ? 'confirmed' : state?.pending ? 'pending' : undefined;
      if (!state || !slot) return { outcome: 'none' };
      if (!(await this.#use(owner, state, slot, token))) return { outcome: 'refused' };
      return { outcome: 'removed', next: null };
    });
  }

  /** The time step a TOTP code of `sealed` is valid in (one step of drift either way), if later than `lastStep`. */
  async #totpStep(owner: string, sealed: SealedSecret, lastStep: number | undefined, token: string): Promise<number | undefined> {
    if (!/^\d{6}$/.test(token)) return undefined;
    const bytes = await this.#sealer.open(owner, sealed.secret);
    if (!bytes) throw new Error('a stored two-factor secret does not open with the configured twoFactor.key');
    const timestamp = this.#now();
    const delta = TOTP.validate({ ...TOTP_PARAMS, token, secret: new Secret({ buffer: bytes.slice().buffer }), timestamp, window: DRIFT_STEPS });
    if (delta === null) return undefined;
    const step = Math.floor(timestamp / STEP_MS) + delta;
    return lastStep !== undefined && step <= lastStep ? undefined : step;
  }

  /** The state after using up `token` (a TOTP code or a backup code) of the secret in `slot`; `undefined` when refused. */
  async #use(owner: string, state: TwoFactorState, slot: 'confirmed' | 'pending', token: string): Promise<TwoFactorState | undefined> {
    const sealed = state[slot];
    if (!sealed || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return undefined;
    const step = await this.#totpStep(owner, sealed, state.lastStep, token);
    if (step !== undefined) return { ...state, lastStep: step };
    const code = normalizeBackupCode(token);
    if (code.length !== BACKUP_CODE_LENGTH) return undefined;
    const index = await this.#sealer.findMac(owner, code, sealed.backupCodes);
    if (index < 0) return undefined;
    return { ...state, [slot]: { ...sealed, backupCodes: sealed.backupCodes.filter((_, i) => i !== index) } };
  }

  /**
   * Read-modify-write of the principal's state: `change` runs again on the fresh object when another
   * write came between its read and its conditional write.
   */
  async #change<R>(principal: PrincipalRef, change: (owner: string, state: TwoFactorState | undefined) => Promise<Change<R>>): Promise<R> {
    let current = typeof principal === 'string' ? undefined : principal;
    const id = typeof principal === 'string' ? principal : principal.id;
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      current ??= await this.#objects.get(id);
      if (!current) throw new ApiError('201', 'the user of this session no longer exists');
      const { outcome, next } = await change(current.id, readTwoFactorState(current.fields));
      if (next === undefined) return outcome;
      const { [TWO_FACTOR_FIELD]: _old, ...others } = current.fields;
      const fields: Fields = next === null ? others : { ...others, [TWO_FACTOR_FIELD]: next };
      try {
        await this.#objects.put({ id: current.id, className: current.className, fields, ifStoreTime: current.storeTime });
        return outcome;
      } catch (error) {
        if (!(error instanceof StoreConflictError)) throw error;
        current = undefined;
      }
    }
    throw new ApiError('503', 'the user is being changed by other requests, retry later');
  }
}

/** The principal's two-factor state, `undefined` when it has none. A malformed one throws: a second factor never silently lapses. */
export function readTwoFactorState(fields: Fields): TwoFactorState | undefined {
  const stored = fields[TWO_FACTOR_FIELD];
  if (stored === undefined || stored === null) return undefined;
  const parsed = v.safeParse(StateSchema, stored);
  if (!parsed.success) throw new Error(`the stored ${TWO_FACTOR_FIELD} field is malformed`);
  return parsed.output;
}

/** What a login asking for `appNames` must do about the second factor (PROTOCOL.md 2.6). */
export function twoFactorRequirement(policies: TwoFactorPolicies, appNames: readonly string[], principal: StoredObject): TwoFactorRequirement {
  const asked = appNames.map((app) => policyOf(policies, app)).filter((policy) => policy !== undefined);
  if (asked.length === 0) return 'none';
  if (readTwoFactorState(principal.fields)?.confirmed !== undefined) return 'code';
  return asked.includes('forced') ? 'enrol' : 'none';
}

/**
 * `2faStatus` of `GET /v1/2fa/secret`: 0 the application has no policy, 1 it is optional and this
 * user has not switched it on (no confirmed secret), 2 optional and on, 3 forced.
 */
export function twoFactorStatus(policies: TwoFactorPolicies, app: string, principal: StoredObject): 0 | 1 | 2 | 3 {
  const policy = policyOf(policies, app);
  if (policy === undefined) return 0;
  if (policy === 'forced') return 3;
  return TwoFactor.describe(principal).isConfirmed ? 2 : 1;
}

function policyOf(policies: TwoFactorPolicies, app: string): TwoFactorPolicy | undefined {
  return Object.hasOwn(policies, app) ? policies[app] : undefined;
}

/**
 * A QR code of `text` as an SVG data URL, through the `qr` package, on a white ground (its own is
 * transparent, which a dark page turns into dark modules on dark: unreadable to a camera).
 */
export function qrCodeDataUrl(text: string): string {
  const svg = encodeQR(text, 'svg', { ecc: 'medium', border: 4 }).replace(/^<svg([^>]*)>/, '<svg$1><rect width="100%" height="100%" fill="#fff"/>');
  return `data:image/svg+xml;base64,${base64.encode(new TextEncoder().encode(svg))}`;
}

function newBackupCode(): string {
  const chars = Array.from(crypto.getRandomValues(new Uint8Array(BACKUP_CODE_LENGTH)), (byte) => BACKUP_ALPHABET[byte & 31]);
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

/** Case, spaces and dashes do not matter, nor the letters Crockford's base32 reads as digits (o, i, l). */
function normalizeBackupCode(token: string): string {
  return token
    .toLowerCase()
    .replace(/[\s-]/g, '')
    .replace(/o/g, '0')
    .replace(/[il]/g, '1');
}
