import { base64urlnopad } from '@scure/base';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** An 8-character `[0-9A-Z]` object id from the CSPRNG (rejection sampling keeps it uniform). */
export function newObjectId(length = 8): string {
  let id = '';
  while (id.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 252 && id.length < length) id += ALPHABET[byte % 36];
    }
  }
  return id;
}

/** `bytes` random bytes as base64url (16 bytes: a 128-bit session id). */
export function randomToken(bytes = 16): string {
  return base64urlnopad.encode(crypto.getRandomValues(new Uint8Array(bytes)));
}
