import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConditionalObjectStore } from './conditional-store.js';
import { readQr } from './qr-reader.js';
import { TwoFactor, qrCodeDataUrl } from '../../src/auth/two-factor.js';

describe('the QR code of an enrolment', () => {
  it('in the README (examples/two-factor-qr.svg) decodes to the URI of the RFC 6238 test secret', () => {
    const svg = readFileSync(new URL('../../examples/two-factor-qr.svg', import.meta.url));
    expect(readQr(`data:image/svg+xml;base64,${svg.toString('base64')}`)).toBe(
      'otpauth://totp/odbrest%20demo:alice?issuer=odbrest%20demo&secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&algorithm=SHA1&digits=6&period=30',
    );
  });

  it('decodes back to the otpauth URI', async () => {
    const objects = new ConditionalObjectStore();
    const user = await objects.put({ className: 'User', fields: { Name: 'alice' } });
    const enrolment = await new TwoFactor({ objects, keys: 'a host key of at least thirty-two bytes', issuer: 'Example HR' }).enrol(user, 'alice@example.com');
    expect(readQr(enrolment.qrCode)).toBe(enrolment.otpauthUri);
  });

  it.each([
    ['a short text', 'short'],
    ['non-ASCII text', 'otpauth://totp/é ✓?secret=ABC&issuer=Ünïcode'],
    ['300 characters', 'x'.repeat(300)],
  ])('decodes back to %s', (_, text) => {
    expect(readQr(qrCodeDataUrl(text))).toBe(text);
  });
});
