import * as v from 'valibot';
import type { ServiceContext } from '../context.js';
import { okReply, type JsonReply } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import type { Route } from '../http/router.js';
import { parseQueryParams } from '../http/validate.js';
import { compileWhere } from '../storage/filter.js';
import type { FindQuery, StoredObject } from '../storage/types.js';
import type { Guard } from './access.js';
import type { ObjectSet } from './object-set.js';
import { parseOrderBy, parseQuery } from './query.js';
import { served, validName } from './served.js';
import { writeRoutes } from './write-routes.js';

export const DEFAULT_PER_PAGE = 50;
export const MAX_PER_PAGE = 1000;

function integerParam(name: string, max: number, description: string) {
  const message = `${name} must be an integer from 0 to ${max}`;
  return v.optional(v.pipe(v.string(), v.regex(/^\d{1,9}$/, message), v.description(description), v.transform(Number), v.maxValue(max, message)));
}

/** The query parameters of a listing (PROTOCOL.md 6.2). */
const ListingQuerySchema = v.object({
  page: integerParam('page', 1_000_000_000, 'the page, from 0'),
  perPage: integerParam('perPage', MAX_PER_PAGE, `objects per page, default ${DEFAULT_PER_PAGE}`),
  query: v.optional(v.pipe(v.string(), v.description('a filter: a JSON object whose members all must hold ($ne, $gt, $gte, $lt, $lte, $in, $prefix, $exists)'))),
  orderBy: v.optional(v.pipe(v.string(), v.description('a field name, - in front for descending'))),
  reverseOrder: v.optional(v.picklist(['true', 'false'], 'reverseOrder must be true or false')),
});

async function listing(ctx: ServiceContext, request: ApiRequest, className: string): Promise<JsonReply> {
  if (ctx.internalClasses.has(className)) throw new ApiError('404', `no class ${className}`);
  const guard = ctx.guard(request);
  const scope = await guard.scope('read', className);
  if (scope === 'none') throw new ApiError('403', `this session may not read ${className} objects`);
  const params = parseQueryParams(ListingQuerySchema, request.searchParams);
  const set: ObjectSet = {
    className,
    where: parseQuery(params.query ?? null),
    orderBy: parseOrderBy(params.orderBy ?? null),
    page: params.page ?? 0,
    perPage: params.perPage ?? DEFAULT_PER_PAGE,
    reverseOrder: params.reverseOrder === 'true',
    elements: [],
  };
  const hook = ctx.macros.hook('xApi_FindObjects');
  let unfiltered: number;
  if (hook) {
    const ok = await hook(ctx.macroContext(request), { objectSet: set });
    if (ok === false) throw new ApiError('500', `xApi_FindObjects could not list ${className}`);
    const elements = await readableOnly(guard, set.elements);
    unfiltered = (set.unfilteredCount ?? set.elements.length) - (set.elements.length - elements.length);
    set.elements = elements;
  } else {
    const query: FindQuery = { className, where: set.where, orderBy: set.orderBy, reverse: set.reverseOrder };
    const offset = set.page * set.perPage;
    if (scope === 'all' && !guard.narrowed) {
      const found = await ctx.store.find({ ...query, offset, limit: set.perPage });
      if (found.total === 0 && (await ctx.store.count(className)) === 0) throw new ApiError('404', `no class ${className}`);
      set.elements = found.objects;
      unfiltered = found.total;
    } else {
      // only readable objects are filtered and counted: the others never show, not even in counts
      const readable = scope === 'self' ? await ownObject(ctx, guard, query) : await readableMatches(ctx, guard, query);
      set.elements = readable.slice(offset, offset + set.perPage);
      unfiltered = readable.length;
    }
  }
  return okReply(await ctx.serializer.set(set.elements, unfiltered, guard));
}

async function readableOnly(guard: Guard, objects: StoredObject[]): Promise<StoredObject[]> {
  const answers = await Promise.all(objects.map((object) => guard.readable(object)));
  return objects.filter((_, i) => answers[i]);
}

/** A `self` listing: the session's own principal object, when it is of this class and matches. */
async function ownObject(ctx: ServiceContext, guard: Guard, query: FindQuery): Promise<StoredObject[]> {
  const own = guard.principalId === undefined ? undefined : await ctx.store.get(guard.principalId);
  if (!own || own.className !== query.className || !compileWhere(query.where)(own.fields)) return [];
  return readableOnly(guard, [own]);
}

const SCAN_PAGE = 1000;

/** Every match the host's `authorize` lets this session read, in order (it narrows per object, so all are asked). */
async function readableMatches(ctx: ServiceContext, guard: Guard, query: FindQuery): Promise<StoredObject[]> {
  const readable: StoredObject[] = [];
  for (let offset = 0; ; offset += SCAN_PAGE) {
    const { objects } = await ctx.store.find({ ...query, offset, limit: SCAN_PAGE });
    readable.push(...(await readableOnly(guard, objects)));
    if (objects.length < SCAN_PAGE) return readable;
  }
}

export function objectRoutes(ctx: ServiceContext): Route[] {
  return [
    {
      method: 'GET',
      path: '/v1/object/:id',
      auth: 'objects',
      summary: 'An object by id; a class name with no object of that id lists the class',
      query: ListingQuerySchema,
      answer: 'the serialized object (~ClassName, ~ObjectID, ~StoreTime and its fields), or a listing as for /v1/objects/{className}',
      handler: async (request) => {
        const id = validName(request.params.id!, 'object id');
        const guard = ctx.guard(request);
        const object = await served(ctx, guard, await ctx.store.get(id));
        if (object) return okReply(await ctx.serializer.object(object, guard));
        if (!ctx.internalClasses.has(id) && (await ctx.store.count(id)) > 0) return listing(ctx, request, id);
        throw new ApiError('404', `no object or class ${id}`);
      },
    },
    {
      method: 'GET',
      path: '/v1/objects/:className',
      auth: 'objects',
      summary: 'The objects of a class, filtered, ordered and paged',
      query: ListingQuerySchema,
      answer: 'a set: ~Count, ~UnfilteredCount and ~Elements (the serialized objects)',
      handler: (request) => listing(ctx, request, validName(request.params.className!, 'class name')),
    },
    ...writeRoutes(ctx),
  ];
}
