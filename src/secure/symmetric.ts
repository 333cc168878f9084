import { ctr } from '@noble/ciphers/aes.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';

/**
 * The symmetric primitives of the secure transport (PROTOCOL.md 4), each prepared once per key and
 * then applied per message. A host may pass its own (`symmetricCrypto` in the service and client
 * options); the default is `defaultCrypto`, native where the runtime has it.
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
 * For runtimes without node:crypto (edge runtimes, browsers): @noble (pure JS) for AES-CTR up to `NOBLE_AES_MAX_BYTES` and for
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
    // the keyed state is copied per message into one reused object (the call is synchronous, so no
    // two messages share it at once): a `clone()` per message allocates two hash states more
    const keyed = hmac.create(sha256, key);
    let mac = keyed.clone();
    return (...parts) => {
      mac = keyed._cloneInto(mac);
      for (const part of parts) mac.update(part);
      return mac.digest();
    };
  },
};

/** The three functions of node:crypto (also in Bun and Deno) the native primitives need. */
export interface NodeCryptoFunctions<Key = unknown> {
  createSecretKey(key: Uint8Array): Key;
  createCipheriv(algorithm: string, key: Key, iv: Uint8Array, options?: object): { update(data: Uint8Array): Uint8Array };
  createHmac(algorithm: string, key: Key): { update(data: Uint8Array): unknown; digest(): Uint8Array };
}

/**
 * AES-256-CTR and HMAC-SHA-256 from node:crypto's functions: native and synchronous (OpenSSL's CTR
 * mode increments the whole 128-bit counter block, as the protocol requires). `odbrest/node`'s
 * `nodeCrypto` is this over its import of node:crypto.
 */
export function nativeCrypto<Key>(node: NodeCryptoFunctions<Key>): SymmetricCrypto {
  return {
    aesCtr(key) {
      const secret = node.createSecretKey(key);
      return (counter, data) => node.createCipheriv('aes-256-ctr', secret, counter).update(data);
    },
    hmacSha256(key) {
      const secret = node.createSecretKey(key);
      return (...parts) => {
        const mac = node.createHmac('sha256', secret);
        for (const part of parts) mac.update(part);
        return mac.digest();
      };
    },
  };
}

/**
 * node:crypto where the runtime hands out its built-in modules without an import
 * (`process.getBuiltinModule`: Node from 20.16 and 22.3, Bun, Deno), so the core imports nothing
 * from `node:*` and still finds it; `undefined` elsewhere.
 */
function builtinNodeCrypto(): NodeCryptoFunctions | undefined {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  try {
    const found = runtime?.getBuiltinModule?.('node:crypto') as Partial<NodeCryptoFunctions> | undefined;
    const complete = typeof found?.createSecretKey === 'function' && typeof found.createCipheriv === 'function' && typeof found.createHmac === 'function';
    return complete ? (found as NodeCryptoFunctions) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The default of the service and the client: native where the runtime has it, node:crypto's
 * synchronous AES-CTR and HMAC (Node, Bun, Deno); `portableCrypto` elsewhere. Not WebCrypto for
 * small bodies: its calls are asynchronous and on Node each costs more CPU than the whole work
 * (measured on Node 20 for the bodies of a GET, 600 bytes: AES-CTR 3.6 µs of CPU in node:crypto,
 * 12 µs in noble, 33-41 µs in WebCrypto; HMAC 3.1, 8.4 and 10-15 µs).
 */
export const defaultCrypto: SymmetricCrypto = ((node) => (node ? nativeCrypto(node) : portableCrypto))(builtinNodeCrypto());
