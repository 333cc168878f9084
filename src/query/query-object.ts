/**
 * The listing parameters `query` and `orderBy` (PROTOCOL.md 6.2), checked at the edge and turned into
 * the store's `Where` and `OrderBy`, query text included (`parse.ts`): a listing's query goes into
 * this folder once and comes out a filter. Every refusal is `400` naming the member at fault.
 */
import { ApiError, clip } from '../http/errors.js';
import { parseJsonText } from '../http/json.js';
import { isScalar } from '../storage/filter.js';
import type { Condition, FieldOperators, OrderBy, Where } from '../storage/types.js';
import { MAX_IN_VALUES, queryTextWhere } from './parse.js';

const QUERY_SHAPE = 'query must be a JSON object of field values, e.g. {"Name":"Alice"}';

type OperandCheck = (operand: unknown) => boolean;
const range: OperandCheck = (operand) => (typeof operand === 'number' && Number.isFinite(operand)) || typeof operand === 'string';

/** The operators a listing's query object takes (PROTOCOL.md 6.2): those of the store's `FieldOperators` a client may send. */
export type JsonOperator = '$ne' | '$gt' | '$gte' | '$lt' | '$lte' | '$in' | '$prefix' | '$exists';
/** Each operator and the operands it takes, as the message names them. */
const OPERATORS: Record<JsonOperator, [check: OperandCheck, expected: string]> = {
  $ne: [isScalar, 'a string, number, boolean or null'],
  $gt: [range, 'a number or a string'],
  $gte: [range, 'a number or a string'],
  $lt: [range, 'a number or a string'],
  $lte: [range, 'a number or a string'],
  $in: [(operand) => Array.isArray(operand) && operand.length <= MAX_IN_VALUES && operand.every(isScalar), `a list of at most ${MAX_IN_VALUES} strings, numbers, booleans or nulls`],
  $prefix: [(operand) => typeof operand === 'string', 'a string'],
  $exists: [(operand) => typeof operand === 'boolean', 'true or false'],
};

/** A field name a client may filter or order on: not empty, at most 128 characters, no `_` in front. */
export function checkFieldName(name: string, what: string): void {
  if (name === '' || name.length > 128) throw new ApiError('400', `${what} must name a field of 1 to 128 characters`);
  if (name.startsWith('_')) throw new ApiError('400', `${what} may not name internal field ${clip(name)}`);
}

function condition(field: string, value: unknown): Condition {
  if (isScalar(value)) return value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError('400', `query member ${clip(field)} must be a scalar, a reference {"~ObjectID": ...} or an object of operators`);
  }
  if (Object.hasOwn(value, '~ObjectID')) {
    const id = (value as Record<string, unknown>)['~ObjectID'];
    if (typeof id !== 'string' || id === '' || id.length > 128) throw new ApiError('400', `query member ${clip(field)}: ~ObjectID must be an object id`);
    return { $ref: id };
  }
  const entries = Object.entries(value);
  if (entries.length === 0) throw new ApiError('400', `query member ${clip(field)} holds no operator`);
  for (const [operator, operand] of entries) {
    const rule = Object.hasOwn(OPERATORS, operator) ? OPERATORS[operator as JsonOperator] : undefined;
    if (!rule) throw new ApiError('400', `query member ${clip(field)}: unknown operator ${clip(operator)} (use ${Object.keys(OPERATORS).join(', ')})`);
    if (!rule[0](operand)) throw new ApiError('400', `query member ${clip(field)}: ${operator} takes ${rule[1]}`);
  }
  return value as FieldOperators;
}

/** Most ids the query object's `oids` may list. */
export const MAX_OIDS = 1000;

/** The query object's `macro` (6.2): a registered host macro that filters the selection, and its `macroLevel`. */
export interface SelectionMacro {
  name: string;
  /** -1..2, passed on to the macro. */
  level?: number;
}

/** The query object's `folderPath` and `folderType` (6.2), answered by the host's `folders` hook. */
export interface FolderSelection {
  folderPath?: string;
  folderType?: string;
}

/** The query parameter as the selection uses it: the filter and the members that are not field conditions. */
export interface QueryObject {
  where: Where;
  sortIndex?: OrderBy;
  macro?: SelectionMacro;
  folder?: FolderSelection;
}

const MACRO_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

function folderMember(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value === '' || value.length > max) throw new ApiError('400', `query member ${field} must be a string of 1 to ${max} characters`);
  return value;
}

/**
 * The `query` parameter: field conditions and the product's members (6.2) `queryString`, `oids`,
 * `sortIndex` (which replaces `orderBy`), `macro` with `macroLevel`, `folderPath` and `folderType`.
 * The last two are answered when the selection is made (they need the request and the host's hooks).
 */
