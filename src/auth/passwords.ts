import { md5 } from '@noble/hashes/legacy.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { base64 } from '@scure/base';

/**
 * Password hashes are `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>` of the `pass` value a client
 * sends (the real client sends the hex MD5 of the password). PBKDF2 runs in WebCrypto, so it is
 * native on every runtime.
 */
const PREFIX = 'pbkdf2-sha256';
export const DEFAULT_PASSWORD_ITERATIONS = 210_000;
const encoder = new TextEncoder();

async function derive(pass: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(pass), 'PBKDF2', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: salt as Uint8Array<ArrayBuffer>, iterations }, key, 256);
  return new Uint8Array(bits);
}

export async function hashPassword(pass: string, iterations = DEFAULT_PASSWORD_ITERATIONS): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const hash = await derive(pass, salt, iterations);
  return `${PREFIX}$${iterations}$${base64.encode(salt)}$${base64.encode(hash)}`;
}

/** A hash of a random value: verifying against it costs as much as a real check and always fails. */
export async function dummyPasswordHash(iterations = DEFAULT_PASSWORD_ITERATIONS): Promise<string> {
  return hashPassword(crypto.randomUUID(), iterations);
}

/** Constant-time check of `pass` against a stored hash; a malformed hash never matches. */
export async function verifyPassword(pass: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  const iterations = Number(parts[1]);
  if (parts.length !== 4 || parts[0] !== PREFIX || !Number.isSafeInteger(iterations) || iterations < 1) return false;
  let salt: Uint8Array;
  let expected: Uint8Array;
  try {
    salt = base64.decode(parts[2]!);
    expected = base64.decode(parts[3]!);
  } catch {
    return false;
  }
  return timingSafeEqual(await derive(pass, salt, iterations), expected);
}

export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** The `pass` value the real client sends for a password: lower-case hex MD5 of its UTF-8 bytes. */
export function clientPassValue(password: string): string {
  return bytesToHex(md5(encoder.encode(password)));
}
