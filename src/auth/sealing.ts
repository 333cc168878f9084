import { base64urlnopad } from '@scure/base';
import { timingSafeEqual } from './passwords.js';

/** A host key: a string of at least 32 characters or at least 32 bytes. */
export type SealingKey = string | Uint8Array;

interface DerivedKeys {
  seal: CryptoKey;
  mac: CryptoKey;
}

const encoder = new TextEncoder();
const FORMAT = 'v1';
const MIN_KEY_BYTES = 32;

/**
 * Keeps two-factor secrets unreadable to whoever holds only a copy of the database: secrets are
 * sealed with AES-256-GCM and backup codes are stored as HMAC-SHA-256 values, both under keys derived
 * (HKDF-SHA-256) from the key the host configures, all in WebCrypto. Each value is bound to its owner
 * (the principal's object id is the GCM associated data and part of the MAC input), so a value
 * copied onto another user does not open there.
 *
 * Several keys allow rotation: the first seals, every one opens and verifies.
 */
export class SecretSealer {
  readonly #raw: readonly Uint8Array[];
  #derived: Promise<DerivedKeys[]> | undefined;

  constructor(keys: SealingKey | readonly SealingKey[]) {
    const list = Array.isArray(keys) ? (keys as readonly SealingKey[]) : [keys as SealingKey];
    this.#raw = list.map((key) => (typeof key === 'string' ? encoder.encode(key) : key));
    if (this.#raw.length === 0) throw new Error('twoFactor.key: give at least one key');
    if (this.#raw.some((key) => key.length < MIN_KEY_BYTES)) throw new Error(`twoFactor.key must be at least ${MIN_KEY_BYTES} bytes`);
  }

  /** `v1.<iv>.<ciphertext and tag>` (base64url) of `plain`, bound to `owner`. */
  async seal(owner: string, plain: Uint8Array): Promise<string> {
    const [current] = await this.#keys();
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: ownerBytes(owner) }, current!.seal, plain as Uint8Array<ArrayBuffer>);
    return `${FORMAT}.${base64urlnopad.encode(iv)}.${base64urlnopad.encode(new Uint8Array(sealed))}`;
  }

  /** The plain bytes, or `undefined` when no configured key opens `sealed` for `owner`. */
  async open(owner: string, sealed: string): Promise<Uint8Array | undefined> {
    const parts = sealed.split('.');
    if (parts.length !== 3 || parts[0] !== FORMAT) return undefined;
    let iv: Uint8Array;
    let data: Uint8Array;
    try {
      iv = base64urlnopad.decode(parts[1]!);
      data = base64urlnopad.decode(parts[2]!);
    } catch {
      return undefined;
    }
    if (iv.length !== 12) return undefined;
    for (const { seal } of await this.#keys()) {
      try {
        const params = { name: 'AES-GCM', iv: iv as Uint8Array<ArrayBuffer>, additionalData: ownerBytes(owner) };
        return new Uint8Array(await crypto.subtle.decrypt(params, seal, data as Uint8Array<ArrayBuffer>));
      } catch {
        // another key may have sealed it
      }
    }
    return undefined;
  }

  /** The MAC of `value` for `owner` under the current key (what is stored). */
  async mac(owner: string, value: string): Promise<string> {
    const [current] = await this.#keys();
    return base64urlnopad.encode(await macBytes(current!.mac, owner, value));
  }

  /** Index in `stored` of the MAC of `value` under any configured key, or -1. Every entry is compared in constant time. */
  async findMac(owner: string, value: string, stored: readonly string[]): Promise<number> {
    const expected = stored.map(decodeOrEmpty);
    let found = -1;
    for (const { mac } of await this.#keys()) {
      const candidate = await macBytes(mac, owner, value);
      expected.forEach((bytes, index) => {
        if (timingSafeEqual(candidate, bytes) && found < 0) found = index;
      });
    }
    return found;
  }

  #keys(): Promise<DerivedKeys[]> {
    this.#derived ??= Promise.all(this.#raw.map(derive));
    return this.#derived;
  }
}

async function derive(raw: Uint8Array): Promise<DerivedKeys> {
  const base = await crypto.subtle.importKey('raw', raw as Uint8Array<ArrayBuffer>, 'HKDF', false, ['deriveKey']);
  const hkdf = (info: string) => ({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: encoder.encode(info) });
  const [seal, mac] = await Promise.all([
    crypto.subtle.deriveKey(hkdf('odbrest two-factor secret sealing'), base, { name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']),
    crypto.subtle.deriveKey(hkdf('odbrest two-factor backup codes'), base, { name: 'HMAC', hash: 'SHA-256', length: 256 }, false, ['sign']),
  ]);
  return { seal, mac };
}

async function macBytes(key: CryptoKey, owner: string, value: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(`${owner}\u0000${value}`)));
}

function ownerBytes(owner: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(`odbrest two-factor:${owner}`);
}

function decodeOrEmpty(text: string): Uint8Array {
  try {
    return base64urlnopad.decode(text);
  } catch {
    return new Uint8Array(0);
  }
}
