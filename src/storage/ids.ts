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
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  let binary = '';
  for (const byte of raw) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
