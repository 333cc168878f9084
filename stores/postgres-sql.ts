/**
 * The SQL that PostgresObjectStore's filters and orderings become (PROTOCOL.md 6.2, `Where` and
 * `OrderBy` in the storage types). Values always travel as parameters; only operator choice,
 * parameter numbers and the expressions of indexed fields are spliced into the text.
 *
 * Fields live in a `jsonb` column `data`, indexed by a GIN index (`jsonb_path_ops`). Every condition
 * the index can answer is written as containment (`data @> {...}`): equality, references (directly or
 * as a member of a set) and `$in`. The others test one member (`data -> 'f'`) by its JSON type:
 * strings compare under `COLLATE "C"`, which on a UTF-8 database is Unicode code point order.
 *
 * Fields named in the store's `indexedFields` also have a generated column (`f_<field>`, the member as
 * `jsonb`) under btree indexes, and fields a run-time declaration indexes have partial btree indexes on
 * the member itself (`data -> 'f'`, the name an escaped literal; pg-declared-indexes.ts): equality and
 * `$in` on them, and ordering by them, are written on that column or member, in exactly the
 * expressions the indexes hold.
 */
import { isRef, isScalar, StoreValueError, type Condition, type FieldOperators, type OrderBy, type Scalar, type Where } from '../src/index.js';

