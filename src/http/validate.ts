import * as v from 'valibot';
import { ApiError } from './errors.js';
import { readJson, type ApiRequest } from './request.js';
import type { QuerySchema, Route, RouteInput } from './router.js';

const OBJECT_TYPES = new Set(['object', 'loose_object', 'strict_object', 'object_with_rest']);

/**
 * Parses `value` with a valibot schema; a failure is `400` whose message names the member
 * ("user is required", "appNames must be an array of strings or a string"). The one translator of
 * validation issues, for every route's path parameters, query and body, host routes' and macros'
 * parameters alike.
 */
export function parseInput<S extends v.GenericSchema>(schema: S, value: unknown, what = 'request body'): v.InferOutput<S> {
  const result = v.safeParse(schema, value, { abortEarly: true });
  if (result.success) return result.output;
  throw new ApiError('400', issueMessage(result.issues[0], what));
}

/**
 * A validation issue as a sentence naming the member. A schema's own message is either a sentence
 * that names its member ("user must be a string") or a predicate starting with "must" that the
 * member's path is put before ("must be true or false"). An issue inside an item of a list body
 * (the v2 group, PROTOCOL.md 6.9) names the item: "item 2: className is required".
 */
function issueMessage(issue: v.BaseIssue<unknown>, what: string): string {
  // a union without a message of its own (a body of two forms): what its first form found
  if (issue.type === 'union' && issue.issues?.length && issue.message.startsWith('Invalid')) return issueMessage(issue.issues[0]!, what);
  let keys = issue.path?.map((item) => String(item.key)) ?? [];
  let subject = what;
  let prefix = '';
  const inItem = issue.path?.[0]?.type === 'array';
  if (inItem) {
    subject = `item ${keys[0]}`;
    prefix = `${subject}: `;
    keys = keys.slice(1);
  }
  const path = keys.join('.');
  if (!path) return issue.message.startsWith('Invalid') ? `${subject} must be a JSON object` : issue.message;
  if (issue.expected === 'never' && issue.message.startsWith('Invalid')) return `${prefix}unknown member ${path}`;
  if (inItem ? issue.input === undefined : issue.received === 'undefined' && OBJECT_TYPES.has(issue.type)) return `${prefix}${path} is required`;
  if (issue.message.startsWith('must ')) return `${prefix}${path} ${issue.message}`;
  if (issue.message.startsWith('Invalid type') && issue.expected) return `${prefix}${path} must be ${issue.expected}`;
  if (issue.message.startsWith('Invalid')) return `${prefix}${path} is invalid`;
  return prefix + issue.message;
}

/**
 * Parses the query parameters a route reads with the object schema it documents them with: each of
 * the schema's names, its first value, an empty value counting as absent (so the entry's own message
 * says what is missing or wrong).
 */
function parseQueryParams<S extends QuerySchema>(schema: S, searchParams: URLSearchParams): v.InferOutput<S> {
  if (searchParams.size === 0) {
    // most requests send no query: its parse is the same every time, so it is made once per schema
    const empty = emptyQueries.has(schema) ? emptyQueries.get(schema) : emptyQuery(schema);
    if (empty) return { ...empty } as v.InferOutput<S>;
  }
  const input: Record<string, string | undefined> = {};
  for (const name of Object.keys(schema.entries)) input[name] = searchParams.get(name) || undefined;
  // a strict schema sees every parameter given, to refuse those it does not name
  if (schema.type === 'strict_object') for (const name of searchParams.keys()) if (!Object.hasOwn(input, name)) input[name] = searchParams.get(name)!;
  return parseInput(schema, input, 'query');
}

/** The parse of an empty query per schema, where it succeeds with plain values only (`null`: parsed each time). */
const emptyQueries = new WeakMap<v.GenericSchema, Record<string, unknown> | null>();

function emptyQuery(schema: QuerySchema): Record<string, unknown> | null {
  const input = Object.fromEntries(Object.keys(schema.entries).map((name) => [name, undefined]));
  const result = v.safeParse(schema, input);
  const plain = result.success && Object.values(result.output as object).every((value) => typeof value !== 'object' || value === null);
  const empty = plain ? (result.output as Record<string, unknown>) : null;
  emptyQueries.set(schema, empty);
  return empty;
}

/** The schema under `optional`, `nullish` and `pipe` wrappers. */
function innermost(schema: v.GenericSchema): v.GenericSchema {
  let inner = schema as v.GenericSchema & { wrapped?: v.GenericSchema; pipe?: readonly unknown[] };
  for (;;) {
    if (inner.wrapped) inner = inner.wrapped as typeof inner;
    else if (inner.pipe && inner.pipe[0] !== inner) inner = inner.pipe[0] as typeof inner;
    else return inner;
  }
}

/** Whether a body schema takes only JSON objects: an object schema, or a union of them (a body of two forms). */
function takesObject(schema: v.GenericSchema): boolean {
  const inner = innermost(schema) as v.GenericSchema & { options?: readonly v.GenericSchema[] };
  if (inner.type === 'union' && inner.options) return inner.options.every(takesObject);
  return OBJECT_TYPES.has(inner.type);
}

/**
 * A route's input, parsed and checked from its declaration before its handler runs: the path
 * parameters, the query and the JSON body (`415` unless JSON, `400` naming the member). A route that
 * declares no body does not read one.
 */
export function routeInput(route: Route, request: ApiRequest): RouteInput<unknown, unknown, unknown> {
  const params = route.params ? parseInput(route.params, request.params, 'path') : request.params;
  const query = route.query ? parseQueryParams(route.query, request.searchParams) : undefined;
  let body: unknown;
  if (route.body && !route.rawBody) {
    const value = readJson(request);
    // valibot takes a list for an object; a body that must be an object is refused as one
    if (Array.isArray(value) && takesObject(route.body)) throw new ApiError('400', 'request body must be a JSON object');
    body = parseInput(route.body, value);
  }
  const input = { params, query, body };
  route.refine?.(input);
  return input;
}

/**
 * A JSON object, handed on as it came (`v.record` and `v.looseObject` drop `__proto__` members; a
 * route that refuses them by name must see them). The OpenAPI document shows it as an object.
 */
export function jsonObject(message: string) {
  return v.custom<Record<string, unknown>>((input) => typeof input === 'object' && input !== null && !Array.isArray(input), message);
}

/** An optional whole-number query parameter from 0 to `max` (`page`, `perPage`), `400` naming it otherwise. */
export function integerParam(name: string, max: number, description: string) {
  const message = `${name} must be an integer from 0 to ${max}`;
  return v.optional(v.pipe(v.string(), v.regex(/^\d{1,9}$/, message), v.description(description), v.transform(Number), v.maxValue(max, message)));
}

/**
 * An input parsed by a parser of its own that throws `ApiError` (the JSON-in-text `serialization` and
 * `subscribe` parameters, a class declaration): the parse becomes the schema's output, a `400` the
 * dispatcher's, its message as the parser wrote it; another code (a `403`) is answered as it is.
 */
export function parsedBy<I, T>(parse: (input: I) => T) {
  return v.rawTransform<I, T>(({ dataset, addIssue, NEVER }) => {
    try {
      return parse(dataset.value);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== '400') throw error;
      addIssue({ message: error.message });
      return NEVER;
    }
  });
}
