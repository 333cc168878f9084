import { describe, expect, it } from 'vitest';
import { compareCodePoints, compareFieldValues, matches, orderComparator } from '../../src/index.js';

/** The definition: compare the strings' code point sequences (a lone surrogate is its own code point). */
function byCodePoints(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

describe('compareCodePoints', () => {
  it('orders U+1F600 after U+FFFF and after every BMP character, unlike <', () => {
    expect(compareCodePoints('😀', '\uFFFF')).toBeGreaterThan(0);
    expect('😀' < '\uFFFF').toBe(true); // what JavaScript does
    expect(compareCodePoints('\uE000', '😀')).toBeLessThan(0);
    expect(compareCodePoints('a😀', 'a\uFFFF')).toBeGreaterThan(0);
    expect(compareCodePoints('😀', '😁')).toBeLessThan(0);
    expect(compareCodePoints('😀', '😀')).toBe(0);
    expect(compareCodePoints('', 'a')).toBeLessThan(0);
  });

  it('agrees in sign with comparing code point sequences, lone surrogates included', () => {
    const units = [0x41, 0x61, 0xe9, 0xd7ff, 0xd800, 0xd83d, 0xdbff, 0xdc00, 0xde00, 0xdfff, 0xe000, 0xfffd, 0xffff];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const text = () => String.fromCharCode(...Array.from({ length: Math.floor(next() * 4) }, () => units[Math.floor(next() * units.length)]!));
    for (let i = 0; i < 20_000; i++) {
      const [a, b] = [text(), text()];
      expect([a, b, Math.sign(compareCodePoints(a, b))]).toEqual([a, b, Math.sign(byCodePoints(a, b))]);
    }
  });
});

describe('matches and ordering on one object', () => {
  it('never reads a field inherited from Object.prototype', () => {
    expect(matches({}, { constructor: { $exists: true } })).toBe(false);
    expect(matches({}, { toString: { $ne: 'x' } })).toBe(true);
    expect(matches({ constructor: 1 }, { constructor: 1 })).toBe(true);
    expect(compareFieldValues(undefined, null)).toBe(0);
    expect(orderComparator({ field: 'constructor' })({}, { constructor: null })).toBe(0);
  });

  it('matches nothing for a condition it does not know (the service refuses those first)', () => {
    const fields = { v: 1 };
    for (const condition of [{ $regex: '.' }, { $in: 1 }, { $in: [[1]] }, { $gt: true }, { $prefix: 1 }, { $exists: 'yes' }, [1], undefined]) {
      expect(matches(fields, { v: condition } as never)).toBe(false);
    }
    expect(matches(fields, { v: {} })).toBe(true);
  });
});
