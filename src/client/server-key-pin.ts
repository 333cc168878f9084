import { sha256 } from '@noble/hashes/sha2.js';
import { base64, base64nopad, base64url, base64urlnopad, hex } from '@scure/base';
import { pemBody } from '../secure/keys.js';

const FINGERPRINT_HEX = /^[0-9a-f]{2}(?::?[0-9a-f]{2}){31}$/i;

/**
 * The SHA-256 of the SPKI DER a pinned `serverKey` names: the public key as a PEM
 * (`-----BEGIN PUBLIC KEY-----`), or its fingerprint as 64 hex digits (colons allowed, as
 * `openssl dgst -c` prints them) or base64, optionally after `sha256:`. A `TypeError` otherwise, at
 * `createClient`, so a mistyped pin never silently pins nothing.
 */
function pinnedKeyHash(serverKey: string): Uint8Array {
  const text = serverKey.trim();
  if (text.startsWith('-----BEGIN')) {
    const spki = pemBody(text, ['PUBLIC KEY']);
    if (!spki) throw new TypeError('serverKey: a PEM must be the public key (-----BEGIN PUBLIC KEY-----)');
    return sha256(spki.der);
  }
  const fingerprint = text.replace(/^sha-?256:/i, '');
  if (FINGERPRINT_HEX.test(fingerprint)) return hex.decode(fingerprint.replaceAll(':', '').toLowerCase());
  for (const coding of [base64, base64nopad, base64url, base64urlnopad]) {
    try {
      const bytes = coding.decode(fingerprint);
      if (bytes.length === 32) return bytes;
    } catch {
      // not this alphabet or padding
    }
  }
  throw new TypeError('serverKey must be the server public key as a PEM, or its SHA-256 fingerprint (64 hex digits or base64)');
}

/** The hashes of the `serverKey` option: one pin or a non-empty list of them. */
export function pinnedKeyHashes(serverKey: string | readonly string[]): Uint8Array[] {
  const pins = typeof serverKey === 'string' ? [serverKey] : serverKey;
  if (pins.length === 0) throw new TypeError('serverKey must name at least one key');
  return pins.map(pinnedKeyHash);
}

/** Whether the SPKI DER `der` is one of the pinned keys. */
export function isPinnedKey(der: Uint8Array, pinned: readonly Uint8Array[]): boolean {
  const actual = hex.encode(sha256(der));
  return pinned.some((hash) => hex.encode(hash) === actual);
}
