import type { ServiceContext } from '../context.js';
import { okReply, type JsonReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import type { Route } from '../http/router.js';
import type { StoredObject } from '../storage/types.js';
import type { ObjectSet } from './object-set.js';
import { parseOrderBy, parseQuery } from './query.js';

export const DEFAULT_PER_PAGE = 50;
export const MAX_PER_PAGE = 1000;

function integerParam(request: ApiRequest, name: string, fallback: number, max: number): number {
  const raw = request.searchParams.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) > max) throw new ApiError('400', `${name} must be an integer from 0 to ${max}`);
  return Number(raw);
}

function booleanParam(request: ApiRequest, name: string): boolean {
  const raw = request.searchParams.get(name);
  if (raw === null || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new ApiError('400', `${name} must be true or false`);
}

async function listing(ctx: ServiceContext, request: ApiRequest, className: string): Promise<JsonReply> {
  if (ctx.internalClasses.has(className)) throw new ApiError('404', `no class ${className}`);
  const set: ObjectSet = {
    className,
    where: parseQuery(request.searchParams.get('query')),
    orderBy: parseOrderBy(request.searchParams.get('orderBy')),
    page: integerParam(request, 'page', 0, 1_000_000_000),
    perPage: integerParam(request, 'perPage', DEFAULT_PER_PAGE, MAX_PER_PAGE),
    reverseOrder: booleanParam(request, 'reverseOrder'),
    elements: [],
  };
  const hook = ctx.macros.hook('xApi_FindObjects');
  let unfiltered: number;
  if (hook) {
    const ok = await hook(ctx.macroContext(request), { objectSet: set });
    if (ok === false) throw new ApiError('500', `xApi_FindObjects could not list ${className}`);
    unfiltered = set.unfilteredCount ?? set.elements.length;
  } else {
    const found = await ctx.store.find({
      className,
      where: set.where,
      orderBy: set.orderBy,
      offset: set.page * set.perPage,
      limit: set.perPage,
      reverse: set.reverseOrder,
    });
    if (found.total === 0 && (await ctx.store.count(className)) === 0) throw new ApiError('404', `no class ${className}`);
    set.elements = found.objects;
    unfiltered = found.total;
  }
  return okReply(await ctx.serializer.set(set.elements, unfiltered));
}

function validName(value: string, what: string): string {
  if (value.length > 128) throw new ApiError('400', `${what} is longer than 128 characters`);
  return value;
}

/** Objects of internal classes are answered exactly like missing ones. */
function served(ctx: ServiceContext, object: StoredObject | undefined): StoredObject | undefined {
  return object && !ctx.internalClasses.has(object.className) ? object : undefined;
}

export function objectRoutes(ctx: ServiceContext): Route[] {
  return [
    {
      method: 'GET',
      path: '/v1/object/:id',
      auth: 'objects',
      handler: async (request) => {
        const id = validName(request.params.id!, 'object id');
        const object = served(ctx, await ctx.store.get(id));
        if (object) return okReply(await ctx.serializer.object(object));
        if (!ctx.internalClasses.has(id) && (await ctx.store.count(id)) > 0) return listing(ctx, request, id);
        throw new ApiError('404', `no object or class ${id}`);
      },
    },
    {
      method: 'GET',
      path: '/v1/objects/:className',
      auth: 'objects',
      handler: (request) => listing(ctx, request, validName(request.params.className!, 'class name')),
    },
  ];
}
