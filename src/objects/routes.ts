import * as v from 'valibot';
import type { ObjectsContext } from './context.js';
import type { JsonReply } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import { andThen, type MaybePromise } from '../maybe.js';
import type { ApiRequest } from '../http/request.js';
import { route, type Route } from '../http/router.js';
import { integerParam } from '../http/validate.js';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE, objectAnswer, selectPage, SERIALIZATION_PARAM, served, setAnswer } from './read/index.js';
import { ClassNameParams, ObjectIdParams } from './names.js';
import { classSelection, isClass, requireClass } from './known-classes.js';
import { bulkRoutes, createCheckRoutes, lockRoutes, recycleRoutes, writeRoutes } from './write/index.js';
import { classesRoutes } from './classes-routes.js';
import { ObjectSet, ServedObject, type ObjectSetData, type ServedData } from '../openapi/schemas.js';

/** The query parameters of a listing (PROTOCOL.md 6.2). */
const ListingQuerySchema = v.object({
  page: integerParam('page', 1_000_000_000, 'the page, from 0'),
  perPage: integerParam('perPage', MAX_PER_PAGE, `objects per page, default ${DEFAULT_PER_PAGE}`),
  query: v.optional(v.pipe(v.string(), v.description('a filter: a JSON object whose members all must hold: field conditions ($ne, $gt, $gte, $lt, $lte, $in, $prefix, $exists) and the query object members queryString, oids, sortIndex, macro, macroLevel, folderPath, folderType'))),
  orderBy: v.optional(v.pipe(v.string(), v.description('a field name, - in front for descending'))),
  reverseOrder: v.optional(v.picklist(['true', 'false'], 'reverseOrder must be true or false')),
  ...SERIALIZATION_PARAM,
});

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
      method: 'GET',
      path: '/v1/object/:id',
      auth: 'objects',
      summary: 'An object by id; a class name with no object of that id lists the class',
      query: ListingQuerySchema,
      answer: 'the serialized object (~ClassName, ~ObjectID, ~StoreTime and its fields), or a listing as for /v1/objects/{className}',
      answerSchema: v.union([ServedObject, ObjectSet]),
      params: ObjectIdParams('an object id, or a class name with no object of that id (lists the class)'),
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
      method: 'GET',
      path: '/v1/objects/:className',
      auth: 'objects',
      summary: 'The objects of a class, filtered, ordered and paged',
      params: ClassNameParams,
      query: ListingQuerySchema,
      answer: 'a set: ~Count, ~UnfilteredCount and ~Elements (the serialized objects); a class without objects is the empty set, a name that is no class 404',
      answerSchema: ObjectSet,
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
