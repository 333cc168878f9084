import * as v from 'valibot';
import { ApiError } from './errors.js';

/**
 * Parses `value` with a valibot schema; a failure is `400` whose message names the member
 * ("user is required", "appNames must be an array of strings or a string").
 */
export function parseInput<S extends v.GenericSchema>(schema: S, value: unknown, what = 'request body'): v.InferOutput<S> {
  const result = v.safeParse(schema, value, { abortEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = issue.path?.map((item) => String(item.key)).join('.');
  let message: string;
  if (!path) message = `${what} must be a JSON object`;
  else if (issue.received === 'undefined' && issue.type === 'object') message = `${path} is required`;
  else message = issue.message.startsWith('Invalid') ? `${path} is invalid` : issue.message;
  throw new ApiError('400', message);
}

/**
 * Parses the query parameters a route reads with the object schema it documents them with: each of
 * the schema's names, its first value, an empty value counting as absent (so the entry's own message
 * says what is missing or wrong).
 */
export function parseQueryParams<S extends v.ObjectSchema<v.ObjectEntries, undefined>>(schema: S, searchParams: URLSearchParams): v.InferOutput<S> {
  const input: Record<string, string | undefined> = {};
  for (const name of Object.keys(schema.entries)) input[name] = searchParams.get(name) || undefined;
  return parseInput(schema, input, 'query');
}

/** An optional whole-number query parameter from 0 to `max` (`page`, `perPage`), `400` naming it otherwise. */
export function integerParam(name: string, max: number, description: string) {
  const message = `${name} must be an integer from 0 to ${max}`;
  return v.optional(v.pipe(v.string(), v.regex(/^\d{1,9}$/, message), v.description(description), v.transform(Number), v.maxValue(max, message)));
}
