/**
 * Fixed vectors for the secure transport's message layer (PROTOCOL.md 4). They were computed once
 * with node:crypto (createCipheriv('aes-256-ctr'), createHmac('sha256')), independently of the library,
 * for K = bytes 0..31, and are checked in as constants (test/secure/vectors.ts, which the README's
 * table is checked against too).
 */
import { describe, expect, test } from 'vitest';
import { bytesToHex } from '@noble/hashes/utils.js';
import { base64 } from '@scure/base';
import { acceptCounter, emptyWindow, type ReplayWindow } from '../../src/secure/replay.js';
import {
  counterBlock,
  decryptBody,
  encryptBody,
  macKey,
  messageKeys,
  type MessageKeys,
  parseCounter,
  requestSignature,
  responseSignature,
  sealRequest,
  sealResponse,
} from '../../src/secure/messages.js';
import {
  COUNTER_BLOCKS,
  GET_SIGNATURE,
  K,
  M_HEX,
  REQUEST_BODY,
  REQUEST_PLAIN,
  REQUEST_SIGNATURE,
  RESPONSE_BODY,
  RESPONSE_PLAIN,
  RESPONSE_SIGNATURE,
} from './vectors.js';
import { defaultCrypto, portableCrypto, type SymmetricCrypto } from '../../src/secure/symmetric.js';
import { nodeCrypto } from '../../adapters/node-crypto.js';

const encoder = new TextEncoder();
/** The ASCII bytes a sealed body is sent as. */
const ascii = (text: string) => encoder.encode(text);

describe('counter blocks', () => {
  test.each(COUNTER_BLOCKS)('n = %d', (n, request, response) => {
    expect(bytesToHex(counterBlock(n, 0))).toBe(request);
    expect(bytesToHex(counterBlock(n, 1))).toBe(response);
  });

  test('0, fractions and numbers past 2^53 are refused', () => {
    for (const n of [0, -1, 1.5, 2 ** 53]) expect(() => counterBlock(n, 0)).toThrow(RangeError);
  });
});

const providers: Array<[string, SymmetricCrypto]> = [
  ['defaultCrypto (the default: node:crypto found through process.getBuiltinModule)', defaultCrypto],
  ['portableCrypto (where the runtime has no node:crypto)', portableCrypto],
  ['nodeCrypto (odbrest/node)', nodeCrypto],
];

describe.each(providers)('keys, bodies and signatures with %s', (_name, symmetric) => {
  const keys: MessageKeys = messageKeys(K, symmetric);

  test('M = HMAC-SHA-256(K, "odbrest secure transport mac")', () => {
    expect(bytesToHex(macKey(K, symmetric))).toBe(M_HEX);
  });

  test('request body: AES-256-CTR from counter block (7, 0), base64', async () => {
    expect(await encryptBody(keys, 7, 0, REQUEST_PLAIN)).toBe(REQUEST_BODY);
    expect(await decryptBody(keys, 7, 0, REQUEST_BODY)).toBe(REQUEST_PLAIN);
  });

  test('response body: AES-256-CTR from counter block (7, 1), base64', async () => {
    expect(await encryptBody(keys, 7, 1, RESPONSE_PLAIN)).toBe(RESPONSE_BODY);
    expect(await decryptBody(keys, 7, 1, RESPONSE_BODY)).toBe(RESPONSE_PLAIN);
  });

  test('request signature over "REQ n METHOD target\\n" || body', () => {
    expect(base64.encode(requestSignature(keys, 7, 'POST', '/v1/execute/echo?x=1', encoder.encode(REQUEST_BODY)))).toBe(REQUEST_SIGNATURE);
    expect(base64.encode(requestSignature(keys, 8, 'GET', '/v1/object/USR00001', new Uint8Array()))).toBe(GET_SIGNATURE);
  });

  test('response signature over "RES n status\\n" || body', () => {
    expect(base64.encode(responseSignature(keys, 7, 200, encoder.encode(RESPONSE_BODY)))).toBe(RESPONSE_SIGNATURE);
  });

  test('sealed request and response: the same bodies and signatures', async () => {
    expect(await sealRequest(keys, 7, 'POST', '/v1/execute/echo?x=1', REQUEST_PLAIN)).toEqual({ body: ascii(REQUEST_BODY), signature: REQUEST_SIGNATURE });
    expect(await sealRequest(keys, 8, 'GET', '/v1/object/USR00001', '')).toEqual({ body: ascii(''), signature: GET_SIGNATURE });
    expect(await sealResponse(keys, 7, 200, RESPONSE_PLAIN)).toEqual({ body: ascii(RESPONSE_BODY), signature: RESPONSE_SIGNATURE });
  });

  test('an empty body stays empty', async () => {
    expect(await encryptBody(keys, 1, 0, '')).toBe('');
    expect(await decryptBody(keys, 1, 0, '')).toBe('');
  });

  test('a body that is not base64 does not decrypt', async () => {
    expect(await decryptBody(keys, 7, 0, 'not base64!')).toBeUndefined();
  });

  test('a body under the wrong counter does not decrypt to the plaintext', async () => {
    expect(await decryptBody(keys, 8, 0, REQUEST_BODY)).not.toBe(REQUEST_PLAIN);
  });
});

