import { concatBytes } from '@noble/hashes/utils.js';
import { modulusBits, OAEP } from './keys.js';

/**
 * The RSA block scheme of the secure login (PROTOCOL.md 3.2): a message cut into chunks of at most
 * `k - 42` bytes (the OAEP-SHA-1 maximum), each encrypted with RSA-OAEP to `k` bytes, concatenated.
 * The RSA operations are WebCrypto's: native and constant-time on every runtime.
 */

/** SHA-1 OAEP overhead: 2 * 20-byte hash + 2. */
const OAEP_SHA1_OVERHEAD = 42;

type Bytes = Uint8Array<ArrayBuffer>;

/** Key size in bytes (`k`). */
function keyBytes(key: CryptoKey): number {
  return modulusBits(key) / 8;
}

/** Encrypts `plaintext` block by block under `publicKey`; the result is a multiple of `k` bytes. */
export async function blockEncrypt(publicKey: CryptoKey, plaintext: Uint8Array): Promise<Bytes> {
  const k = keyBytes(publicKey);
  const chunk = k - OAEP_SHA1_OVERHEAD;
  const count = Math.max(1, Math.ceil(plaintext.length / chunk));
  const blocks = await Promise.all(
    Array.from({ length: count }, (_, i) => crypto.subtle.encrypt(OAEP, publicKey, plaintext.slice(i * chunk, (i + 1) * chunk))),
  );
  return concatBytes(...blocks.map((block) => new Uint8Array(block))) as Bytes;
}

/** Why block decryption failed; the caller decides how to answer. */
export class BlockDecryptError extends Error {}

/**
 * Decrypts a block-scheme ciphertext. Throws `BlockDecryptError` when the length is not a positive
 * multiple of `k`, when there are more than `maxBlocks` blocks, or when a block fails OAEP. Blocks are
 * decrypted one after the other and the first that fails ends the work, so garbage costs one RSA
 * decryption, not one per block (a login is one or two blocks).
 */
export async function blockDecrypt(privateKey: CryptoKey, ciphertext: Uint8Array, maxBlocks: number): Promise<Bytes> {
  const k = keyBytes(privateKey);
  if (ciphertext.length === 0 || ciphertext.length % k !== 0) {
    throw new BlockDecryptError(`length must be a positive multiple of ${k} bytes (the key size)`);
  }
  const count = ciphertext.length / k;
  if (count > maxBlocks) throw new BlockDecryptError(`must be at most ${maxBlocks} blocks`);
  const blocks: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    try {
      blocks.push(new Uint8Array(await crypto.subtle.decrypt(OAEP, privateKey, ciphertext.slice(i * k, (i + 1) * k))));
    } catch {
      throw new BlockDecryptError('could not be decrypted with the server key (RSA-OAEP, SHA-1)');
    }
  }
  return concatBytes(...blocks) as Bytes;
}
