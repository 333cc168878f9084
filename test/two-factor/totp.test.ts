import { beforeEach, describe, expect, it } from 'vitest';
import { ConditionalObjectStore } from './conditional-store.js';
import type { StoredObject } from '../../src/storage/types.js';
import {
  TWO_FACTOR_FIELD,
  TwoFactor,
  twoFactorRequirement,
  twoFactorStatus,
  type Enrolment,
  type TwoFactorPolicies,
} from '../../src/auth/two-factor.js';
import { base32Decode, totpAt, totpAtStep } from './rfc6238.js';

const KEY = 'a host key of at least thirty-two bytes';
const OTHER_KEY = 'another host key, also 32 bytes or more';
const STEP = 30_000;
/** Ten seconds into a time step, so a few seconds either way stay in it. */
const T0 = Date.UTC(2026, 0, 1) + 10_000;

describe('the independent RFC 6238 implementation', () => {
  // RFC 6238 appendix B, SHA-1, seed "12345678901234567890", 8 digits
  const seed = new TextEncoder().encode('12345678901234567890');
  it.each([
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ])('at %i s gives %s', (seconds, code) => {
    expect(totpAt(seed, seconds * 1000, 8)).toBe(code);
  });
});

describe('TwoFactor', () => {
  let now: number;
  let objects: ConditionalObjectStore;
  let twoFactor: TwoFactor;
  let alice: StoredObject;

  beforeEach(async () => {
    now = T0;
    objects = new ConditionalObjectStore();
    twoFactor = new TwoFactor({ objects, keys: KEY, issuer: 'Example HR', now: () => now });
    alice = await objects.put({ className: 'User', fields: { Name: 'alice', _licences: ['hr'] } });
  });

  const stored = async (id = alice.id) => (await objects.get(id))!;
  const secretOf = (enrolment: Enrolment) => base32Decode(enrolment.secret);
  /** Enrols alice and confirms with the code of the current step; answers the secret's bytes and the enrolment. */
  async function enrolled(): Promise<{ key: Uint8Array; enrolment: Enrolment }> {
    const enrolment = await twoFactor.enrol(alice.id, 'alice');
    const key = secretOf(enrolment);
    expect(await twoFactor.confirm(alice.id, totpAt(key, now))).toBe('confirmed');
    return { key, enrolment };
  }

  describe('enrolment', () => {
    it('answers a base32 secret, its otpauth URI, a QR code and 10 backup codes', async () => {
      const enrolment = await twoFactor.enrol(alice.id, 'alice');
      expect(enrolment.secret).toMatch(/^[A-Z2-7]{32}$/); // 20 bytes
      expect(secretOf(enrolment)).toHaveLength(20);
      const uri = new URL(enrolment.otpauthUri);
      expect(`${uri.protocol}//${uri.host}${decodeURIComponent(uri.pathname)}`).toBe('otpauth://totp/Example HR:alice');
      expect(Object.fromEntries(uri.searchParams)).toEqual({
        issuer: 'Example HR',
        secret: enrolment.secret,
        algorithm: 'SHA1',
        digits: '6',
        period: '30',
      });
      expect(enrolment.qrCode).toMatch(/^data:image\/svg\+xml;base64,[A-Za-z0-9+/]+=*$/);
      expect(enrolment.backupCodes).toHaveLength(10);
      expect(new Set(enrolment.backupCodes).size).toBe(10);
      for (const code of enrolment.backupCodes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/);
    });

    it('is not in force until confirmed, and a wrong code does not confirm it', async () => {
      const enrolment = await twoFactor.enrol(alice.id, 'alice');
      expect(TwoFactor.describe(await stored())).toEqual({ isActivated: true, isConfirmed: false });
      expect(await twoFactor.verify(alice.id, totpAt(secretOf(enrolment), now))).toBe(false);
      expect(await twoFactor.confirm(alice.id, wrong(totpAt(secretOf(enrolment), now)))).toBe('refused');
      expect(await twoFactor.confirm(alice.id, enrolment.backupCodes[0]!)).toBe('refused');
      expect(TwoFactor.describe(await stored())).toEqual({ isActivated: true, isConfirmed: false });
      expect(await twoFactor.confirm(alice.id, totpAt(secretOf(enrolment), now))).toBe('confirmed');
      expect(TwoFactor.describe(await stored())).toEqual({ isActivated: true, isConfirmed: true });
    });

    it('has nothing to confirm before an enrolment', async () => {
      expect(await twoFactor.confirm(alice.id, '123456')).toBe('none');
      expect(TwoFactor.describe(await stored())).toEqual({ isActivated: false, isConfirmed: false });
    });

    it('keeps the confirmed secret in force while a new one awaits confirmation, then replaces it', async () => {
      const { key: oldKey } = await enrolled();
      now += 2 * STEP;
      const next = await twoFactor.enrol(alice.id, 'alice');
      expect(await twoFactor.verify(alice.id, totpAt(oldKey, now))).toBe(true);
      now += 2 * STEP;
      expect(await twoFactor.confirm(alice.id, totpAt(secretOf(next), now))).toBe('confirmed');
      now += 2 * STEP;
      expect(await twoFactor.verify(alice.id, totpAt(oldKey, now))).toBe(false);
      expect(await twoFactor.verify(alice.id, totpAt(secretOf(next), now))).toBe(true);
    });

    it('keeps the other fields of the user', async () => {
      await enrolled();
      expect((await stored()).fields).toMatchObject({ Name: 'alice', _licences: ['hr'] });
    });
  });

  describe('codes', () => {
    it('accepts a code of the current step once', async () => {
      const { key } = await enrolled();
      now += STEP;
      const code = totpAt(key, now);
      expect(await twoFactor.verify(alice.id, code)).toBe(true);
      expect(await twoFactor.verify(alice.id, code)).toBe(false);
    });

    it('refuses a code reused later in its window (one step of drift)', async () => {
      const { key } = await enrolled();
      now += STEP;
      const code = totpAt(key, now);
      expect(await twoFactor.verify(alice.id, code)).toBe(true);
      now += STEP - 1; // the next step: the code is still valid as one step behind
      expect(await twoFactor.verify(alice.id, code)).toBe(false);
    });

    it('refuses the code that confirmed the secret', async () => {
      const { key } = await enrolled();
      expect(await twoFactor.verify(alice.id, totpAt(key, now))).toBe(false);
    });

    it('accepts a code one step behind or ahead of the clock', async () => {
      const { key } = await enrolled();
      now += 10 * STEP;
      const step = Math.floor(now / STEP);
      expect(await twoFactor.verify(alice.id, totpAtStep(key, step - 1))).toBe(true);
      now += 10 * STEP;
      expect(await twoFactor.verify(alice.id, totpAtStep(key, Math.floor(now / STEP) + 1))).toBe(true);
    });

    it('refuses a code two steps behind or ahead of the clock', async () => {
      const { key } = await enrolled();
      now += 10 * STEP;
      const step = Math.floor(now / STEP);
      expect(await twoFactor.verify(alice.id, totpAtStep(key, step - 2))).toBe(false);
      expect(await twoFactor.verify(alice.id, totpAtStep(key, step + 2))).toBe(false);
      expect(await twoFactor.verify(alice.id, totpAtStep(key, step))).toBe(true);
    });

    it('refuses a code of a step before the last one accepted', async () => {
      const { key } = await enrolled();
      now += 10 * STEP;
      const step = Math.floor(now / STEP);
      expect(await twoFactor.verify(alice.id, totpAtStep(key, step + 1))).toBe(true);
      expect(await twoFactor.verify(alice.id, totpAtStep(key, step))).toBe(false);
    });

    it.each([
      ['a wrong code', (code: string) => wrong(code)],
      ['an empty token', () => ''],
      ['five digits', (code: string) => code.slice(1)],
      ['seven digits', (code: string) => `${code}0`],
      ['the code with spaces', (code: string) => ` ${code} `],
      ['letters', () => 'abcdef'],
      ['a very long token', (code: string) => code.repeat(10_000)],
    ])('refuses %s', async (_, token) => {
      const { key } = await enrolled();
      now += STEP;
      expect(await twoFactor.verify(alice.id, token(totpAt(key, now)))).toBe(false);
      expect(await twoFactor.verify(alice.id, totpAt(key, now))).toBe(true);
    });

    it('accepts a code once when ten checks of it run at the same time', async () => {
      const { key } = await enrolled();
      now += STEP;
      const code = totpAt(key, now);
      const results = await Promise.all(Array.from({ length: 10 }, () => twoFactor.verify(alice.id, code)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('refuses every code of a user without a confirmed secret', async () => {
      expect(await twoFactor.verify(alice.id, '123456')).toBe(false);
    });
  });

  describe('backup codes', () => {
    it('accepts each once, in any case and with or without the dash', async () => {
      const { enrolment } = await enrolled();
      const [first, second, third] = enrolment.backupCodes as [string, string, string];
      expect(await twoFactor.verify(alice.id, first)).toBe(true);
      expect(await twoFactor.verify(alice.id, first)).toBe(false);
      expect(await twoFactor.verify(alice.id, second.toUpperCase())).toBe(true);
      expect(await twoFactor.verify(alice.id, third.replace('-', ''))).toBe(true);
      expect(await twoFactor.verify(alice.id, third)).toBe(false);
    });

    it('refuses a made-up code and the codes of a replaced enrolment', async () => {
      const first = await twoFactor.enrol(alice.id, 'alice');
      await enrolled();
      expect(await twoFactor.verify(alice.id, 'abcde-fghjk')).toBe(false);
      expect(await twoFactor.verify(alice.id, first.backupCodes[0]!)).toBe(false);
    });
  });

  describe('at rest', () => {
    it('stores neither the secret nor the backup codes in a readable form', async () => {
      const { key, enrolment } = await enrolled();
      const field = JSON.stringify((await stored()).fields[TWO_FACTOR_FIELD]);
      const raw = JSON.stringify(await stored());
      for (const text of [enrolment.secret, Buffer.from(key).toString('hex'), Buffer.from(key).toString('base64'), Buffer.from(key).toString('base64url')]) {
        expect(raw).not.toContain(text);
      }
      for (const code of enrolment.backupCodes) {
        expect(raw).not.toContain(code);
        expect(raw).not.toContain(code.replace('-', ''));
      }
      expect(field).toMatch(/"secret":"v1\./);
    });

    it('is unreadable without the host key: another key cannot check codes', async () => {
      const { key } = await enrolled();
      now += STEP;
      const elsewhere = new TwoFactor({ objects, keys: OTHER_KEY, now: () => now });
      await expect(elsewhere.verify(alice.id, totpAt(key, now))).rejects.toThrow(/does not open with the configured twoFactor.key/);
      expect(await twoFactor.verify(alice.id, totpAt(key, now))).toBe(true);
    });

    it('opens with an older key listed after a new one (rotation)', async () => {
      const { key, enrolment } = await enrolled();
      now += STEP;
      const rotated = new TwoFactor({ objects, keys: [OTHER_KEY, KEY], now: () => now });
      expect(await rotated.verify(alice.id, totpAt(key, now))).toBe(true);
      expect(await rotated.verify(alice.id, enrolment.backupCodes[0]!)).toBe(true);
    });

    it('does not open when copied onto another user', async () => {
      const { key, enrolment } = await enrolled();
      const copied = (await stored()).fields[TWO_FACTOR_FIELD]!;
      const mallory = await objects.put({ className: 'User', fields: { Name: 'mallory', [TWO_FACTOR_FIELD]: copied } });
      now += STEP;
      await expect(twoFactor.verify(mallory.id, totpAt(key, now))).rejects.toThrow(/does not open/);
      expect(await twoFactor.verify(mallory.id, enrolment.backupCodes[0]!)).toBe(false);
    });

    it.each([['a'.repeat(31)], [new Uint8Array(31)], [[]]])('refuses a host key shorter than 32 bytes (%#)', (keys) => {
      expect(() => new TwoFactor({ objects, keys: keys as string })).toThrow(/twoFactor\.key/);
    });

    it('refuses to guess on a malformed stored state', async () => {
      const broken = await objects.put({ className: 'User', fields: { Name: 'bob', [TWO_FACTOR_FIELD]: { confirmed: 'yes' } } });
      await expect(twoFactor.verify(broken.id, '123456')).rejects.toThrow(/malformed/);
      expect(() => twoFactorRequirement({ hr: 'optional' }, ['hr'], broken)).toThrow(/malformed/);
    });
  });

  describe('removal', () => {
    it('needs a valid code, then leaves no trace', async () => {
      const { key } = await enrolled();
      now += STEP;
      expect(await twoFactor.remove(alice.id, wrong(totpAt(key, now)))).toBe('refused');
      expect(TwoFactor.describe(await stored()).isConfirmed).toBe(true);
      expect(await twoFactor.remove(alice.id, totpAt(key, now))).toBe('removed');
      expect((await stored()).fields).toEqual({ Name: 'alice', _licences: ['hr'] });
      expect(await twoFactor.remove(alice.id, totpAt(key, now))).toBe('none');
    });

    it('takes a backup code too', async () => {
      const { enrolment } = await enrolled();
      expect(await twoFactor.remove(alice.id, enrolment.backupCodes[3]!)).toBe('removed');
      expect(TwoFactor.describe(await stored())).toEqual({ isActivated: false, isConfirmed: false });
    });

    it('drops an unconfirmed enrolment with a code of it', async () => {
      const enrolment = await twoFactor.enrol(alice.id, 'alice');
      expect(await twoFactor.remove(alice.id, totpAt(secretOf(enrolment), now))).toBe('removed');
      expect(TwoFactor.describe(await stored())).toEqual({ isActivated: false, isConfirmed: false });
    });
  });

  describe('what a login needs', () => {
    const policies: TwoFactorPolicies = { hr: 'optional', payroll: 'forced' };

    it('asks users with a confirmed secret for a code in any application with a policy', async () => {
      await enrolled();
      const user = await stored();
      expect(twoFactorRequirement(policies, ['hr'], user)).toBe('code');
      expect(twoFactorRequirement(policies, ['crm', 'payroll'], user)).toBe('code');
      expect(twoFactorRequirement(policies, ['crm'], user)).toBe('none');
      expect(twoFactorRequirement(policies, [], user)).toBe('none');
    });

    it('sends users without one to enrolment only for a forced application', async () => {
      await twoFactor.enrol(alice.id, 'alice'); // unconfirmed: not in force
      const user = await stored();
      expect(twoFactorRequirement(policies, ['hr'], user)).toBe('none');
      expect(twoFactorRequirement(policies, ['hr', 'payroll'], user)).toBe('enrol');
      expect(twoFactorRequirement(policies, ['toString', '__proto__'], user)).toBe('none');
    });

    it('reports the 2faStatus of an application for the user', async () => {
      expect(twoFactorStatus(policies, 'crm', await stored())).toBe(0);
      expect(twoFactorStatus(policies, 'hr', await stored())).toBe(1);
      expect(twoFactorStatus(policies, 'payroll', await stored())).toBe(3);
      await enrolled();
      expect(twoFactorStatus(policies, 'hr', await stored())).toBe(2);
      expect(twoFactorStatus(policies, 'constructor', await stored())).toBe(0);
    });
  });
});

/** The same code with its last digit changed. */
function wrong(code: string): string {
  return code.slice(0, -1) + String((Number(code.at(-1)) + 1) % 10);
}
