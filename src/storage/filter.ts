/**
 * The meaning of `Where` and `OrderBy` (see their doc comments in `types.ts`) as pure functions, so
 * every store that filters or orders in process (the memory store, a host's store, the service applying
 * a filter to one object) answers exactly alike.
 */
import { isRef, isSet, type FieldValue, type Fields, type OrderBy, type Scalar, type Where } from './types.js';

/** The value of `fields[name]`, or `undefined` when absent (never one inherited from `Object.prototype`). */
export function fieldValue(fields: Fields, name: string): FieldValue | undefined {
  return Object.hasOwn(fields, name) ? fields[name] : undefined;
}

/** Whether an object with these fields matches `where` (no `where`, or `{}`, matches every object). */
export function matches(fields: Fields, where: Where | undefined): boolean {
  return compileWhere(where)(fields);
}

/** `where` turned into one test, for applying the same filter to many objects. */
export function compileWhere(where: Where | undefined): (fields: Fields) => boolean {
  if (!where) return () => true;
  const tests = Object.keys(where).map((name) => {
    const test = compileCondition(where[name]);
    return (fields: Fields) => test(fieldValue(fields, name));
  });
  if (tests.length === 0) return () => true;
  if (tests.length === 1) return tests[0]!;
  return (fields) => tests.every((test) => test(fields));
}

type ValueTest = (value: FieldValue | undefined) => boolean;
const never: ValueTest = () => false;

/** Whether `value` is a `Scalar`: the only values a condition compares a field with. */
export function isScalar(value: unknown): value is Scalar {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** Whether a field value references `id`, directly or as a member of a set. */
export function referencesId(value: FieldValue | undefined, id: string): boolean {
  return (isRef(value) && value.$ref === id) || (isSet(value) && value.$set.includes(id));
}

/**
 * One field's condition as a test of its value (`undefined`: absent). Anything that is not a valid
 * condition (an unknown operator, an operand of the wrong type) matches nothing: the service refuses
 * such filters with `400` before a store sees them, and a store must never widen an answer.
 */
function compileCondition(condition: unknown): ValueTest {
  if (isScalar(condition)) return (value) => value === condition;
  if (isRef(condition)) {
    const id = condition.$ref;
    return (value) => referencesId(value, id);
  }
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) return never;
  const tests: ValueTest[] = [];
  for (const [operator, operand] of Object.entries(condition)) {
    const test = compileOperator(operator, operand);
    if (!test) return never;
    tests.push(test);
  }
  return (value) => tests.every((test) => test(value));
}

function compileOperator(operator: string, operand: unknown): ValueTest | undefined {
  switch (operator) {
    case '$ne':
      return isScalar(operand) ? (value) => value !== operand : undefined;
    case '$in': {
      if (!Array.isArray(operand) || !operand.every(isScalar)) return undefined;
      const allowed = new Set<unknown>(operand);
      return (value) => isScalar(value) && allowed.has(value);
    }
    case '$prefix':
      return typeof operand === 'string' ? (value) => typeof value === 'string' && value.startsWith(operand) : undefined;
    case '$exists':
      return typeof operand === 'boolean' ? (value) => (value !== undefined) === operand : undefined;
    case '$gt':
      return compileRange(operand, (order) => order > 0);
    case '$gte':
      return compileRange(operand, (order) => order >= 0);
    case '$lt':
      return compileRange(operand, (order) => order < 0);
    case '$lte':
      return compileRange(operand, (order) => order <= 0);
    default:
      return undefined;
  }
}

/** A comparison with a number (numbers only) or a string (strings only, by code point). */
function compileRange(operand: unknown, holds: (order: number) => boolean): ValueTest | undefined {
  if (typeof operand === 'number') return (value) => typeof value === 'number' && holds(value - operand);
  if (typeof operand === 'string') return (value) => typeof value === 'string' && holds(compareCodePoints(value, operand));
  return undefined;
}

/**
 * Compares two strings by Unicode code point (negative, 0, positive), which is also the order of their
 * UTF-8 bytes. JavaScript's `<` compares UTF-16 code units, which puts U+1F600 (a surrogate pair,
 * 0xD83D 0xDE00) before U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  let i = 0;
  while (i < length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === length) return a.length - b.length;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  // Below the surrogates, and above them on both sides, code units order like code points.
  if ((x < 0xd800 && y < 0xd800) || (x > 0xdfff && y > 0xdfff)) return x - y;
  // Inside a pair whose high half is shared, compare from that half: it decodes the whole code point.
  if (i > 0 && isHighSurrogate(a.charCodeAt(i - 1))) {
    const order = a.codePointAt(i - 1)! - b.codePointAt(i - 1)!;
    if (order !== 0) return order;
  }
  return a.codePointAt(i)! - b.codePointAt(i)!;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/** The rank of a value's kind in an ordering: absent or null, false, true, numbers, strings, the rest. */
function rank(value: FieldValue | undefined): number {
  if (value === undefined || value === null) return 0;
  switch (typeof value) {
    case 'boolean':
      return value ? 2 : 1;
    case 'number':
      return 3;
    case 'string':
      return 4;
    default:
      return 5;
  }
}

/**
 * Ascending order of two field values (`undefined`: absent), as `OrderBy` defines it: absent or `null`,
 * then `false`, `true`, numbers, strings by code point, then everything else, which all tie.
 */
export function compareFieldValues(a: FieldValue | undefined, b: FieldValue | undefined): number {
  const ranks = rank(a) - rank(b);
  if (ranks !== 0) return ranks;
  if (typeof a === 'number') return a - (b as number);
  if (typeof a === 'string') return compareCodePoints(a, b as string);
  return 0;
}

/**
 * Orders objects' fields by `orderBy`; ties answer 0. Sort objects in creation order with it (a stable
 * sort keeps ties in creation order), then reverse the result for `FindQuery.reverse`.
 */
export function orderComparator(orderBy: OrderBy): (a: Fields, b: Fields) => number {
  const { field } = orderBy;
  const sign = orderBy.descending ? -1 : 1;
  return (a, b) => sign * compareFieldValues(fieldValue(a, field), fieldValue(b, field));
}
