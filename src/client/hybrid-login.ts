import { openHybridLogin, sealHybridAnswer } from '../secure/hybrid.js';
import { OAEP_SHA256, toPem } from '../secure/keys.js';
import { OdbRestProtocolError } from './errors.js';

/**
 * The client side of the hybrid `/v2/login` (PROTOCOL.md 3.4), all WebCrypto. Both directions have
 * one shape, `RSA-OAEP-SHA-256(key, K) | IV || AES-256-CBC(K, text)`: the body's `aesKey` and `data`
 * are the two halves of that sealing under the server key, and the answer is the same under ours.
 */

/** A new RSA-OAEP (SHA-256) key pair for the answer; the private key never leaves WebCrypto. */
export function hybridKeyPair(bits = 2048): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey({ ...OAEP_SHA256, modulusLength: bits, publicExponent: new Uint8Array([1, 0, 1]) }, false, ['encrypt', 'decrypt']);
}

/**
 * The `POST /v2/login` body: the login JSON sealed under the server key (an SPKI DER), and our public
 * key when we want the answer sealed; with the `publicKey` string sent (what `Login-Signature` covers).
 */
export async function hybridLoginBody(serverKeyDer: Uint8Array, loginJson: string, publicKey: CryptoKey | undefined): Promise<{ body: string; publicKey?: string }> {
  const serverKey = await crypto.subtle.importKey('spki', serverKeyDer as Uint8Array<ArrayBuffer>, OAEP_SHA256, false, ['encrypt']);
  const [aesKey, data] = (await sealHybridAnswer(serverKey, loginJson)).split('|');
  const body: Record<string, string> = { aesKey: aesKey!, data: data! };
  if (publicKey) body.publicKey = toPem('PUBLIC KEY', new Uint8Array(await crypto.subtle.exportKey('spki', publicKey)));
  return { body: JSON.stringify(body), ...(body.publicKey ? { publicKey: body.publicKey } : {}) };
}

/** The envelope of a sealed `A|B` answer, read as the real clients do (exactly one `|`). */
export async function openHybridAnswer(privateKey: CryptoKey, text: string, httpStatus: number): Promise<unknown> {
  const parts = text.trim().split('|');
  try {
    if (parts.length !== 2) throw new Error('not A|B');
    return (await openHybridLogin(privateKey, { aesKey: parts[0]!, data: parts[1]! })).login;
  } catch {
    throw new OdbRestProtocolError('hybrid login answer is not A|B sealed to the client key', httpStatus);
  }
}
