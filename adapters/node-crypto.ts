import * as crypto from 'node:crypto';
import { nativeCrypto, type SymmetricCrypto } from '../src/index.js';

/**
 * The secure transport's AES-256-CTR and HMAC-SHA-256 from node:crypto (also present in Bun and
 * Deno): native and synchronous. Measured on Node 20 for a 1 KB answer: 4 µs to encrypt and 4 µs to
 * sign, against 17 µs and 17 µs for pure JS. The service's default (`defaultCrypto`) is the same
 * wherever the runtime has `process.getBuiltinModule`; this one serves where it has not.
 */
export const nodeCrypto: SymmetricCrypto = nativeCrypto(crypto);
