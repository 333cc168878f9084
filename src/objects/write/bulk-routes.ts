/**
 * Work on every object a query selects (PROTOCOL.md 6.3): `POST /v1/action/{className}` runs actions on
 * them, bulk `PATCH /v1/objects/{className}` changes members on all of them, all or nothing. The
 * selection is the listing's (`selection.ts`), the writes the one write path's.
 */
import type { WriteContext } from './context.js';
import { ApiError } from '../../http/errors.js';
import { route } from '../../http/router.js';
import { parseActions, runActions } from './actions.js';
import { parseSerialization, selectAll, selectPage, setAnswer } from '../read/index.js';
import { classSelection, requireClass } from '../known-classes.js';
import { updateObjects, writerOf } from './write-path.js';
import { bodyFields } from './writes.js';
import { BULK } from './write-contract.js';

/** The most objects one bulk `PATCH` changes. */
export const MAX_BULK_OBJECTS = 1000;


const BULK_ANSWER = parseSerialization({ type: 'empty' });

export function bulkRoutes(ctx: WriteContext) {
  return [
    route({
      ...BULK.postActionByClassName,
      auth: 'objects',
      summary: 'Runs actions on every object of a selection (a page of it); writes nothing else',
      answer: 'the selection as a set (as GET /v1/objects/{className} answers it)',
      errors: ['404', '423'],
      handler: async (request, { params: { className }, query: params }) => {
        const actions = parseActions(params.actions, ctx.writeOptions.actions);
        const w = writerOf(ctx, request, params.rightsControlKey);
        const selection = classSelection(ctx, className, { query: params.query, page: params.page, perPage: params.perPage });
        const { objects, unfiltered } = await selectPage(ctx, request, w.guard, selection);
        await requireClass(ctx, className, unfiltered);
        for (const object of objects) await runActions(w, actions, 'success', object, 'the actions before it stand');
        return setAnswer(ctx, request, w.guard, objects, unfiltered, params.serialization);
      },
    }),
    route({
      ...BULK.patchObjectsByClassName,
      auth: 'objects',
      summary: `Changes the given members on every object of a selection (at most ${MAX_BULK_OBJECTS}), all or nothing`,
      answer: 'the changed objects as a set',
      errors: ['404', '423'],
      handler: async (request, { params: { className }, query: { query, serialization, rightsControlKey }, body }) => {
        const w = writerOf(ctx, request, rightsControlKey);
        const selection = classSelection(ctx, className, { query });
        const changes = await bodyFields(body, ctx.store, w.guard, ctx.internalClasses);
        const select = async () => {
          const { objects, unfiltered } = await selectAll(ctx, request, w.guard, selection, MAX_BULK_OBJECTS);
          await requireClass(ctx, className, unfiltered);
          if (unfiltered > MAX_BULK_OBJECTS) {
            throw new ApiError('400', `the query selects ${unfiltered} objects; a bulk change works on at most ${MAX_BULK_OBJECTS}: narrow the query`);
          }
          return objects;
        };
        // the changed objects are answered as `empty` unless the request asks otherwise (PROTOCOL.md 6.3)
        const shape = serialization ?? BULK_ANSWER;
        const objects = await updateObjects(w, select, changes);
        return setAnswer(ctx, request, w.guard, objects, objects.length, shape);
      },
    }),
  ];
}
