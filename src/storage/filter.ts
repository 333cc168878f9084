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
export function matches(fields: Fields, where: Where | undefined, object?: ObjectMeta, lookup?: Lookup): boolean {
  return compileWhere(where, lookup)(fields, object);
}

/** An object's id, store time and class, for `$oids`, `$storeTime` and `$classes` (without them those match nothing). */
export interface ObjectMeta {
  id: string;
  storeTime: number;
  className?: string;
}
/** Finds a referenced object by id, for `$match` (without it `$match` matches nothing). */
export type Lookup = (id: string) => (ObjectMeta & { fields: Fields }) | undefined;
type ObjectTest = (fields: Fields, object?: ObjectMeta) => boolean;

/** `where` turned into one test, for applying the same filter to many objects. */
export function compileWhere(where: Where | undefined, lookup?: Lookup, depth = 0): ObjectTest {
  if (!where || typeof where !== 'object' || Array.isArray(where)) return where ? () => false : () => true;
  if (depth > 64) return () => false;
  const tests: ObjectTest[] = Object.keys(where).map((name) => {
    const condition: unknown = (where as Record<string, unknown>)[name];
    if (name.startsWith('$')) return compileNode(name, condition, lookup, depth);
    const test = compileCondition(condition, lookup, depth);
    return (fields: Fields) => test(fieldValue(fields, name));
  });
  if (tests.length === 0) return () => true;
  if (tests.length === 1) return tests[0]!;
  return (fields, object) => tests.every((test) => test(fields, object));
}

const nothing: ObjectTest = () => false;

/** A `WhereNodes` member; anything else starting with `$` matches nothing (never a wider answer). */
function compileNode(name: string, operand: unknown, lookup: Lookup | undefined, depth: number): ObjectTest {
  const list = Array.isArray(operand) ? operand : undefined;
  switch (name) {
    case '$and': {
      if (!list) return nothing;
      const tests = list.map((item) => compileWhere(item as Where, lookup, depth + 1));
      return (fields, object) => tests.every((test) => test(fields, object));
    }
    case '$or': {
      if (!list) return nothing;
      const tests = list.map((item) => compileWhere(item as Where, lookup, depth + 1));
      return (fields, object) => tests.some((test) => test(fields, object));
    }
    case '$not': {
      if (typeof operand !== 'object' || operand === null || list) return nothing;
      const test = compileWhere(operand as Where, lookup, depth + 1);
      return (fields, object) => !test(fields, object);
    }
    case '$oids': {
      if (!list || !list.every((id) => typeof id === 'string')) return nothing;
      const ids = new Set<string>(list as string[]);
      return (_, object) => object !== undefined && ids.has(object.id);
    }
    case '$classes': {
      if (!list || !list.every((name) => typeof name === 'string')) return nothing;
      const names = new Set<string>(list as string[]);
      return (_, object) => object?.className !== undefined && names.has(object.className);
    }
    case '$storeTime': {
      const test = compileCondition(operand, undefined, depth);
      return (_, object) => object !== undefined && typeof operand === 'object' && operand !== null && test(object.storeTime);
    }
    case '$text': {
      if (typeof operand !== 'string') return nothing;
      const words = textWords(operand);
      return (fields) => {
        if (words.length === 0) return true;
        const text = searchableText(fields);
        return words.every((word) => text.includes(word));
      };
    }
    default:
      return nothing;
  }
}

/** Whether `where` follows references (`$match`): its answer then depends on other objects than the class's. */
export function followsReferences(where: unknown): boolean {
  if (typeof where !== 'object' || where === null) return false;
  return Object.entries(where).some(([key, value]) => key === '$match' || followsReferences(value));
}

/** The words of a full-text search, lower-cased. */
export function textWords(text: string): string[] {
  return text.toLowerCase().split(/\s+/u).filter((word) => word !== '');
}

/** The object's top-level string fields (not starting with `_`), lower-cased, joined by line feeds. */
export function searchableText(fields: Fields): string {
  const parts: string[] = [];
  for (const name of Object.keys(fields)) {
    const value = fields[name];
    if (!name.startsWith('_') && typeof value === 'string') parts.push(value.toLowerCase());
  }
  return parts.join('\n');
}

/** A `$like` pattern as a regular expression over the lower-cased value. */
export function likePattern(pattern: string): RegExp {
  let source = '';
  for (const char of pattern.toLowerCase()) {
    source += char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'su');
}

/** The ids a field value references: directly, or as members of a set. */
export function referencedIds(value: FieldValue | undefined): string[] {
  const ids: string[] = [];
  if (isRef(value)) ids.push(value.$ref);
  if (isSet(value)) for (const id of value.$set) if (typeof id === 'string') ids.push(id);
  return ids;
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
function compileCondition(condition: unknown, lookup?: Lookup, depth = 0): ValueTest {
  if (isScalar(condition)) return (value) => value === condition;
  if (isRef(condition)) {
    const id = condition.$ref;
    return (value) => referencesId(value, id);
  }
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) return never;
  const tests: ValueTest[] = [];
  for (const [operator, operand] of Object.entries(condition)) {
    const test = operator === '$match' ? compileMatch(operand, lookup, depth) : compileOperator(operator, operand);
    if (!test) return never;
    tests.push(test);
  }
  return (value) => tests.every((test) => test(value));
}

/** `$match`: a referenced object (direct or a set member) exists and matches the filter. */
function compileMatch(operand: unknown, lookup: Lookup | undefined, depth: number): ValueTest | undefined {
  if (!lookup || typeof operand !== 'object' || operand === null || Array.isArray(operand)) return undefined;
  const test = compileWhere(operand as Where, lookup, depth + 1);
  return (value) =>
    referencedIds(value).some((id) => {
      const target = lookup(id);
      return target !== undefined && test(target.fields, target);
    });
}

function compileOperator(operator: string, operand: unknown): ValueTest | undefined {
  switch (operator) {
    case '$ne':
      return isScalar(operand) ? (value) => value !== operand : undefined;
    case '$eq':
      if (!isScalar(operand)) return undefined;
      return typeof operand === 'string' ? (value) => value === operand || referencesId(value, operand) : (value) => value === operand;
    case '$like': {
      if (typeof operand !== 'string') return undefined;
      const pattern = likePattern(operand);
      return (value) => typeof value === 'string' && pattern.test(value.toLowerCase());
    }
    case '$null':
      return typeof operand === 'boolean' ? (value) => (value === undefined || value === null) === operand : undefined;
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