export function parseQueryObject(raw: string | null): QueryObject {
  if (raw === null || raw === '') return { where: {} };
  let parsed: unknown;
  try {
    parsed = parseJsonText(raw, 'query');
  } catch (error) {
    if (error instanceof ApiError && error.message.includes('deeper')) throw error;
    throw new ApiError('400', QUERY_SHAPE);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ApiError('400', QUERY_SHAPE);
  const where: Where = {};
  const and: Where[] = [];
  let sortIndex: OrderBy | undefined;
  let macro: string | undefined;
  let macroLevel: number | undefined;
  let folder: FolderSelection | undefined;
  for (const [field, value] of Object.entries(parsed)) {
    if (field === 'queryString') {
      if (typeof value !== 'string') throw new ApiError('400', 'query member queryString must be a string of query text');
      and.push(queryTextWhere(value));
    } else if (field === 'oids') and.push({ $oids: parseOids(value, 'query member oids') });
    else if (field === 'sortIndex') {
      if (typeof value !== 'string') throw new ApiError('400', 'query member sortIndex must be a field name, ! in front for descending');
      const descending = value.startsWith('!');
      const name = descending ? value.slice(1) : value;
      checkFieldName(name, 'query member sortIndex');
      sortIndex = descending ? { field: name, descending } : { field: name };
    } else if (field === 'macro') {
      if (typeof value !== 'string' || !MACRO_NAME.test(value)) throw new ApiError('400', 'query member macro must be the name of a registered macro');
      macro = value;
    } else if (field === 'macroLevel') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < -1 || value > 2) throw new ApiError('400', 'query member macroLevel must be an integer from -1 to 2');
      macroLevel = value;
    } else if (field === 'folderPath') folder = { ...folder, folderPath: folderMember(field, value, 1024) };
    else if (field === 'folderType') folder = { ...folder, folderType: folderMember(field, value, 128) };
    else {
      checkFieldName(field, `query member ${clip(field)}`);
      if (field.startsWith('$')) throw new ApiError('400', `query member ${clip(field)} is neither a field nor a member of the query object`);
      where[field] = condition(field, value);
    }
  }
  // a filter whose names the field conditions do not hold joins them, so a store's indexes see its
  // conditions (query text's City = "x" as the JSON filter's); the rest stay in $and
  const rest: Where[] = [];
  for (const item of and) {
    if (Object.keys(item).some((name) => Object.hasOwn(where, name))) rest.push(item);
    else for (const name of Object.keys(item)) Object.defineProperty(where, name, { value: item[name], enumerable: true, writable: true, configurable: true });
  }
  if (rest.length > 0) where.$and = rest;
  const query: QueryObject = { where };
  if (sortIndex) query.sortIndex = sortIndex;
  // macroLevel without a macro has nothing to be passed on to: accepted, as the product's clients send it
  if (macro !== undefined) query.macro = macroLevel === undefined ? { name: macro } : { name: macro, level: macroLevel };
  if (folder) query.folder = folder;
  return query;
}

/** A list of at most `MAX_OIDS` object ids. */
export function parseOids(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || value.length > MAX_OIDS || !value.every((id) => (typeof id === 'string' && id !== '' && id.length <= 128) || (typeof id === 'number' && Number.isInteger(id)))) {
    throw new ApiError('400', `${what} must be a list of at most ${MAX_OIDS} object ids`);
  }
  return value.map(String);
}

/** The `orderBy` parameter: a field name, `-` in front for descending. */
export function parseOrderBy(raw: string | null): OrderBy | undefined {
  if (raw === null || raw === '') return undefined;
  const descending = raw.startsWith('-');
  const field = descending ? raw.slice(1) : raw;
  checkFieldName(field, 'orderBy');
  return descending ? { field, descending } : { field };
}

/** A listing's query parameters as sent: the JSON query object, query text, ids, full text and order. */
export interface QueryParams {
  /** The `query` parameter: the JSON query object (field conditions and the product's members, 6.2). */
  query?: string;
  /** Query text (6.2 grammar), as v2's `query` member carries it. */
  queryText?: string;
  /** Only these object ids (v2 `byParentObject`, the query object's `oids`). */
  oids?: readonly string[];
  /** Words every object must contain in its string fields (v2 `seFulltext`, 6.9). */
  fullText?: string;
  orderBy?: string;
}

/** What a listing's query parameters select: one filter, its order, and the members answered later. */
export interface CompiledQuery {
  where: Where;
  /** Absent: creation order. */
  orderBy: OrderBy | undefined;
  macro?: SelectionMacro;
  folder?: FolderSelection;
}

/** A listing's query parameters, checked and compiled once into one filter (`400` naming the member at fault). */
export function compileListingQuery(params: QueryParams): CompiledQuery {
  const query = parseQueryObject(params.query ?? null);
  const and: Where[] = [];
  if (params.queryText !== undefined) and.push(queryTextWhere(params.queryText));
  if (params.oids !== undefined) and.push({ $oids: parseOids(params.oids, 'oids') });
  if (params.fullText !== undefined) and.push({ $text: params.fullText });
  const compiled: CompiledQuery = {
    where: and.length === 0 ? query.where : { $and: [query.where, ...and] },
    // the query object's sortIndex replaces orderBy (6.2)
    orderBy: query.sortIndex ?? parseOrderBy(params.orderBy ?? null),
  };
  if (query.macro) compiled.macro = query.macro;
  if (query.folder) compiled.folder = query.folder;
  return compiled;
}

/**
 * `where` with query text's `=` (`{$eq: v}`, which also matches a reference to the object with id
 * `v`) turned into plain equality (`v`) on the fields `plain` names: those the declared schema says
 * hold no reference. Same answer, but a store serves plain equality from the field's own index
 * (PostgreSQL: the btree of an indexed field rather than the GIN index of all fields). Reference
 * paths (`$match`) reach other classes and stay as they are.
 */
export function plainEquality(where: Where, plain: (field: string) => boolean): Where {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(where)) {
    if (key === '$and' || key === '$or') out[key] = Array.isArray(value) ? value.map((item) => plainEquality(item as Where, plain)) : value;
    else if (key === '$not') out[key] = typeof value === 'object' && value !== null && !Array.isArray(value) ? plainEquality(value as Where, plain) : value;
    else if (!key.startsWith('$') && isOnlyEq(value) && plain(key)) out[key] = value.$eq;
    else out[key] = value;
  }
  return out as Where;
}

function isOnlyEq(condition: unknown): condition is { $eq: string | number | boolean | null } {
  return typeof condition === 'object' && condition !== null && !Array.isArray(condition) && Object.keys(condition).length === 1 && '$eq' in condition && isScalar((condition as { $eq: unknown }).$eq);
}
