/**
 * `POST /v2/objectdata/byQuery`, `byid` and `byParentObject` (PROTOCOL.md 6.9): each item is read with
 * the v1 machinery (the one selection path, the access rules, `answers.ts`), and the answer is the list
 * of the items' sets in item order.
 */
import * as v from 'valibot';
import type { ObjectsContext } from '../objects/context.js';
import { JSON_TYPE, JsonReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import type { Guard } from '../objects/access.js';
import { MAX_PER_PAGE, orderByOfText, parseSerialization, type SelectionParams, selectPage, type Serialization, serializedSet, served } from '../objects/read/index.js';
import { checkFieldName } from '../query/index.js';
import { checkClassName } from '../objects/names.js';
import { classSelection, requireClass } from '../objects/known-classes.js';
import type { StoredObject } from '../storage/types.js';
import { flag, passed, text } from './items.js';

/** Most ids in one `byid` item (as the query object's `oids`). */
export const MAX_IDS = 1000;

const page = v.pipe(v.number('must be a whole number from 0'), v.integer('must be a whole number from 0'), v.minValue(0, 'must be a whole number from 0'));
const perPage = v.pipe(v.number(`must be a whole number from 1 to ${MAX_PER_PAGE}`), v.integer(`must be a whole number from 1 to ${MAX_PER_PAGE}`), v.minValue(1, `must be a whole number from 1 to ${MAX_PER_PAGE}`), v.maxValue(MAX_PER_PAGE, `must be a whole number from 1 to ${MAX_PER_PAGE}`));
const serialization = v.record(v.string(), v.unknown(), 'must be a JSON object (6.1)');

/** What narrows a selection, shared by `byQuery` and `byParentObject`. */
const selecting = {
  // query text as 6.9 gives it, or the query object of a v1 listing (6.2: oids, sortIndex, macro, folderPath, ...)
  query: v.optional(v.union([v.string(), v.record(v.string(), v.unknown())], 'must be query text, e.g. "Name=Test", or a query object')),
  order: v.optional(v.string('must be text such as "Name ASC"')),
  page: v.optional(page),
  perPage: v.optional(perPage),
  seFulltext: v.optional(text),
  seFulltextStem: v.optional(flag),
  seTextContent: v.optional(text),
  seTextContentStem: v.optional(flag),
  serialization: v.optional(serialization),
  type: v.optional(passed),
  context: v.optional(passed),
};

export const ByQueryItem = v.strictObject({ className: text, ...selecting });
export const ByIdItem = v.strictObject({
  className: v.optional(text),
  classId: v.optional(v.union([v.pipe(v.number(), v.integer()), v.pipe(v.string(), v.regex(/^\d{1,10}$/))], 'must be a whole number')),
  ids: v.array(v.union([v.string(), v.number()], 'must be strings or numbers'), 'must be a list of object ids'),
  serialization: v.optional(serialization),
  type: v.optional(passed),
  context: v.optional(passed),
});
export const ByParentItem = v.strictObject({ parentOID: v.union([text, v.number()], 'must be an object id'), member: text, idList: v.optional(flag), ...selecting });

type Selecting = v.InferOutput<v.ObjectSchema<typeof selecting, undefined>>;

/** An item's `serialization` (6.1), checked as the query parameter is; `400` naming the item. */
export function itemSerialization(item: { serialization?: unknown }, where: string): Serialization | undefined {
  if (item.serialization === undefined) return undefined;
  try {
    return parseSerialization(item.serialization);
  } catch (error) {
    if (error instanceof ApiError) throw new ApiError(error.code, `${where}: ${error.message}`);
    throw error;
  }
}

/** A set's `data` as `answers.ts` gives it, shaped by the item's `serialization`. */
async function setData(ctx: ObjectsContext, request: ApiRequest, guard: Guard, objects: StoredObject[], unfiltered: number, item: { serialization?: unknown }, where: string): Promise<string> {
  return JSON.stringify(await serializedSet(ctx, request, guard, objects, unfiltered, itemSerialization(item, where)));
}

/** The answer: every item's set, in item order, in one envelope. */
export function listReply(parts: string[]): JsonReply {
  return new JsonReply(`{"status":{"internalStatus":"0","statusMessage":"ok"},"data":[${parts.join(',')}]}`, 200, { 'content-type': JSON_TYPE }, '0');
}

/** The selection parameters of an item, as the listing takes them. */
function selectionOf(item: Selecting, where: string): SelectionParams {
  const words = [item.seFulltext, item.seTextContent].filter((text) => text !== undefined && text.trim() !== '').join(' ');
  const params: SelectionParams = { orderBy: orderByOfText(item.order, `${where}: order`), page: item.page, perPage: item.perPage };
  if (typeof item.query === 'object') params.query = JSON.stringify(item.query);
  else if (item.query !== undefined && item.query.trim() !== '') params.queryText = item.query;
  if (words !== '') params.fullText = words;
  return params;
}

export async function byQuery(ctx: ObjectsContext, request: ApiRequest, guard: Guard, item: v.InferOutput<typeof ByQueryItem>, where: string): Promise<string> {
  const className = checkClassName(item.className, `${where}: className`);
  const selection = classSelection(ctx, className, selectionOf(item, where));
  const { objects, unfiltered } = await selectPage(ctx, request, guard, selection);
  await requireClass(ctx, className, unfiltered, `${where}: `);
  return setData(ctx, request, guard, objects, unfiltered, item, where);
}

export async function byId(ctx: ObjectsContext, request: ApiRequest, guard: Guard, item: v.InferOutput<typeof ByIdItem>, where: string): Promise<string> {
  if ((item.className === undefined) === (item.classId === undefined)) throw new ApiError('400', `${where}: give either className or classId`);
  let className: string;
  if (item.className !== undefined) className = checkClassName(item.className, `${where}: className`);
  else {
    const named = ctx.schema.classNamed(Number(item.classId));
    if (named === undefined) throw new ApiError('404', `${where}: no declared class has classId ${item.classId}`);
    className = named;
  }
  if (item.ids.length > MAX_IDS) throw new ApiError('400', `${where}: ids may hold at most ${MAX_IDS} ids, not ${item.ids.length}`);
  if (ctx.internalClasses.has(className)) throw new ApiError('404', `no class ${className}`);
  if ((await guard.scope('read', className)) === 'none') throw new ApiError('403', `this session may not read ${className} objects`);
  const ids = [...new Set(item.ids.map(String))].filter((id) => id !== '' && id.length <= 128);
  const found = new Map((await ctx.store.getMany(ids)).map((object) => [object.id, object]));
  const objects = await readable(ctx, guard, ids.map((id) => found.get(id)).filter((object) => object?.className === className));
  await requireClass(ctx, className, objects.length, `${where}: `);
  return setData(ctx, request, guard, objects, objects.length, item, where);
}

export async function byParentObject(ctx: ObjectsContext, request: ApiRequest, guard: Guard, item: v.InferOutput<typeof ByParentItem>, where: string): Promise<string> {
  const parentId = String(item.parentOID);
  const parent = parentId.length <= 128 ? await served(ctx, guard, await ctx.store.get(parentId)) : undefined;
  if (!parent) throw new ApiError('404', `${where}: no object ${clip(parentId)}`);
  checkFieldName(item.member, `${where}: member`);
  const value = parent.fields[item.member] as { $ref?: string; $set?: string[] } | null | undefined;
  const isLink = typeof value === 'object' && value !== null && (typeof value.$ref === 'string' || Array.isArray(value.$set));
  if (value !== undefined && value !== null && !isLink) throw new ApiError('400', `${where}: member ${clip(item.member)} of ${parentId} is not a reference or set field`);
  const ids = value?.$set ?? (value?.$ref === undefined ? [] : [value.$ref]);
  const found = new Map((await ctx.store.getMany(ids)).map((object) => [object.id, object]));
  const children = await readable(ctx, guard, ids.map((id) => found.get(id)));
  const params = selectionOf(item, where);
  let objects: StoredObject[];
  let unfiltered: number;
  if (params.query === undefined && params.queryText === undefined && params.fullText === undefined && params.orderBy === undefined) {
    const first = (item.page ?? 0) * (item.perPage ?? 50);
    [objects, unfiltered] = [children.slice(first, first + (item.perPage ?? 50)), children.length];
  } else if (children.length === 0) {
    [objects, unfiltered] = [[], 0];
  } else {
    // the children's own selection: the same query text, word search and order as any listing
    const classes = new Set(children.map((child) => child.className));
    if (classes.size > 1) throw new ApiError('400', `${where}: member ${clip(item.member)} holds objects of several classes (${[...classes].join(', ')}); query, order and seFulltext need one`);
    const selection = classSelection(ctx, [...classes][0]!, { ...params, oids: children.map((child) => child.id) });
    ({ objects, unfiltered } = await selectPage(ctx, request, guard, selection));
  }
  if (item.idList) return JSON.stringify({ '~Count': objects.length, '~UnfilteredCount': unfiltered, '~Elements': objects.map((object) => ({ '~ObjectID': object.id })) });
  return setData(ctx, request, guard, objects, unfiltered, item, where);
}

/** The objects the session may read, in order (missing, internal and unreadable ones left out). */
async function readable(ctx: ObjectsContext, guard: Guard, objects: Array<StoredObject | undefined>): Promise<StoredObject[]> {
  const answers = await Promise.all(objects.map((object) => served(ctx, guard, object)));
  return answers.filter((object): object is StoredObject => object !== undefined);
}
