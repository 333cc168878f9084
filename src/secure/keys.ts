import { base64 } from '@scure/base';
import { concatBytes } from '@noble/hashes/utils.js';
import { ApiError } from '../http/errors.js';

/**
 * RSA key formats for the secure login (PROTOCOL.md 3): PEM parsing, PKCS#1 -> PKCS#8 wrapping
 * (WebCrypto imports only PKCS#8 private keys), the three forms a client may send its public key in,
 * and the SPKI PEM the key endpoint answers with. All keys are RSA-OAEP with SHA-1 (OAEP and MGF1).
 */
export const OAEP = { name: 'RSA-OAEP', hash: 'SHA-1' } as const;
/** RSA-OAEP with SHA-256 for OAEP and MGF1: the hybrid `/v2/login` (PROTOCOL.md 3.4). */
export const OAEP_SHA256 = { name: 'RSA-OAEP', hash: 'SHA-256' } as const;
const MIN_CLIENT_BITS = 2048;
const MAX_CLIENT_BITS = 4096;

type Bytes = Uint8Array<ArrayBuffer>;

/** The base64 body between `-----BEGIN {label}-----` and its footer; lines may be indented, any line breaks. */
export function pemBody(text: string, labels: readonly string[]): { label: string; der: Bytes } | undefined {
  const lines = text.split(/\r\n|\r|\n/).map((line) => line.trim());
  for (const label of labels) {
    const start = lines.indexOf(`-----BEGIN ${label}-----`);
    const end = lines.indexOf(`-----END ${label}-----`);
    if (start < 0 || end <= start) continue;
    try {
      return { label, der: base64.decode(lines.slice(start + 1, end).join('')) as Bytes };
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** PEM text of DER bytes: base64 lines of 64 characters, CR LF line breaks (PROTOCOL.md 3.1). */
export function toPem(label: string, der: Uint8Array): string {
  const b64 = base64.encode(der);
  const lines = [`-----BEGIN ${label}-----`];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  lines.push(`-----END ${label}-----`);
  return `${lines.join('\r\n')}\r\n`;
}

function derLength(length: number): number[] {
  if (length < 0x80) return [length];
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
  return [0x80 | bytes.length, ...bytes];
}

function derNode(tag: number, content: Uint8Array): Bytes {
  return concatBytes(Uint8Array.from([tag, ...derLength(content.length)]), content) as Bytes;
}

/** version 0 and AlgorithmIdentifier { rsaEncryption, NULL }, the fixed head of an RSA PrivateKeyInfo. */
const PKCS8_RSA_HEAD = Uint8Array.of(0x02, 0x01, 0x00, 0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00);

/** Wraps a PKCS#1 RSAPrivateKey in a PKCS#8 PrivateKeyInfo. */
function pkcs1ToPkcs8(pkcs1: Uint8Array): Bytes {
  return derNode(0x30, concatBytes(PKCS8_RSA_HEAD, derNode(0x04, pkcs1)));
}

/** The PKCS#8 DER of a private-key PEM, PKCS#8 (`PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`). */
export function privateKeyDer(pem: string): Bytes {
  if (/-----BEGIN (ENCRYPTED PRIVATE KEY|RSA PRIVATE KEY-----[\s\S]*Proc-Type)/.test(pem)) {
    throw new Error('serverKey: encrypted private keys are not supported; give the key without a passphrase');
  }
  const found = pemBody(pem, ['PRIVATE KEY', 'RSA PRIVATE KEY']);
  if (!found) throw new Error('serverKey: expected a PEM "PRIVATE KEY" (PKCS#8) or "RSA PRIVATE KEY" (PKCS#1)');
  return found.label === 'RSA PRIVATE KEY' ? pkcs1ToPkcs8(found.der) : found.der;
}

/** The bits of an RSA CryptoKey. */
export function modulusBits(key: CryptoKey): number {
  return (key.algorithm as RsaHashedKeyAlgorithm).modulusLength;
}

/** Generates an RSA-OAEP (SHA-1) key pair; keys are extractable so they can be written as PEM. */
export function generateRsaKeyPair(bits = 2048): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey({ ...OAEP, modulusLength: bits, publicExponent: new Uint8Array([1, 0, 1]) }, true, ['encrypt', 'decrypt']);
}

/** A key pair as PEM files: PKCS#8 private, SPKI public. */
export async function exportKeyPairPem(pair: CryptoKeyPair): Promise<{ privateKey: string; publicKey: string }> {
  const [pkcs8, spki] = await Promise.all([crypto.subtle.exportKey('pkcs8', pair.privateKey), crypto.subtle.exportKey('spki', pair.publicKey)]);
  return { privateKey: toPem('PRIVATE KEY', new Uint8Array(pkcs8)), publicKey: toPem('PUBLIC KEY', new Uint8Array(spki)) };
}

const MAX_CLIENT_KEY_CHARS = 16_384;
const badKey = (why: string) => new ApiError('310', `publicKey ${why}`);

/** The DER of a client public key in any of the three accepted forms (PROTOCOL.md 3.2); no key work, a malformed text is `310`. */
export function clientKeyDer(text: string): Bytes {
  if (text.length > MAX_CLIENT_KEY_CHARS) throw badKey('is too long');
  if (text.includes('-----BEGIN')) {
    const pem = pemBody(text, ['PUBLIC KEY']);
    if (!pem) throw badKey('is not a well-formed SPKI PEM ("-----BEGIN PUBLIC KEY-----", base64 lines, footer)');
    return pem.der;
  }
  let decoded: Bytes;
  try {
    decoded = base64.decode(text.replace(/\s+/g, '')) as Bytes;
  } catch {
    throw badKey('is neither a PEM nor base64');
  }
  if (decoded[0] === 0x30) return decoded; // bare SPKI DER (a DER SEQUENCE)
  let inner: string;
  try {
    inner = new TextDecoder('utf-8', { fatal: true }).decode(decoded);
  } catch {
    throw badKey('is base64 of neither a PEM nor SPKI DER');
  }
  const pem = pemBody(inner, ['PUBLIC KEY']);
  if (!pem) throw badKey('is base64 of neither an SPKI PEM nor SPKI DER');
  return pem.der;
}

/**
 * Imports a client's public key for RSA-OAEP encryption, SHA-1 (the secure login) unless another
 * hash is given (WebCrypto binds a key to one hash); anything malformed or of the wrong size is `310`.
 */
export async function importClientPublicKey(text: string | Bytes, algorithm: typeof OAEP | typeof OAEP_SHA256 = OAEP): Promise<CryptoKey> {
  const der = typeof text === 'string' ? clientKeyDer(text.trim()) : text;
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey('spki', der, algorithm, false, ['encrypt']);
  } catch {
    throw badKey('is not an RSA public key (SPKI)');
  }
  const bits = modulusBits(key);
  if (bits < MIN_CLIENT_BITS || bits > MAX_CLIENT_BITS) throw badKey(`must have ${MIN_CLIENT_BITS} to ${MAX_CLIENT_BITS} bits, not ${bits}`);
  return key;
}
