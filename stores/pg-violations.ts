/**
 * `ObjectStore.violations` on PostgreSQL: one statement per declaration (`ClassRules`) that reads the
 * class once, on the server, and counts the rows a write of that declaration would refuse (a run-time
 * declaration's check, PROTOCOL.md 6.12). Every clause mirrors the write check (`ClassRules` in
 * src/storage/types.ts), V8's `Date.parse` for dates included.
 *
 * Each field is taken out of a row's `data` once, and its type, text and number once from that, in
 * subqueries the planner keeps (`OFFSET 0`): written inline, every clause extracted the field again
 * (a declaration of six fields over 100,000 objects: about half the time went to that).
 */
import type { ClassRules } from '../src/index.js';
import type { Params } from './postgres-sql.js';

type FieldRule = ClassRules['fields'][string];

/** Whether a value's UTF-16 length (what JavaScript's `length` counts) exceeds `max`: characters beyond the BMP count twice. */
function longerThan(text: string, max: string): string {
  return `(char_length(${text}) > ${max} OR (char_length(${text}) * 2 > ${max} AND char_length(${text}) + char_length(regexp_replace(${text}, '[^\\U00010000-\\U0010FFFF]', '', 'g')) > ${max}))`;
}

/** ISO 8601 as the write check takes it: the shape, then what `Date.parse` refuses (month, day, hour, minute, second and zone ranges). */
const ISO = `'^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:?\\d{2})?)?$'`;
function validDate(s: string): string {
  const int = (from: number, to = 2) => `substr(${s}, ${from}, ${to})::int`;
  const seconds = `(CASE WHEN substr(${s}, 17, 1) = ':' THEN ${int(18)} ELSE 0 END)`;
  const fraction = `coalesce(substring(${s} from '\\.(\\d+)'), '0')`;
  const zone = `substring(${s} from '[+-](\\d{2}):?(\\d{2})$')`;
  const zoneParts = `regexp_match(${s}, '[+-](\\d{2}):?(\\d{2})$')`;
  return `(CASE
    WHEN ${s} ~ '^\\d{8}T\\d{6}\\+\\d{2}:\\d{2}$' THEN true
    WHEN NOT ${s} ~ ${ISO} THEN false
    WHEN NOT (${int(6)} BETWEEN 1 AND 12 AND ${int(9)} BETWEEN 1 AND 31) THEN false
    WHEN char_length(${s}) = 10 THEN true
    ELSE ${int(15)} <= 59 AND ${seconds} <= 59
      AND (${int(12)} < 24 OR (${int(12)} = 24 AND ${int(15)} = 0 AND ${seconds} = 0 AND ${fraction} ~ '^0+$'))
      AND (${zone} IS NULL OR ((${zoneParts})[1]::int <= 23 AND (${zoneParts})[2]::int <= 59))
    END)`;
}

/**
 * The columns a field's clause reads, each computed once per row: `v` the field's `jsonb` (NULL when
 * absent), `type` its `jsonb_typeof`, `text` its text (of string and date fields) and `number` its
 * value as `numeric` (of number fields, NULL when it is no number).
 */
interface FieldColumns {
  v: string;
  type: string;
  text: string;
  number: string;
}

/** What a field's clause reads beside `v` (`f<i>`), as select items over it. */
function derivedColumns(i: number, rule: FieldRule): string[] {
  const v = `f${i}`;
  if (rule.type === 'json') return [];
  const items = [`jsonb_typeof(${v}) AS t${i}`];
  if (rule.type === 'string' || rule.type === 'date') items.push(`${v} #>> '{}' AS s${i}`);
  if (rule.type === 'number' || rule.type === 'integer') items.push(`CASE WHEN jsonb_typeof(${v}) = 'number' THEN (${v})::numeric END AS n${i}`);
  return items;
}

const columnsOf = (i: number): FieldColumns => ({ v: `f${i}`, type: `t${i}`, text: `s${i}`, number: `n${i}` });

