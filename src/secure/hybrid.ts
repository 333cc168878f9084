import { base64 } from '@scure/base';
import { concatBytes } from '@noble/hashes/utils.js';
import * as v from 'valibot';
import { ApiError } from '../http/errors.js';
import { parseJsonText } from '../http/json.js';
import { importClientPublicKey, modulusBits, OAEP_SHA256 } from './keys.js';

/**
 * The hybrid `/v2/login` (PROTOCOL.md 3.4): a login body sealed with AES-256-CBC under a 32-byte key
 * `K` that travels RSA-OAEP-SHA-256-encrypted under the server key, and the answer sealed the same
 * way under the client's key. Every cryptographic step is WebCrypto's; only the framing is written here.
 */

/** What the client sends; `publicKey` (or `publickey`, as in 3.2) asks for an encrypted answer. */
export interface HybridLoginBody {
  aesKey: string;
  data: string;
  publicKey?: unknown;
  publickey?: unknown;
}

/** The opened body: the login JSON, and the client's key when it asked for an encrypted answer. */
export interface OpenedHybridLogin {
  login: unknown;
  clientKey: CryptoKey | undefined;
  /** The `publicKey` string as the body gave it (what `Login-Signature` covers). */
  publicKey?: string;
}

const AES_KEY_BYTES = 32;
const IV_BYTES = 16;
const AES_BLOCK = 16;
/** A login body is a few hundred bytes (a device description included); this bounds the AES work. */
const MAX_DATA_CHARS = 65_536;

/**
 * The one refusal for everything that fails before the login JSON is read: base64, RSA, the size of
 * `K`, padding, UTF-8, JSON syntax, a malformed or wrong-size `publicKey`. Its message never says
 * which step failed, so no answer tells a padding error from another (no padding oracle).
 */
export function hybridRefusal(): ApiError {
  return new ApiError('310', 'the hybrid login could not be decrypted: aesKey, data or publicKey is malformed');
}

/** What makes a `/v2/login` body a hybrid login: string `aesKey` and `data`. */
const HybridMarkSchema = v.object({ aesKey: v.string(), data: v.string() });


/** Whether a `/v2/login` body is a hybrid login (string `aesKey` and `data`) rather than the JWT login. */
export function isHybridLoginBody(body: unknown): body is HybridLoginBody {
  return v.is(HybridMarkSchema, body);
}

/** Standard base64 with padding of exactly `bytes` bytes has this many characters. */
const base64Chars = (bytes: number) => 4 * Math.ceil(bytes / 3);

/** Strict standard base64 with padding; `undefined` when it is not. */
function decodeBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    return base64.decode(text) as Uint8Array<ArrayBuffer>;
  } catch {
    return undefined;
  }
}

/** `publicKey` as sent, `null` meaning none; anything else than a string is malformed. */
function publicKeyText(body: HybridLoginBody): string | undefined {
  const value = body.publicKey ?? body.publickey;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw hybridRefusal();
  return value;
}

/**
 * Opens a hybrid login body with the server key (RSA-OAEP-SHA-256, `ServerKey.hybridKey`). Every
 * failure, whatever the step, is `hybridRefusal()`. Sizes and the client key are checked before any
 * RSA private-key work, so a request costs at most one RSA decryption of one `k`-byte block.
 */
export async function openHybridLogin(serverKey: CryptoKey, body: HybridLoginBody): Promise<OpenedHybridLogin> {
  try {
    return await open(serverKey, body);
  } catch {
    throw hybridRefusal();
  }
}

async function open(serverKey: CryptoKey, body: HybridLoginBody): Promise<OpenedHybridLogin> {
  const k = modulusBits(serverKey) / 8;
  if (body.aesKey.length !== base64Chars(k) || body.data.length > MAX_DATA_CHARS) throw hybridRefusal();
  const wrappedKey = decodeBase64(body.aesKey);
  const sealed = decodeBase64(body.data);
  if (wrappedKey?.length !== k || !sealed || sealed.length < IV_BYTES + AES_BLOCK || sealed.length % AES_BLOCK !== 0) {
    throw hybridRefusal();
  }
  const keyText = publicKeyText(body);
  const clientKey = keyText === undefined ? undefined : await importClientPublicKey(keyText, OAEP_SHA256);
  const aesKey = new Uint8Array(await crypto.subtle.decrypt(OAEP_SHA256, serverKey, wrappedKey));
  if (aesKey.length !== AES_KEY_BYTES) throw hybridRefusal();
  const plaintext = await aesCbc('decrypt', aesKey, sealed.subarray(0, IV_BYTES), sealed.subarray(IV_BYTES));
  const text = new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
  return { login: parseJsonText(text, 'the login'), clientKey, publicKey: keyText }; // any failure here is the one 310, too
}

/** AES-256-CBC with PKCS#7 padding (WebCrypto pads and checks the padding itself). */
async function aesCbc(direction: 'encrypt' | 'decrypt', key: Uint8Array, iv: Uint8Array, data: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const cryptoKey = await crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, 'AES-CBC', false, [direction]);
  const params = { name: 'AES-CBC', iv: iv as Uint8Array<ArrayBuffer> };
  return new Uint8Array(await crypto.subtle[direction](params, cryptoKey, data as Uint8Array<ArrayBuffer>));
}

/** Fixed `K2` and `IV2` for test vectors; fresh random ones otherwise. */
export interface HybridSealKeys {
  key: Uint8Array;
  iv: Uint8Array;
}

/**
 * Seals an answer for the client's key (RSA-OAEP-SHA-256, from `openHybridLogin`):
 * `base64(RSA-OAEP(clientKey, K2)) + "|" + base64(IV2 || AES-256-CBC(K2, text))`.
 */
export async function sealHybridAnswer(clientKey: CryptoKey, text: string, fixed?: HybridSealKeys): Promise<string> {
  const key = fixed?.key ?? crypto.getRandomValues(new Uint8Array(AES_KEY_BYTES));
  const iv = fixed?.iv ?? crypto.getRandomValues(new Uint8Array(IV_BYTES));
  if (key.length !== AES_KEY_BYTES || iv.length !== IV_BYTES) throw new Error('sealHybridAnswer: K2 must be 32 bytes and IV2 16');
  const [wrappedKey, ciphertext] = await Promise.all([
    crypto.subtle.encrypt(OAEP_SHA256, clientKey, key as Uint8Array<ArrayBuffer>),
    aesCbc('encrypt', key, iv, new TextEncoder().encode(text)),
  ]);
  return `${base64.encode(new Uint8Array(wrappedKey))}|${base64.encode(concatBytes(iv, ciphertext))}`;
}
