import { base64 } from '@scure/base';

/**
 * The `Login-Signature` of PROTOCOL.md 3.3: the server binds a secure or hybrid login answer to its
 * own key, so a client pinned to that key can tell the server's answer from one an on-path attacker
 * made for the `publicKey` the request carried. RSASSA-PSS (SHA-256, salt 32) by the server's private
 * key over `SHA-256(publicKey) || SHA-256(answer body bytes)`; all WebCrypto.
 */
export const LOGIN_SIGNATURE_HEADER = 'login-signature';
export const LOGIN_SIGNATURE_ALGORITHM = { name: 'RSA-PSS', hash: 'SHA-256' } as const;
const PSS = { name: 'RSA-PSS', saltLength: 32 } as const;
const encoder = new TextEncoder();

/** What is signed: the two SHA-256 digests side by side. */
async function signedMessage(publicKey: string, body: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const [ofKey, ofBody] = await Promise.all([
    crypto.subtle.digest('SHA-256', encoder.encode(publicKey)),
    crypto.subtle.digest('SHA-256', body as Uint8Array<ArrayBuffer>),
  ]);
  const message = new Uint8Array(64);
  message.set(new Uint8Array(ofKey), 0);
  message.set(new Uint8Array(ofBody), 32);
  return message;
}

/** The header value for an answer `body` made for the request's `publicKey` string. */
export async function signLoginAnswer(signingKey: CryptoKey, publicKey: string, body: Uint8Array): Promise<string> {
  return base64.encode(new Uint8Array(await crypto.subtle.sign(PSS, signingKey, await signedMessage(publicKey, body))));
}

/** Whether `signature` (the header, absent as `null`) verifies under the server's SPKI key. */
export async function verifyLoginSignature(serverSpki: Uint8Array, publicKey: string, body: Uint8Array, signature: string | null): Promise<boolean> {
  if (!signature) return false;
  let bytes: Uint8Array;
  try {
    bytes = base64.decode(signature.trim());
  } catch {
    return false;
  }
  try {
    const key = await crypto.subtle.importKey('spki', serverSpki as Uint8Array<ArrayBuffer>, LOGIN_SIGNATURE_ALGORITHM, false, ['verify']);
    return await crypto.subtle.verify(PSS, key, bytes as Uint8Array<ArrayBuffer>, await signedMessage(publicKey, body));
  } catch {
    return false;
  }
}
