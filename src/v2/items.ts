/**
 * The bodies of the v2 group (PROTOCOL.md 6.9): a JSON list of items, each checked with its valibot
 * schema; a failure is `400` naming the item's index and member (http/validate.ts).
 */
import * as v from 'valibot';

/** Most items in one v2 body (as in a `/v1/multi` batch): each is a selection of its own. */
export const MAX_ITEMS = 100;

/**
 * A body that is a list of items, each checked with `schema` (the dispatcher parses it from the
 * route's declaration): `400` for a body that is not a list, more than `MAX_ITEMS` items, or an item
 * that does not fit, naming the item ("item 2: className is required").
 */
export function itemsBody<S extends v.GenericSchema>(schema: S) {
  return v.pipe(
    v.array(schema, 'the body must be a JSON list of items ([{...}, ...])'),
    v.maxLength(MAX_ITEMS, (issue) => `a body has at most ${MAX_ITEMS} items, not ${(issue.input as unknown[]).length}`),
  );
}

export const flag = v.boolean('must be true or false');
export const text = v.string('must be a string');
/** `type` and `context`: accepted and passed to hooks; the 0.2 client sends strings (`"0"`, `"null"`). */
export const passed = v.union([v.string(), v.number(), v.null()], 'must be a string');
