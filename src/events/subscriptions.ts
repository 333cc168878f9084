/**
 * The `subscribe` parameter of `GET /v1/events` (PROTOCOL.md 8): at most 20 subscriptions, each a
 * class with the listing's query (through the one selection path, `parseSelection`) or one object.
 */
import * as v from 'valibot';
import { ApiError, clip } from '../http/errors.js';
import { parseJsonText } from '../http/json.js';
import { parsedBy, parseInput } from '../http/validate.js';
import { parseSelection } from '../objects/read/index.js';
import { CLASS_NAME } from '../objects/names.js';
import { compileWhere, followsReferences, isScalar } from '../storage/filter.js';
import type { Scalar } from '../storage/types.js';
import type { Subscription } from './types.js';

export const MAX_SUBSCRIPTIONS = 20;


const ClassSubscription = v.strictObject(
  {
    className: v.pipe(v.string('className must be a string'), v.regex(CLASS_NAME, 'className must match [A-Za-z][A-Za-z0-9_]{0,63}')),
    query: v.optional(
      v.union(
        [v.string(), v.record(v.string(), v.unknown())],
        'query must be the listing query: a JSON object of field conditions or query text',
      ),
    ),
  },
);
const ObjectSubscription = v.strictObject({
  objectId: v.pipe(v.string('objectId must be a string'), v.minLength(1, 'objectId must not be empty'), v.maxLength(128, 'objectId is longer than 128 characters')),
});

const SHAPE = `subscribe must be a JSON list of at most ${MAX_SUBSCRIPTIONS} subscriptions, each {"className", "query"?} or {"objectId"}`;

/** The `subscribe` query parameter of `GET /v1/events`: its JSON text parsed and checked by the dispatcher, as the route's input. */
export const SubscribeParam = v.pipe(
  v.string(`subscribe is required: ${SHAPE}`),
  v.description(`a JSON list of at most ${MAX_SUBSCRIPTIONS} subscriptions: {"className", "query"?} or {"objectId"}`),
  parsedBy(parseSubscriptions),
);

/** The subscriptions a `subscribe` text asks for; `400` naming the member at fault. */
function parseSubscriptions(text: string): Subscription[] {
  if (text.trim() === '') throw new ApiError('400', `subscribe is required: ${SHAPE}`);
  let list: unknown;
  try {
    list = parseJsonText(text, 'subscribe');
  } catch (error) {
    if (error instanceof ApiError && error.message.includes('deeper')) throw error;
    throw new ApiError('400', `subscribe is not JSON: ${SHAPE}`);
  }
  if (!Array.isArray(list) || list.length === 0) throw new ApiError('400', SHAPE);
  if (list.length > MAX_SUBSCRIPTIONS) throw new ApiError('400', `subscribe holds ${list.length} subscriptions; at most ${MAX_SUBSCRIPTIONS} are allowed`);
  return list.map((item, i) => subscription(item, `subscribe[${i}]`));
}

function subscription(item: unknown, where: string): Subscription {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new ApiError('400', `${where} must be {"className", "query"?} or {"objectId"}`);
  for (const name of Object.keys(item)) {
    if (!['className', 'query', 'objectId'].includes(name)) throw new ApiError('400', `${where} has unknown member ${clip(name)} (use className and query, or objectId)`);
  }
  if ('objectId' in item) {
    if ('className' in item || 'query' in item) throw new ApiError('400', `${where}: objectId stands alone (no className or query beside it)`);
    return { objectId: parseInput(ObjectSubscription, item, where).objectId };
  }
  if (!('className' in item)) throw new ApiError('400', `${where}.className is required (or objectId)`);
  const { className, query } = prefixed(where, () => parseInput(ClassSubscription, item, where));
  const selection = prefixed(`${where}.query`, () =>
    parseSelection(className, typeof query === 'string' ? { queryText: query } : { query: query === undefined ? undefined : JSON.stringify(query) }),
  );
  // an event is tested alone, so members that filter the selection as a whole cannot hold
  if (selection.macro || selection.folder) throw new ApiError('400', `${where}.query: query member ${selection.macro ? 'macro' : 'folderPath/folderType'} cannot be subscribed to`);
  // an event is tested alone, without the objects it references: a path would never match, so it is refused, never silently empty
  if (followsReferences(selection.where)) throw new ApiError('400', `${where}.query: reference paths (A.B = ...) cannot be subscribed to; subscribe to the class and filter on its own fields`);
  const equal = Object.entries(selection.where).find(([, condition]) => isScalar(condition));
  return { className, test: compileWhere(selection.where), equal: equal && { field: equal[0], key: valueKey(equal[1] as Scalar) } };
}

/** A scalar as an index key (its type kept: 1 and "1" differ). */
export function valueKey(value: Scalar): string {
  return value === null ? 'null' : `${typeof value}:${String(value)}`;
}

/** Runs `parse`, naming `where` in front of a `400`'s message. */
function prefixed<T>(where: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ApiError && error.code === '400') throw new ApiError('400', `${where}: ${error.message}`);
    throw error;
  }
}