/** The clause that holds when the field (its `columns`) breaks `rule`. */
function fieldViolation({ v, type, text, number }: FieldColumns, rule: FieldRule, params: Params): string {
  const absent = `(${v} IS NULL OR ${type} = 'null')`;
  let wrong: string;
  switch (rule.type) {
    case 'string': {
      const parts = [`${type} <> 'string'`];
      if (rule.maxLength !== undefined) parts.push(longerThan(text, params.add(rule.maxLength)));
      if (rule.enum) parts.push(`NOT (${text} = ANY(${params.add(rule.enum.map(String))}::text[]))`);
      wrong = parts.length === 1 ? parts[0]! : `(CASE WHEN ${type} <> 'string' THEN true ELSE ${parts.slice(1).join(' OR ')} END)`;
      break;
    }
    case 'number':
    case 'integer': {
      const parts: string[] = [];
      if (rule.type === 'integer') parts.push(`${number} <> trunc(${number})`);
      if (rule.min !== undefined) parts.push(`${number} < ${params.add(rule.min)}::numeric`);
      if (rule.max !== undefined) parts.push(`${number} > ${params.add(rule.max)}::numeric`);
      if (rule.enum) parts.push(`NOT (${number} = ANY(${params.add(rule.enum.map(String))}::numeric[]))`);
      wrong = `(CASE WHEN ${type} <> 'number' THEN true ELSE ${parts.length ? parts.join(' OR ') : 'false'} END)`;
      break;
    }
    case 'boolean':
      wrong = `${type} <> 'boolean'`;
      break;
    case 'date':
      wrong = `(CASE WHEN ${type} <> 'string' THEN true ELSE NOT ${validDate(text)} END)`;
      break;
    case 'json':
      // anything, JSON null included: a required one only has to be present
      return `(${v} IS NULL)`;
    case 'ref':
    case 'file':
      // no subquery per row (jsonb_object_keys): the object without $ref is empty
      wrong = `NOT (${type} = 'object' AND jsonb_typeof(${v} -> '$ref') IS NOT DISTINCT FROM 'string' AND ${v} - '$ref' = '{}'::jsonb)`;
      break;
    case 'set':
      wrong = `NOT (${type} = 'object' AND jsonb_typeof(${v} -> '$set') IS NOT DISTINCT FROM 'array' AND ${v} - '$set' = '{}'::jsonb
        AND NOT jsonb_path_exists(${v} -> '$set', 'strict $[*] ? (@.type() != "string")'))`;
      break;
  }
  return rule.required ? `(${absent} OR ${wrong})` : `(NOT ${absent} AND ${wrong})`;
}

/**
 * The statement that answers `n`, how many rows of the class `$1` break `rules`, and beside it the `id`
 * of the first `$2` of them in creation order (one row each; none when no row breaks them).
 */
export function violationsSql(table: string, rules: ClassRules, params: Params): string {
  // a json field that may be absent takes anything: no clause (and no parameter PostgreSQL could not type)
  const checked = Object.entries(rules.fields).filter(([, rule]) => rule.type !== 'json' || rule.required);
  const fields = checked.map(([field], i) => `data -> ${params.add(field)} AS f${i}`);
  const derived = checked.flatMap(([, rule], i) => derivedColumns(i, rule));
  const clauses = checked.map(([, rule], i) => fieldViolation(columnsOf(i), rule, params));
  if (rules.strict) {
    clauses.push(`EXISTS (SELECT 1 FROM jsonb_object_keys(data) k WHERE left(k, 1) <> '_' AND NOT (k = ANY(${params.add(Object.keys(rules.fields))}::text[])))`);
  }
  const where = clauses.length === 0 ? 'false' : clauses.join(' OR ');
  // OFFSET 0 keeps each subquery as it is: pulled up, its columns would be the expressions again, in every clause
  const rows = `SELECT ${['seq', 'id', ...(rules.strict ? ['data'] : []), ...fields].join(', ')} FROM ${table} WHERE class_name = $1 OFFSET 0`;
  const typed = derived.length === 0 ? rows : `SELECT *, ${derived.join(', ')} FROM (${rows}) r OFFSET 0`;
  return `SELECT count(*) OVER () AS n, id FROM (${typed}) r WHERE ${where} ORDER BY seq LIMIT $2`;
}
