import { ctr } from '@noble/ciphers/aes.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';

/**
 * The symmetric primitives of the secure transport (PROTOCOL.md 4), each prepared once per key and
 * then applied per message. A host may pass its own (`symmetricCrypto` in the service and client
 * options); `odbrest/node` has `nodeCrypto`, node:crypto's native ones, which the core may not import.
 */
export interface SymmetricCrypto {
  /**
   * AES-256-CTR under a 32-byte key: a function of the 16-byte initial counter block and the data
   * that encrypts (and, being CTR, decrypts), incrementing the whole 128-bit block.
   */
  aesCtr(key: Uint8Array): (counter: Uint8Array, data: Uint8Array) => Uint8Array | Promise<Uint8Array>;
  /** HMAC-SHA-256 under `key`: a function of the message's parts, in order. */
  hmacSha256(key: Uint8Array): (...parts: Uint8Array[]) => Uint8Array;
}

/** Largest body `portableCrypto` encrypts in @noble/ciphers; larger ones go to WebCrypto. */
export const NOBLE_AES_MAX_BYTES = 8192;

/**
 * The default, for every runtime: @noble (pure JS) for AES-CTR up to `NOBLE_AES_MAX_BYTES` and for
 * HMAC, WebCrypto for larger bodies. A WebCrypto call costs a trip through the runtime's crypto
 * thread pool (measured in the service on Node 20: about 70 µs of wall time per request for a 1 KB
 * answer, against 15 µs for noble), while noble's AES grows by about 15 µs per KB and native AES
 * hardly at all. The HMAC's keyed state is computed once and cloned per message.
 */
export const portableCrypto: SymmetricCrypto = {
  aesCtr(key) {
    const own = Uint8Array.from(key);
    let webKey: Promise<CryptoKey> | undefined;
    return (counter, data) => {
      if (data.length <= NOBLE_AES_MAX_BYTES) return ctr(own, counter).encrypt(data);
      webKey ??= crypto.subtle.importKey('raw', own, 'AES-CTR', false, ['encrypt']);
      const params = { name: 'AES-CTR', counter: counter as Uint8Array<ArrayBuffer>, length: 128 };
      return webKey.then((k) => crypto.subtle.encrypt(params, k, data as Uint8Array<ArrayBuffer>)).then((out) => new Uint8Array(out));
    };
  },
  hmacSha256(key) {
    const keyed = hmac.create(sha256, key);
    return (...parts) => {
      const mac = keyed.clone();
      for (const part of parts) mac.update(part);
      return mac.digest();
    };
  },
};
