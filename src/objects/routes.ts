import * as v from 'valibot';
import type { ObjectsContext } from './context.js';
import type { JsonReply } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import { andThen, type MaybePromise } from '../maybe.js';
import type { ApiRequest } from '../http/request.js';
import { route, type Route } from '../http/router.js';
import { objectAnswer, selectPage, served, setAnswer } from './read/index.js';
import { READ, type ListingQuerySchema } from './read-contract.js';
import { classSelection, isClass, requireClass } from './known-classes.js';
import { bulkRoutes, createCheckRoutes, lockRoutes, recycleRoutes, writeRoutes } from './write/index.js';
import { classesRoutes } from './classes-routes.js';
import type { ObjectSetData, ServedData } from '../openapi/schemas.js';

type ListingQuery = v.InferOutput<typeof ListingQuerySchema>;

async function listing(ctx: ObjectsContext, request: ApiRequest, className: string, query: ListingQuery): Promise<JsonReply<ObjectSetData>> {
  const guard = ctx.guard(request);
  const selection = classSelection(ctx, className, query);
  const { objects, unfiltered } = await selectPage(ctx, request, guard, selection, true);
  await requireClass(ctx, className, unfiltered);
  return setAnswer(ctx, request, guard, objects, unfiltered, query.serialization);
}

/** `GET /v1/object/{segment}` where no object answers: the class's listing (6.2), or `404`. */
async function classOrMissing(ctx: ObjectsContext, request: ApiRequest, segment: string, query: ListingQuery): Promise<JsonReply<ObjectSetData>> {
  if (await isClass(ctx, segment)) return listing(ctx, request, segment, query);
  throw new ApiError('404', `no object or class ${segment}`);
}

/** The object reads by id and by class, with their literal types (contract.ts). */
export function objectReadRoutes(ctx: ObjectsContext) {
  return [
    route({
      ...READ.getObjectById,
      auth: 'objects',
      summary: 'An object by id; a class name with no object of that id lists the class',
      answer: 'the serialized object (~ClassName, ~ObjectID, ~StoreTime and its fields), or a listing as for /v1/objects/{className}',
      errors: ['403', '404'],
      // without a promise where the store has the object at hand (`getNow`) and the class rules decide
      handler: (request, { params: { id }, query }) => {
        const guard = ctx.guard(request);
        const stored = ctx.store.getNow ? ctx.store.getNow(id) : ctx.store.get(id);
        return andThen(
          andThen(stored, (object) => served(ctx, guard, object)),
          (object): MaybePromise<JsonReply<ServedData> | JsonReply<ObjectSetData>> => (object ? objectAnswer(ctx, request, guard, object, query.serialization) : classOrMissing(ctx, request, id, query)),
        );
      },
    }),
    route({
      ...READ.getObjectsByClassName,
      auth: 'objects',
      summary: 'The objects of a class, filtered, ordered and paged',
      answer: 'a set: ~Count, ~UnfilteredCount and ~Elements (the serialized objects); a class without objects is the empty set, a name that is no class 404',
      errors: ['403', '404'],
      handler: (request, { params, query }) => listing(ctx, request, params.className, query),
    }),
  ];
}

export function objectRoutes(ctx: ObjectsContext): Route[] {
  return [
    ...objectReadRoutes(ctx),
    ...classesRoutes(ctx),
    ...writeRoutes(ctx),
    ...createCheckRoutes(ctx),
    ...bulkRoutes(ctx),
    ...lockRoutes(ctx),
    ...recycleRoutes(ctx),
  ];
}
