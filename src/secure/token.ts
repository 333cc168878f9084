import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { base64urlnopad } from '@scure/base';

/**
 * The Secure-Token (PROTOCOL.md 3.3): the internal session id sealed with AES-256-GCM under a key
 * derived from the server's RSA key, so it reveals nothing about the session, cannot be forged, and
 * every instance that shares the configured server key can open it. GCM runs in WebCrypto: in
 * @noble/ciphers its per-key setup made one seal cost more than 100 µs.
 */
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const MAX_TOKEN_CHARS = 512;

/** The sealing key: HMAC-SHA-256 keyed with the RSA private exponent (canonical for any PEM encoding). */
export function deriveTokenKey(privateExponent: Uint8Array): Promise<CryptoKey> {
  const raw = hmac(sha256, privateExponent, encoder.encode('odbrest secure token key')) as Uint8Array<ArrayBuffer>;
  return crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
}

export async function sealToken(tokenKey: CryptoKey, sessionId: string): Promise<string> {
  const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce }, tokenKey, encoder.encode(sessionId)));
  return base64urlnopad.encode(concatBytes(nonce, sealed));
}

/** The session id sealed in `token`, or `undefined` for anything not sealed with this key. */
export async function openToken(tokenKey: CryptoKey, token: string): Promise<string | undefined> {
  if (token.length > MAX_TOKEN_CHARS) return undefined;
  try {
    const bytes = base64urlnopad.decode(token) as Uint8Array<ArrayBuffer>;
    if (bytes.length <= NONCE_BYTES + TAG_BYTES) return undefined;
    const iv = bytes.subarray(0, NONCE_BYTES);
    return decoder.decode(await crypto.subtle.decrypt({ name: 'AES-GCM', iv }, tokenKey, bytes.subarray(NONCE_BYTES)));
  } catch {
    return undefined;
  }
}