test('every provider gives the same bodies and signatures as node:crypto for every size, WebCrypto\'s range included', async () => {
  const native = messageKeys(K, nodeCrypto);
  for (const [, symmetric] of providers) {
    const keys = messageKeys(K, symmetric);
    for (const size of [1, 15, 16, 17, 1000, 8192, 8193, 40_000]) {
      const plaintext = 'x'.repeat(size);
      const sealed = await sealResponse(native, 2 ** 40 + size, 201, plaintext);
      expect(await sealResponse(keys, 2 ** 40 + size, 201, plaintext)).toEqual(sealed);
      expect(await decryptBody(keys, 2 ** 40 + size, 1, new TextDecoder().decode(sealed.body))).toBe(plaintext);
    }
  }
});

test('on Node (process.getBuiltinModule) the default is native, not the pure-JS portableCrypto', () => {
  expect(typeof process.getBuiltinModule).toBe('function');
  expect(defaultCrypto).not.toBe(portableCrypto);
});

describe('Secure-Counter header', () => {
  test.each([
    ['1', 1],
    ['42', 42],
    [' 9007199254740991 ', 2 ** 53 - 1],
  ])('%j is %d', (header, n) => expect(parseCounter(header)).toBe(n));

  test.each([null, '', '0', '-1', '01', '1.0', '0x10', '9007199254740992', '12345678901234567', 'abc'])('%j is refused', (header) => {
    expect(parseCounter(header)).toBeUndefined();
  });
});

describe('replay window', () => {
  const run = (numbers: number[]) => {
    let window: ReplayWindow = emptyWindow();
    return numbers.map((n) => {
      const result = acceptCounter(window, n);
      if ('window' in result) window = result.window;
      return 'refused' in result ? result.refused : 'ok';
    });
  };

  test('in order, out of order within 64, replays and numbers below the window', () => {
    expect(run([1, 2, 2, 5, 3, 4, 3, 70, 6, 7, 5, 200, 136, 137, 137, 1000, 937, 936])).toEqual([
      'ok', 'ok', 'replayed', 'ok', 'ok', 'ok', 'replayed', 'ok', 'out of window', 'ok', 'out of window', 'ok',
      'out of window', 'ok', 'replayed', 'ok', 'ok', 'out of window',
    ]);
  });

  test('a jump of more than 64 forgets everything below the new window', () => {
    expect(run([10, 11, 500, 11, 437, 436])).toEqual(['ok', 'ok', 'ok', 'out of window', 'ok', 'out of window']);
  });
});

describe('replay window, against a model that keeps every accepted number', () => {
  /** Accepted once, and only above the highest accepted number minus 64 (PROTOCOL.md 4); the mask as BigInt hex. */
  function model() {
    const accepted = new Set<number>();
    let high = 0;
    return {
      accept(n: number): 'ok' | 'replayed' | 'out of window' {
        if (n <= high - 64) return 'out of window';
        if (accepted.has(n)) return 'replayed';
        accepted.add(n);
        high = Math.max(high, n);
        return 'ok';
      },
      window(): ReplayWindow {
        let seen = 0n;
        for (const n of accepted) if (n > high - 64) seen |= 1n << BigInt(high - n);
        return { high, seen: seen.toString(16) };
      },
    };
  }

  test('10,000 random numbers around a moving high: the same answers and the same stored window', () => {
    let seed = 16;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const expected = model();
    let window: ReplayWindow = emptyWindow();
    for (let i = 0; i < 10_000; i++) {
      const { high } = expected.window();
      // mostly near the top of the window, sometimes far ahead, sometimes just below it
      const step = random() < 0.05 ? Math.floor(random() * 140) : Math.floor(random() * 80) - 66;
      const n = Math.max(1, high + step);
      const result = acceptCounter(window, n);
      expect('refused' in result ? result.refused : 'ok').toBe(expected.accept(n));
      if ('window' in result) window = result.window;
      expect(window).toEqual(expected.window());
    }
  });
});
