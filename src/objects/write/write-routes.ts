/**
 * `POST /v1/object/{className}`, `PATCH` and `DELETE /v1/object/{objectId}` (PROTOCOL.md 6.3, 6.4):
 * the request read and the answer shaped here; the write itself is the one write path (`write-path.ts`).
 */
import type { WriteContext } from './context.js';
import { okReply } from '../../http/envelope.js';
import { ApiError, clip } from '../../http/errors.js';
import { route } from '../../http/router.js';
import type { StoredObject } from '../../storage/types.js';
import type { Guard } from '../access.js';
import { checkMacros, objectAnswer, served } from '../read/index.js';
import { parseActions, runActions } from './actions.js';
import { createObject, deleteObject, updateObject, type Writer, writerOf } from './write-path.js';
import { bodyFields, parseStoreTime, type WriteAction } from './writes.js';
import { WRITE } from './write-contract.js';

/** The object a route names: missing, internal or unreadable is `404` (its existence is not revealed). */
export async function named(ctx: WriteContext, guard: Guard, id: string): Promise<StoredObject> {
  const object = await served(ctx, guard, await ctx.store.get(id));
  if (!object) throw new ApiError('404', `no object ${clip(id)}`);
  return object;
}

const STORED_ANSWER = 'the stored object, serialized as GET /v1/object/{id} answers it';


/** Runs a write with its actions: those due after a failure when it fails (its error stays the answer), the others after it. */
async function withActions(w: Writer, actions: readonly WriteAction[], write: () => Promise<StoredObject>): Promise<StoredObject> {
  let object: StoredObject;
  try {
    object = await write();
  } catch (error) {
    if (actions.length > 0) await runActions(w, actions, 'error', undefined).catch(() => undefined);
    throw error;
  }
  await runActions(w, actions, 'success', object);
  return object;
}

export function writeRoutes(ctx: WriteContext) {
  const fieldsOf = (body: Record<string, unknown>, guard: Guard) => bodyFields(body, ctx.store, guard, ctx.internalClasses);
  return [
    route({
      ...WRITE.postObjectById,
      // one template with GET, PATCH and DELETE /v1/object/:id (OpenAPI allows no second name for the segment)
      auth: 'objects',
      summary: 'Creates an object of this class',
      examples: { body: { Name: 'Nora Berg', Number: 301, City: 'Kiel', Active: true, AccountManager: { '~ObjectID': 'EMP00001' } }, answer: { '~ClassName': 'Customer', '~ObjectID': '45YTYRPB', '~StoreTime': '20261123T163837+00:00', Name: 'Nora Berg', Number: 301, City: 'Kiel', Active: true, AccountManager: { '~ClassName': 'Employee', '~ObjectID': 'EMP00001', '~StoreTime': '20261123T163830+00:00', Name1: 'Alice', Name2: 'Schmidt', Name3: 'Head of sales', Bild: { '~ClassName': 'Bild', '~ObjectID': 'IMG00001', '~StoreTime': '20261123T163830+00:00' }, Mitarbeiteransprechpartner: { '~ClassName': 'ContactPerson', '~ObjectID': 'CON00001', '~StoreTime': '20261123T163830+00:00', Name: 'carol', Name1: 'Carol', Name2: 'Meyer', Name3: 'Front office', Bild: { '~ClassName': 'Bild', '~ObjectID': 'IMG00003', '~StoreTime': '20261125T225642+00:00' } } } } },
      answer: STORED_ANSWER,
      errors: ['403', '404'],
      handler: async (request, { params: { id: className }, query: params, body }) => {
        if (params.serialization) checkMacros(ctx, params.serialization);
        if (ctx.internalClasses.has(className)) throw new ApiError('404', `no class ${className}`);
        const actions = parseActions(params.actions, ctx.writeOptions.actions);
        const w = writerOf(ctx, request, params.rightsControlKey);
        if ((await w.guard.scope('create', className)) !== 'all') throw new ApiError('403', `this session may not create ${className} objects`);
        const fields = await fieldsOf(body, w.guard);
        return objectAnswer(ctx, request, w.guard, await withActions(w, actions, () => createObject(w, className, fields)), params.serialization);
      },
    }),
    route({
      ...WRITE.patchObjectById,
      auth: 'objects',
      summary: 'Changes the fields given; with ~StoreTime only if the object is still that version (else 409)',
      examples: { body: { Revenue: null, Note: 'called back' }, answer: { '~ClassName': 'Customer', '~ObjectID': 'CUS00001', '~StoreTime': '20261123T163837+00:00', Name: 'Ben Bauer', Number: 1, City: 'Hamburg', Active: true, Revenue: null, AccountManager: { '~ClassName': 'Employee', '~ObjectID': 'EMP00001', '~StoreTime': '20261123T163830+00:00', Name1: 'Alice', Name2: 'Schmidt', Name3: 'Head of sales', Bild: { '~ClassName': 'Bild', '~ObjectID': 'IMG00001', '~StoreTime': '20261123T163830+00:00' }, Mitarbeiteransprechpartner: { '~ClassName': 'ContactPerson', '~ObjectID': 'CON00001', '~StoreTime': '20261123T163830+00:00', Name: 'carol', Name1: 'Carol', Name2: 'Meyer', Name3: 'Front office', Bild: { '~ClassName': 'Bild', '~ObjectID': 'IMG00003', '~StoreTime': '20261125T225642+00:00' } } }, Note: 'called back' } },
      answer: STORED_ANSWER,
      errors: ['403', '404', '409', '423'],
      handler: async (request, { params: { id }, query: params, body }) => {
        if (params.serialization) checkMacros(ctx, params.serialization);
        const actions = parseActions(params.actions, ctx.writeOptions.actions);
        const w = writerOf(ctx, request, params.rightsControlKey);
        const expected = Object.hasOwn(body, '~StoreTime') ? parseStoreTime(body['~StoreTime']) : undefined;
        const changes = await fieldsOf(body, w.guard);
        const replace = params.storeMode === '10';
        return objectAnswer(ctx, request, w.guard, await withActions(w, actions, () => updateObject(w, () => named(ctx, w.guard, id), changes, expected, { replace })), params.serialization);
      },
    }),
    route({
      ...WRITE.deleteObjectById,
      auth: 'objects',
      summary: 'Deletes an object, or moves it to the recycle bin (a body is ignored)',
      answer: 'nothing ({})',
      errors: ['403', '404', '423'],
      handler: async (request, { params: { id }, query: { moveToRecycler, rightsControlKey } }) => {
        const recycle = moveToRecycler === undefined ? ctx.writeOptions.deleteMode === 'recycle' : moveToRecycler === 'true';
        const w = writerOf(ctx, request, rightsControlKey);
        await deleteObject(w, await named(ctx, w.guard, id), { recycle });
        return okReply({});
      },
    }),
  ];
}
