/**
 * Error classes recognised across copies of the package. An app may load odbrest twice (its ESM and
 * its CommonJS build, or two installed versions), and an error made by one copy must still be known
 * to the other: `instanceof` compares class identities, which differ between copies. A branded class
 * carries a `Symbol.for` key on its prototype, the same symbol in every copy, and its `instanceof`
 * checks that key; subclasses keep the ordinary prototype check.
 */
export function brandClass(cls: abstract new (...args: never[]) => object, name: string): void {
  const key = Symbol.for(`odbrest.${name}`);
  Object.defineProperty(cls.prototype, key, { value: true });
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: unknown, value: unknown): boolean {
      if (this !== cls) return Function.prototype[Symbol.hasInstance].call(this, value);
      return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[key] === true;
    },
  });
}