/** Collects parameters; `add` answers the placeholder of a new one. */
export class Params {
  readonly values: unknown[];
  /** The objects table (quoted), for reference paths (`$match`), which look referenced objects up in it. */
  table = '';
  /** The table's searchable-text function (`textFunctionSql`), whose trigram index serves `$text`. */
  textFunction = '';
  constructor(...initial: unknown[]) {
    this.values = initial;
  }
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** `{"<field>": <value>}` as JSON text, built as text so that any field name (even `__proto__`) stays data. */
function member(field: string, value: unknown): string {
  return `{${JSON.stringify(field)}:${JSON.stringify(value)}}`;
}

const RANGE = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

/** The generated column of an indexed field (the name is checked to be a plain identifier). */
export const indexedColumn = (field: string) => `"f_${field}"`;

/**
 * Fields answered from an index, each with the expression its indexes hold (a generated column, or
 * the member itself for a declared index): equalities and orders on the field are written on it.
 */
export type IndexedFields = ReadonlyMap<string, string>;

/** A `jsonb` value as a number when it is one, else NULL (so a comparison with it is never true). */
const numberOf = (v: string) => `(CASE WHEN jsonb_typeof(${v}) = 'number' THEN (${v})::numeric END)`;
/** A `jsonb` value as text when it is a string, else NULL; compared by code point. */
const stringOf = (v: string) => `(CASE WHEN jsonb_typeof(${v}) = 'string' THEN ${v} #>> '{}' END COLLATE "C")`;
/** The member `f` (a placeholder) of the fields. */
const memberOf = (f: string) => `(data -> ${f})`;

/**
 * The sort keys of a `jsonb` value, outermost first: its rank (absent/null 0, false 1, true 2,
 * numbers 3, strings 4, anything else 5), its number, its string.
 */
export function orderExpressions(v: string): string[] {
  const rank = `(CASE jsonb_typeof(${v}) WHEN 'boolean' THEN (CASE WHEN ${v} = 'true'::jsonb THEN 2 ELSE 1 END)
    WHEN 'number' THEN 3 WHEN 'string' THEN 4 WHEN 'array' THEN 5 WHEN 'object' THEN 5 ELSE 0 END)`;
  return [rank, numberOf(v), stringOf(v)];
}

/**
 * `AND ...` for every condition of `where` (empty for none). Scalar equalities of several fields are
 * one containment test, so the GIN index sees them together.
 */
export function whereSql(where: Where | undefined, params: Params, indexed: IndexedFields = new Map()): string {
  if (!where) return '';
  // PostgreSQL text cannot hold U+0000 (no stored value has it): refused as the write refuses it, not a server error
  if (JSON.stringify(where).replace(/\\\\/g, '').includes('\\u0000')) throw new StoreValueError('a filter value holds U+0000, which PostgreSQL text cannot hold');
  return conditionsSql(where, params, indexed).map((part) => ` AND ${part}`).join('');
}

/** The conditions of `where`, each a boolean expression, all of which must hold. */
function conditionsSql(where: Where, params: Params, indexed: IndexedFields, depth = 0): string[] {
  if (typeof where !== 'object' || where === null || Array.isArray(where) || depth > 64) return ['false'];
  const equal: string[] = [];
  const parts: string[] = [];
  for (const [field, value] of Object.entries(where)) {
    if (field.startsWith('$')) {
      parts.push(nodeSql(field, value, params, indexed, depth));
      continue;
    }
    const condition = value as Condition;
    const $in = isIn(condition);
    const column = indexed.get(field);
    if (column !== undefined && (isScalar(condition) || $in)) {
      const values = (isScalar(condition) ? [condition] : $in!).map((value) => JSON.stringify(value));
      parts.push(values.length === 1 ? `${column} = ${params.add(values[0])}::jsonb` : `${column} = ANY(${params.add(values)}::jsonb[])`);
    } else if (isScalar(condition)) equal.push(`${JSON.stringify(field)}:${JSON.stringify(condition)}`);
    else if (isRef(condition)) parts.push(`data @> ANY(${params.add(refPatterns(field, condition.$ref))}::jsonb[])`);
    else parts.push(operatorsSql(field, condition as FieldOperators, params));
  }
  if (equal.length > 0) parts.unshift(`data @> ${params.add(`{${equal.join(',')}}`)}::jsonb`);
  return parts;
}

/** One filter as a single boolean expression. */
function filterSql(where: unknown, params: Params, indexed: IndexedFields, depth: number): string {
  const parts = conditionsSql(where as Where, params, indexed, depth + 1);
  return parts.length === 0 ? 'true' : `(${parts.join(' AND ')})`;
}

/** The lower-cased string fields (not starting with `_`) of `fields`, joined by line feeds (`$text`). */
const searchableText = (fields: string) => `(SELECT coalesce(string_agg(lower(e.value #>> '{}'), E'\\n'), '') FROM jsonb_each(${fields}) e
  WHERE jsonb_typeof(e.value) = 'string' AND left(e.key, 1) <> '_')`;

/**
 * The function `$text` searches, one per table (`"<schema>"."<table>_text"(data)`): immutable, so a
 * trigram index (`pg_trgm`, GIN) can hold it and answer `LIKE '%word%'` from the index.
 */
export const textFunctionSql = (name: string) =>
  `CREATE OR REPLACE FUNCTION ${name}(fields jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $text$ SELECT ${searchableText('fields')} $text$`;

/** A `WhereNodes` member (see types.ts); anything else matches nothing. */
function nodeSql(name: string, operand: unknown, params: Params, indexed: IndexedFields, depth: number): string {
  const list = Array.isArray(operand) ? operand : undefined;
  switch (name) {
    case '$and':
      return list ? (list.length === 0 ? 'true' : `(${list.map((item) => filterSql(item, params, indexed, depth)).join(' AND ')})`) : 'false';
    case '$or':
      return list && list.length > 0 ? `(${list.map((item) => filterSql(item, params, indexed, depth)).join(' OR ')})` : 'false';
    case '$not':
      // a NULL (an operand of an unexpected type somewhere inside) must not turn into a match
      return typeof operand === 'object' && operand !== null && !list ? `NOT coalesce(${filterSql(operand, params, indexed, depth)}, false)` : 'false';
    case '$oids':
      return list && list.every((id) => typeof id === 'string') ? `id = ANY(${params.add(list)}::text[])` : 'false';
    case '$classes':
      return list && list.every((name) => typeof name === 'string') ? `class_name = ANY(${params.add(list)}::text[])` : 'false';
    case '$storeTime': {
      if (typeof operand !== 'object' || operand === null || list) return 'false';
      const parts: string[] = [];
      for (const [operator, value] of Object.entries(operand)) {
        if (operator in RANGE && typeof value === 'number') parts.push(`store_time ${RANGE[operator as keyof typeof RANGE]} ${params.add(String(value))}::numeric`);
        else if (operator === '$ne' && typeof value === 'number') parts.push(`store_time <> ${params.add(String(value))}::numeric`);
        else return 'false';
      }
      return parts.length === 0 ? 'true' : `(${parts.join(' AND ')})`;
    }
    case '$text': {
      if (typeof operand !== 'string') return 'false';
      const words = operand.toLowerCase().split(/\s+/u).filter((word) => word !== '');
      if (words.length === 0) return 'true';
      // one LIKE per word, in the index's expression: the trigram index answers them (words of 3
      // characters or more narrow it; shorter ones are checked on the rows)
      const text = params.textFunction ? `${params.textFunction}(data)` : searchableText('data');
      return `(${words.map((word) => `${text} LIKE ${params.add(`%${word.replace(/[\\%_]/g, '\\$&')}%`)}::text`).join(' AND ')})`;
    }
    default:
      return 'false';
  }
}

/** The values of a condition that is `{$in: [...]}` alone, with at least one scalar. */
function isIn(condition: Condition): Scalar[] | undefined {
  if (typeof condition !== 'object' || condition === null || isRef(condition)) return undefined;
  const keys = Object.keys(condition);
  const values = (condition as FieldOperators).$in;
  return keys.length === 1 && keys[0] === '$in' && Array.isArray(values) && values.length > 0 && values.every(isScalar) ? values : undefined;
}

/** The fields that reference `id`: directly or as a member of a set. */
const refPatterns = (field: string, id: string) => [member(field, { $ref: id }), member(field, { $set: [id] })];

/**
 * `where` as containment tests, when it is made only of equalities, references and `$in`: JSON text of
 * an array of conditions that all must hold, each an array of patterns of which the fields must contain
 * one (the trigger keeps totals of such filters up to date). Otherwise `undefined`.
 */
export function containment(where: Where): string | undefined {
  const equal: string[] = [];
  const conds: string[][] = [];
  for (const [field, value] of Object.entries(where)) {
    if (field.startsWith('$')) return undefined;
    const condition = value as Condition;
    const $in = isIn(condition);
    if (isScalar(condition)) equal.push(`${JSON.stringify(field)}:${JSON.stringify(condition)}`);
    else if (isRef(condition)) conds.push(refPatterns(field, condition.$ref));
    else if ($in) conds.push($in.map((value) => member(field, value)));
    else return undefined;
  }
  if (equal.length > 0) conds.unshift([`{${equal.join(',')}}`]);
  return conds.length === 0 ? undefined : `[${conds.map((patterns) => `[${patterns.join(',')}]`).join(',')}]`;
}

/**
 * The conditions of one field's operators, ANDed. Anything that is not a valid condition (an unknown
 * operator, an operand of the wrong type) matches nothing, as in every store: the service refuses such
 * filters before a store sees them, and a store must never widen an answer.
 */
function operatorsSql(field: string, operators: FieldOperators, params: Params): string {
  if (typeof operators !== 'object' || operators === null || Array.isArray(operators)) return 'false';
  const parts: string[] = [];
  const mark = params.values.length;
  let name: string | undefined;
  const f = () => (name ??= params.add(field));
  for (const [operator, value] of Object.entries(operators) as [string, unknown][]) {
    const part = operatorSql(operator, value, field, f, params);
    if (part === undefined) {
      params.values.length = mark; // the parameters of the operators before it go unused
      return 'false';
    }
    parts.push(part);
  }
  return parts.length === 0 ? 'true' : parts.join(' AND ');
}

/**
 * `$match`: one of the ids the member references (`{"$ref": id}`, or the strings of `{"$set": [...]}`)
 * names a row of the table that matches the filter. The ids come from the outer row (the function in
 * FROM sees only it), the referenced row is found by its primary key, and the filter's bare column
 * names inside resolve to that row (`m`), so paths nest.
 */
function matchSql(where: unknown, f: () => string, params: Params): string | undefined {
  if (typeof where !== 'object' || where === null || Array.isArray(where) || !params.table) return undefined;
  const v = memberOf(f());
  const ids = `jsonb_path_query(${v}, 'strict $."$ref" ? (@.type() == "string")', '{}', true)
    UNION ALL SELECT jsonb_path_query(${v}, 'strict $."$set"[*] ? (@.type() == "string")', '{}', true)`;
  return `EXISTS (SELECT 1 FROM (SELECT ${ids}) r(ref) JOIN ${params.table} m ON m.id = r.ref #>> '{}' WHERE ${filterSql(where, params, new Map(), 0)})`;
}

function operatorSql(operator: string, value: unknown, field: string, f: () => string, params: Params): string | undefined {
  switch (operator) {
    case '$match':
      return matchSql(value, f, params);
    case '$ne':
      return isScalar(value) ? `NOT (data @> ${params.add(member(field, value))}::jsonb)` : undefined;
    case '$eq':
      if (!isScalar(value)) return undefined;
      return `data @> ANY(${params.add([member(field, value), ...(typeof value === 'string' ? refPatterns(field, value) : [])])}::jsonb[])`;
    case '$like': {
      if (typeof value !== 'string') return undefined;
      const pattern = [...value.toLowerCase()].map((c) => (c === '*' ? '%' : c === '?' ? '_' : c === '%' || c === '_' || c === '\\' ? `\\${c}` : c)).join('');
      // lower() under the database's collation, as $text: under "C" it lowers ASCII letters only
      const v = memberOf(f());
      return `lower(CASE WHEN jsonb_typeof(${v}) = 'string' THEN ${v} #>> '{}' END) LIKE ${params.add(pattern)}::text`;
    }
    case '$null':
      if (typeof value !== 'boolean') return undefined;
      return value ? `coalesce(${memberOf(f())} = 'null'::jsonb, true)` : `coalesce(${memberOf(f())} <> 'null'::jsonb, false)`;
    case '$in':
      if (!Array.isArray(value) || !value.every(isScalar)) return undefined;
      return value.length === 0 ? 'false' : `data @> ANY(${params.add((value as Scalar[]).map((item) => member(field, item)))}::jsonb[])`;
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      if (typeof value === 'number') return `${numberOf(memberOf(f()))} ${RANGE[operator]} ${params.add(String(value))}::numeric`;
      if (typeof value === 'string') return `${stringOf(memberOf(f()))} ${RANGE[operator]} ${params.add(value)}::text`;
      return undefined;
    case '$prefix':
      return typeof value === 'string' ? `starts_with(${stringOf(memberOf(f()))}, ${params.add(value)}::text)` : undefined;
    case '$exists':
      if (typeof value !== 'boolean') return undefined;
      return value ? `data ? ${f()}` : `NOT (data ? ${f()})`;
    default:
      return undefined;
  }
}

/**
 * The sort keys of a listing, outermost first, each with its direction: for `orderBy` the value's
 * keys (`orderExpressions`, on the expression of an indexed field), then creation order (`seq`).
 * `descending` flips the value keys only; `reverse` flips all. Expressions name columns bare, so they
 * work in the page query and, prefixed, outside it.
 */
export function orderKeys(
  orderBy: OrderBy | undefined,
  reverse: boolean,
  params: Params,
  indexed: IndexedFields = new Map(),
): { expr: string; dir: 'ASC' | 'DESC' }[] {
  const seq = { expr: 'seq', dir: reverse ? 'DESC' : 'ASC' } as const;
  if (!orderBy) return [seq];
  const value = indexed.get(orderBy.field) ?? memberOf(params.add(orderBy.field));
  const dir = (orderBy.descending ?? false) !== reverse ? 'DESC' : 'ASC';
  return [...orderExpressions(value).map((expr) => ({ expr, dir }) as const), seq];
}
