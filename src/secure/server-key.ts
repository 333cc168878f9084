import { base64urlnopad } from '@scure/base';
import { exportKeyPairPem, generateRsaKeyPair, OAEP, OAEP_SHA256, privateKeyDer, toPem, modulusBits } from './keys.js';
import { LOGIN_SIGNATURE_ALGORITHM } from './login-signature.js';
import { deriveTokenKey } from './token.js';

/** The service's RSA key for the secure login, with what is derived from it. */
export interface ServerKey {
  /** Non-extractable RSA-OAEP (SHA-1) private key. */
  privateKey: CryptoKey;
  /** The same private key for RSA-OAEP with SHA-256 (the hybrid `/v2/login`, PROTOCOL.md 3.4). */
  hybridKey: CryptoKey;
  /** The SPKI PEM `GET /v2/login/secure/key` answers with. */
  publicKeyPem: string;
  /** Seals and opens Secure-Tokens. */
  tokenKey: CryptoKey;
  /** The same private key for RSA-PSS (SHA-256): signs login answers (`Login-Signature`, PROTOCOL.md 3.3). */
  signingKey: CryptoKey;
}

const DEFAULT_SERVER_KEY_BITS = 2048;

/** Loads a PEM private key (PKCS#8 or PKCS#1). Throws a start-up error naming what is wrong. */
async function loadServerKey(pem: string): Promise<ServerKey> {
  const der = privateKeyDer(pem); // throws its own `serverKey:` errors
  let extractable: CryptoKey;
  try {
    extractable = await crypto.subtle.importKey('pkcs8', der, OAEP, true, ['decrypt']);
  } catch {
    throw new Error('serverKey: not a readable RSA private key');
  }
  if (modulusBits(extractable) < 2048) throw new Error(`serverKey: must have at least 2048 bits, not ${modulusBits(extractable)}`);
  // WebCrypto cannot derive a public key from a private one directly; its JWK holds n and e.
  const jwk = await crypto.subtle.exportKey('jwk', extractable);
  const publicKey = await crypto.subtle.importKey('jwk', { kty: 'RSA', n: jwk.n, e: jwk.e, ext: true }, OAEP, true, ['encrypt']);
  // A JWK names its hash in `alg` ("RSA-OAEP" is SHA-1); without it the key imports for either hash.
  const { alg: _sha1, ...anyHash } = jwk;
  const { key_ops: _decrypt, ...anyUse } = anyHash;
  const [spki, privateKey, hybridKey, signingKey] = await Promise.all([
    crypto.subtle.exportKey('spki', publicKey),
    crypto.subtle.importKey('jwk', jwk, OAEP, false, ['decrypt']),
    crypto.subtle.importKey('jwk', anyHash, OAEP_SHA256, false, ['decrypt']),
    crypto.subtle.importKey('jwk', anyUse, LOGIN_SIGNATURE_ALGORITHM, false, ['sign']),
  ]);
  const tokenKey = await deriveTokenKey(base64urlnopad.decode(jwk.d!));
  return { privateKey, hybridKey, publicKeyPem: toPem('PUBLIC KEY', new Uint8Array(spki)), tokenKey, signingKey };
}

/**
 * The configured key, loaded at start-up (so a bad key fails `ready`), or a 2048-bit key generated
 * on first use, so that services that never see a secure login do not pay for key generation.
 */
export class ServerKeySource {
  readonly ready: Promise<void>;
  #key: Promise<ServerKey> | undefined;
  #current: ServerKey | undefined;

  constructor(pem: string | undefined) {
    if (pem !== undefined) this.#key = this.#track(loadServerKey(pem));
    this.ready = this.#key ? this.#key.then(() => undefined) : Promise.resolve();
  }

  get(): Promise<ServerKey> {
    this.#key ??= this.#track(
      generateRsaKeyPair(DEFAULT_SERVER_KEY_BITS)
        .then(exportKeyPairPem)
        .then((pair) => loadServerKey(pair.privateKey)),
    );
    return this.#key;
  }

  /** The key once loaded; `undefined` before (then no Secure-Token can have been issued). */
  get current(): ServerKey | undefined {
    return this.#current;
  }

  #track(key: Promise<ServerKey>): Promise<ServerKey> {
    return key.then((loaded) => (this.#current = loaded));
  }
}
