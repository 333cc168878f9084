/**
 * What the studio reads (PROTOCOL.md 6.11), served to any client: `GET /v1/classes` (the classes the
 * session may read, with how many objects it may read of each) and `GET /v1/object/{id}/referencedBy`
 * (the objects that reference one). Both stand on the one selection path and guard of the listings:
 * no access check of their own.
 */
import * as v from 'valibot';
import type { ObjectsContext } from './context.js';
import { okReply } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { route } from '../http/router.js';
import { DEFAULT_PER_PAGE, selectPage, served, setAnswer } from './read/index.js';
import type { Guard } from './access.js';
import { CLASS_NAME } from './names.js';
import { SECURITY_FIELD } from './access.js';
import { classCountsOf, referencingOf } from '../storage/optional.js';
import type { ClassCount, StoredObject } from '../storage/types.js';
import { ClassSummaries } from '../openapi/schemas.js';
import { REFERENCED_BY } from '../openapi/examples.js';
import { CLASSES } from './read-contract.js';

/**
 * A class whose objects must be asked one by one (the host's `authorize`, per-object security) is
 * counted that way up to this many objects; a larger one answers the stored count as an estimate
 * (`CountEstimated`), never reading the class row by row.
 */
export const COUNT_BOUND = 10_000;

/** Objects asked per round when the referencing objects must be asked one by one. */
const SCAN_PAGE = 1000;

/** One entry of `GET /v1/classes`, as its answer schema declares it. */
export type ClassSummary = v.InferOutput<typeof ClassSummaries>['~Elements'][number];


/** The classes a session could read: declared, named in the rules, or holding objects (internal ones never): `isClass` of known-classes.ts, for all at once. */
function classNames(ctx: ObjectsContext, counts: readonly ClassCount[]): string[] {
  const names = new Set([...ctx.schema.classNames, ...ctx.access.namedClasses(), ...counts.map((entry) => entry.className)]);
  return [...names].filter((name) => CLASS_NAME.test(name) && !ctx.internalClasses.has(name)).sort();
}

/**
 * How many objects of `className` the session may read: the listing's `~UnfilteredCount` without a
 * query (the one selection path answers it), or the stored count where the class rule alone decides.
 */
async function countOf(ctx: ObjectsContext, request: ApiRequest, guard: Guard, className: string, stored: ClassCount | undefined): Promise<Pick<ClassSummary, 'Count' | 'CountEstimated'>> {
  const count = stored?.count ?? 0;
  const scope = await guard.scope('read', className);
  const hooked = ctx.macros.hook('xApi_FindObjects') !== undefined;
  if (scope === 'all' && !hooked && (count === 0 || !(await guard.narrowedIn(className)))) {
    return stored?.estimated ? { Count: count, CountEstimated: true } : { Count: count };
  }
  if (scope === 'all' && !hooked && (stored?.estimated || count > COUNT_BOUND)) return { Count: count, CountEstimated: true };
  const { unfiltered } = await selectPage(ctx, request, guard, { className, where: {}, orderBy: undefined, reverseOrder: false, page: 0, perPage: 0 });
  return { Count: unfiltered };
}

/** `GET /v1/classes` (PROTOCOL.md 6.11): by name, only classes the session may read. */
async function classSummaries(ctx: ObjectsContext, request: ApiRequest): Promise<ClassSummary[]> {
  const guard = ctx.guard(request);
  const counts = await classCountsOf(ctx.store, [...ctx.schema.classNames, ...ctx.access.namedClasses()]);
  const byName = new Map(counts.map((entry) => [entry.className, entry]));
  const names = classNames(ctx, counts);
  const readable = await Promise.all(names.map(async (name) => (await guard.scope('read', name)) !== 'none'));
  return Promise.all(
    names.filter((_, i) => readable[i]).map(async (name) => ({ Name: name, Declared: ctx.schema.isDeclared(name), ...(await countOf(ctx, request, guard, name, byName.get(name))) })),
  );
}

/**
 * A page of the objects referencing `id` that the session may read, and how many there are. Where the
 * class rules alone decide (no `authorize`, no per-object security among them), the store answers the
 * page with the reach of the rules as its filter (`Guard.pathReach`); otherwise every referencing
 * object is asked, as a listing asks the objects of a narrowed class.
 */
async function referencedBy(ctx: ObjectsContext, guard: Guard, id: string, offset: number, limit: number): Promise<{ objects: StoredObject[]; unfiltered: number }> {
  const known = [...ctx.schema.classNames, ...ctx.access.namedClasses()];
  const reach = await guard.pathReach(ctx.internalClasses);
  if (reach) {
    const [page, secured] = await Promise.all([
      referencingOf(ctx.store, id, { where: reach, offset, limit }, known),
      referencingOf(ctx.store, id, { where: { [SECURITY_FIELD]: { $exists: true } }, limit: 0 }, known),
    ]);
    if (secured.total === 0) return { objects: page.objects, unfiltered: page.total };
  }
  const readable: StoredObject[] = [];
  // a store without `referencing` reads every class on each call: one call then gives them all (not one scan per page)
  const step = ctx.store.referencing ? SCAN_PAGE : Number.POSITIVE_INFINITY;
  for (let from = 0; ; from += step) {
    const { objects } = await referencingOf(ctx.store, id, ctx.store.referencing ? { offset: from, limit: SCAN_PAGE } : {}, known);
    const shown = await Promise.all(objects.map((object) => served(ctx, guard, object)));
    for (const object of shown) if (object) readable.push(object);
    if (objects.length < step) break;
  }
  return { objects: readable.slice(offset, offset + limit), unfiltered: readable.length };
}

export function classesRoutes(ctx: ObjectsContext) {
  return [
    route({
      ...CLASSES.getClasses,
      auth: 'objects',
      summary: 'The classes the session may read (declared, named in the access rules, or holding objects), each with how many of its objects the session may read',
      answer: 'a set (~Count, ~UnfilteredCount, ~Elements) of {Name, Declared, Count, CountEstimated?}, by name',
      handler: async (request) => {
        const classes = await classSummaries(ctx, request);
        return okReply({ '~Count': classes.length, '~UnfilteredCount': classes.length, '~Elements': classes });
      },
    }),
    route({
      ...CLASSES.getObjectByIdReferencedBy,
      auth: 'objects',
      summary: 'The objects that hold a reference or a set element to an object, across classes, as the session may read them',
      answer: 'a set: ~Count, ~UnfilteredCount and ~Elements (the referencing objects, by class name, then creation order)',
      examples: { answer: REFERENCED_BY },
      errors: ['404'],
      handler: async (request, { params: { id }, query: { page = 0, perPage = DEFAULT_PER_PAGE, serialization } }) => {
        const guard = ctx.guard(request);
        // an object the session may not read is answered as a missing one (6.4)
        if (!(await served(ctx, guard, await ctx.store.get(id)))) throw new ApiError('404', `no object ${id}`);
        const { objects, unfiltered } = await referencedBy(ctx, guard, id, page * perPage, perPage);
        return setAnswer(ctx, request, guard, objects, unfiltered, serialization);
      },
    }),
  ];
}
