/** The transport's base64 encoder against Node's (an independent implementation). */
import { describe, expect, test } from 'vitest';
import { asciiText, base64Bytes, base64Text } from '../../src/secure/base64.js';

const encode = (data: Uint8Array) => asciiText(base64Bytes(data));

describe('base64Bytes', () => {
  test('RFC 4648 test vectors', () => {
    const vectors = { '': '', f: 'Zg==', fo: 'Zm8=', foo: 'Zm9v', foob: 'Zm9vYg==', fooba: 'Zm9vYmE=', foobar: 'Zm9vYmFy' };
    for (const [plain, b64] of Object.entries(vectors)) expect(encode(new TextEncoder().encode(plain))).toBe(b64);
  });

  test('every length from 0 to 300 and a large input, random bytes, as Buffer encodes them', () => {
    for (const length of [...Array.from({ length: 301 }, (_, i) => i), 100_003]) {
      const data = new Uint8Array(length);
      for (let i = 0; i < length; i += 65_536) crypto.getRandomValues(data.subarray(i, i + 65_536));
      expect(encode(data)).toBe(Buffer.from(data).toString('base64'));
    }
  });

  test('all byte values, including the 62nd and 63rd letters + and /', () => {
    const data = Uint8Array.from({ length: 256 * 3 }, (_, i) => (i * 7) & 0xff);
    expect(encode(data)).toBe(Buffer.from(data).toString('base64'));
    expect(encode(Uint8Array.of(0xfb, 0xff, 0xbf))).toBe('+/+/');
  });
});

describe('base64Text', () => {
  test('every length from 0 to 100, random bytes, and all byte values, as Buffer encodes them', () => {
    for (let length = 0; length <= 100; length++) {
      const data = crypto.getRandomValues(new Uint8Array(length));
      expect(base64Text(data)).toBe(Buffer.from(data).toString('base64'));
    }
    const all = Uint8Array.from({ length: 256 * 3 }, (_, i) => (i * 7) & 0xff);
    expect(base64Text(all)).toBe(Buffer.from(all).toString('base64'));
  });
});
