/**
 * An RFC 6238 implementation of the tests' own, on node:crypto, independent of the `otpauth` library
 * the service uses: codes the tests type in come from here, and it is checked against the RFC's vectors.
 */
import { createHmac } from 'node:crypto';

/** TOTP (HMAC-SHA-1) of `key` for the time step `step` (RFC 4226 dynamic truncation). */
export function totpAtStep(key: Uint8Array, step: number, digits = 6): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** TOTP of `key` at `epochMs` with 30-second steps from the Unix epoch. */
export function totpAt(key: Uint8Array, epochMs: number, digits = 6): string {
  return totpAtStep(key, Math.floor(epochMs / 30_000), digits);
}

/** RFC 4648 base32 (no padding) to bytes. */
export function base32Decode(text: string): Uint8Array {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of text.replace(/=+$/, '')) {
    const index = alphabet.indexOf(char);
    if (index < 0) throw new Error(`not base32: ${char}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >>> bits) & 0xff);
    }
  }
  return Uint8Array.from(out);
}
