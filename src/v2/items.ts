/**
 * The bodies of the v2 group (PROTOCOL.md 6.9): a JSON list of items, each checked with its valibot
 * schema; a failure is `400` naming the item's index and member.
 */
import * as v from 'valibot';
import { ApiError } from '../http/errors.js';
import { readJson, type ApiRequest } from '../http/request.js';

/** Most items in one v2 body (as in a `/v1/multi` batch): each is a selection of its own. */
export const MAX_ITEMS = 100;

/** Every item of the body, parsed: `400` for a body that is not a list, or an item that does not fit. */
export function readItems<S extends v.GenericSchema>(request: ApiRequest, schema: S): v.InferOutput<S>[] {
  const body = readJson(request);
  if (!Array.isArray(body)) throw new ApiError('400', 'the body must be a JSON list of items ([{...}, ...])');
  if (body.length > MAX_ITEMS) throw new ApiError('400', `a body has at most ${MAX_ITEMS} items, not ${body.length}`);
  return body.map((item, index) => parseItem(schema, item, `item ${index}`));
}

/** One value against `schema`; the message names `where` and the member at fault. */
export function parseItem<S extends v.GenericSchema>(schema: S, value: unknown, where: string): v.InferOutput<S> {
  const result = v.safeParse(schema, value, { abortEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = issue.path?.map((item) => String(item.key)).join('.');
  if (!path) throw new ApiError('400', `${where} must be a JSON object`);
  if (issue.expected === 'never') throw new ApiError('400', `${where}: unknown member ${path}`);
  if (issue.input === undefined) throw new ApiError('400', `${where}: ${path} is required`);
  throw new ApiError('400', `${where}: ${path} ${issue.message}`);
}

export const flag = v.boolean('must be true or false');
export const text = v.string('must be a string');
/** `type` and `context`: accepted and passed to hooks; the 0.2 client sends strings (`"0"`, `"null"`). */
export const passed = v.union([v.string(), v.number(), v.null()], 'must be a string');
