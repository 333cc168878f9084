import { gcm } from '@noble/ciphers/aes.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64urlnopad } from '@scure/base';

/**
 * The Secure-Token (PROTOCOL.md 3.3): the internal session id sealed with AES-256-GCM under a key
 * derived from the server's RSA key, so it reveals nothing about the session, cannot be forged, and
 * every instance that shares the configured server key can open it.
 */
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NONCE_BYTES = 12;
const MAX_TOKEN_CHARS = 512;

/** The sealing key: HMAC-SHA-256 keyed with the RSA private exponent (canonical for any PEM encoding). */
export function deriveTokenKey(privateExponent: Uint8Array): Uint8Array {
  return hmac(sha256, privateExponent, encoder.encode('odbrest secure token key'));
}

export function sealToken(tokenKey: Uint8Array, sessionId: string): string {
  const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const sealed = gcm(tokenKey, nonce).encrypt(encoder.encode(sessionId));
  const out = new Uint8Array(NONCE_BYTES + sealed.length);
  out.set(nonce);
  out.set(sealed, NONCE_BYTES);
  return base64urlnopad.encode(out);
}

/** The session id sealed in `token`, or `undefined` for anything not sealed with this key. */
export function openToken(tokenKey: Uint8Array, token: string): string | undefined {
  if (token.length > MAX_TOKEN_CHARS) return undefined;
  try {
    const bytes = base64urlnopad.decode(token.trim());
    if (bytes.length <= NONCE_BYTES + 16) return undefined;
    return decoder.decode(gcm(tokenKey, bytes.subarray(0, NONCE_BYTES)).decrypt(bytes.subarray(NONCE_BYTES)));
  } catch {
    return undefined;
  }
}
