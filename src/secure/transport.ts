import { ctr } from '@noble/ciphers/aes.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64 } from '@scure/base';
import { timingSafeEqual } from '../auth/passwords.js';

/**
 * The message layer of the secure transport (PROTOCOL.md 4), shared by the service and the client:
 * counter blocks, AES-256-CTR bodies and HMAC-SHA-256 signatures. Pure and synchronous.
 */

const encoder = new TextEncoder();
const MAC_LABEL = encoder.encode('odbrest secure transport mac');

/** `d` of the counter block: 0 for a request, 1 for its response. */
export type Direction = 0 | 1;

/** Highest message number either side uses; keeps counters exact in a JS number and in JSON. */
export const MAX_COUNTER = Number.MAX_SAFE_INTEGER;

/** The 16-byte initial counter block `uint64_be(d * 2^63 + n) || uint64_be(0)`. */
export function counterBlock(n: number, direction: Direction): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError('message number must be a positive safe integer');
  const block = new Uint8Array(16);
  const view = new DataView(block.buffer);
  // n < 2^53, so its high word fits in 21 bits and bit 63 is free for the direction.
  view.setUint32(0, (Math.floor(n / 2 ** 32) | (direction << 31)) >>> 0);
  view.setUint32(4, n >>> 0);
  return block;
}

/** `M` = HMAC-SHA-256(K, "odbrest secure transport mac"): the signing key derived from the session key. */
export function macKey(sessionKey: Uint8Array): Uint8Array {
  return hmac(sha256, sessionKey, MAC_LABEL);
}

/** AES-256-CTR from the message's counter block (the same call encrypts and decrypts). */
export function ctrCipher(sessionKey: Uint8Array, n: number, direction: Direction, data: Uint8Array): Uint8Array {
  return ctr(sessionKey, counterBlock(n, direction)).encrypt(data);
}

/** The base64 body text of a message: base64(AES-256-CTR(K, counter block, UTF-8 text)). */
export function encryptBody(sessionKey: Uint8Array, n: number, direction: Direction, plaintext: string): string {
  if (plaintext === '') return '';
  return base64.encode(ctrCipher(sessionKey, n, direction, encoder.encode(plaintext)));
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The plaintext of a base64 body; `undefined` when it is not base64 or does not decrypt to UTF-8. */
export function decryptBody(sessionKey: Uint8Array, n: number, direction: Direction, body: string): string | undefined {
  if (body === '') return '';
  let bytes: Uint8Array;
  try {
    bytes = base64.decode(body);
  } catch {
    return undefined;
  }
  try {
    return utf8.decode(ctrCipher(sessionKey, n, direction, bytes));
  } catch {
    return undefined;
  }
}

function sign(mac: Uint8Array, head: string, body: Uint8Array): Uint8Array {
  const headBytes = encoder.encode(head);
  return hmac.create(sha256, mac).update(headBytes).update(body).digest();
}

/** HMAC-SHA-256(M, "REQ n METHOD target\n" || body): `target` is path and query relative to the service root. */
export function requestSignature(mac: Uint8Array, n: number, method: string, target: string, body: Uint8Array): Uint8Array {
  return sign(mac, `REQ ${n} ${method} ${target}\n`, body);
}

/** HMAC-SHA-256(M, "RES n status\n" || body). */
export function responseSignature(mac: Uint8Array, n: number, status: number, body: Uint8Array): Uint8Array {
  return sign(mac, `RES ${n} ${status}\n`, body);
}

/** Constant-time check of a base64 signature header against the expected MAC. */
export function signatureMatches(header: string | null, expected: Uint8Array): boolean {
  if (header === null) return false;
  let given: Uint8Array;
  try {
    given = base64.decode(header.trim());
  } catch {
    return false;
  }
  return timingSafeEqual(given, expected);
}

/** A `Secure-Counter` header value: a decimal message number from 1 to `MAX_COUNTER`, else `undefined`. */
export function parseCounter(header: string | null): number | undefined {
  if (header === null || !/^[1-9][0-9]{0,15}$/.test(header.trim())) return undefined;
  const n = Number(header.trim());
  return n <= MAX_COUNTER ? n : undefined;
}
