/**
 * `POST /v1/object/{className}`, `PATCH` and `DELETE /v1/object/{objectId}` (PROTOCOL.md 6.3, 6.4).
 * Deleting an object of the file class deletes its bytes too (PROTOCOL.md 6.6).
 */
import * as v from 'valibot';
import type { ServiceContext } from '../context.js';
import { checkByteFields } from '../files/settings.js';
import { okReply, type JsonReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import { readJsonObject, type ApiRequest } from '../http/request.js';
import type { Route } from '../http/router.js';
import { StoreConflictError } from '../storage/errors.js';
import type { Fields, StoredObject } from '../storage/types.js';
import type { Guard } from './access.js';
import { served, validName } from './served.js';
import { bodyFields, CLASS_NAME, internalFields, parseStoreTime, retryOnConflict, withoutInternal, type WriteChange } from './writes.js';

/** The object to change: missing, internal or unreadable is `404`; readable but not writable is `403`. */
async function writable(ctx: ServiceContext, guard: Guard, request: ApiRequest, action: 'update' | 'delete'): Promise<StoredObject> {
  const id = validName(request.params.id!, 'object id');
  const object = await served(ctx, guard, await ctx.store.get(id));
  if (!object) throw new ApiError('404', `no object ${clip(id)}`);
  if (!(await guard.may(action, object.className, object))) throw new ApiError('403', `this session may not ${action} ${object.className} objects`);
  return object;
}

/** Runs `beforeWrite` (its fields replace the change's; `_` members never reach the store). */
export async function beforeWrite(ctx: ServiceContext, request: ApiRequest, change: WriteChange): Promise<Fields | undefined> {
  const hook = ctx.writeHooks.beforeWrite;
  if (hook) {
    const replaced = await hook(ctx.macroContext(request), change);
    if (replaced) change.fields = replaced;
  }
  return change.fields && withoutInternal(change.fields);
}

/** Runs `afterWrite` with what was stored and answers the object as the session may read it. */
export async function writtenAnswer(ctx: ServiceContext, request: ApiRequest, guard: Guard, change: WriteChange, object: StoredObject): Promise<JsonReply> {
  await ctx.writeHooks.afterWrite?.(ctx.macroContext(request), { action: change.action, className: change.className, before: change.before, object });
  return okReply(await ctx.serializer.object(object, guard));
}

/**
 * A create or update body as documented: a JSON object of fields. `readJsonObject` checks that it is
 * one (a valibot record would take an array and drop `__proto__` members), `bodyFields` each member.
 */
const ObjectBodySchema = v.pipe(
  v.record(v.string(), v.unknown()),
  v.description('the fields by name; a reference is {"~ObjectID": id}, a set of references {"~Elements": [...]}; ~ members are ignored, _ and $ members refused'),
);
const STORED_ANSWER = 'the stored object, serialized as GET /v1/object/{id} answers it';

export function writeRoutes(ctx: ServiceContext): Route[] {
  const fieldsOf = (request: ApiRequest, guard: Guard) => bodyFields(readJsonObject(request, 'object'), ctx.store, guard, ctx.internalClasses);
  return [
    {
      method: 'POST',
      path: '/v1/object/:className',
      auth: 'objects',
      summary: 'Creates an object of this class',
      body: ObjectBodySchema,
      answer: STORED_ANSWER,
      handler: async (request) => {
        const className = request.params.className!;
        if (!CLASS_NAME.test(className)) throw new ApiError('400', `class name ${clip(className)} must match [A-Za-z][A-Za-z0-9_]{0,63}`);
        if (ctx.internalClasses.has(className)) throw new ApiError('404', `no class ${className}`);
        const guard = ctx.guard(request);
        if ((await guard.scope('create', className)) !== 'all') throw new ApiError('403', `this session may not create ${className} objects`);
        const change: WriteChange = { action: 'create', className, fields: await fieldsOf(request, guard) };
        checkByteFields(ctx.files, className, change.fields!);
        if (!(await guard.may('create', className, undefined, change.fields))) throw new ApiError('403', `this session may not create ${className} objects`);
        const fields = (await beforeWrite(ctx, request, change))!;
        return writtenAnswer(ctx, request, guard, change, await ctx.store.put({ className, fields }));
      },
    },
    {
      method: 'PATCH',
      path: '/v1/object/:id',
      auth: 'objects',
      summary: 'Changes the fields given; with ~StoreTime only if the object is still that version (else 409)',
      body: v.pipe(ObjectBodySchema, v.description('the fields to change (null stores null); ~StoreTime: the version read')),
      answer: STORED_ANSWER,
      handler: async (request) => {
        const guard = ctx.guard(request);
        const body = readJsonObject(request, 'object');
        const expected = Object.hasOwn(body, '~StoreTime') ? parseStoreTime(body['~StoreTime']) : undefined;
        const changes = await fieldsOf(request, guard);
        // without ~StoreTime the change applies to the version read, retried when another write came first
        const write = async () => {
          const before = await writable(ctx, guard, request, 'update');
          if (expected !== undefined && before.storeTime !== expected) throw new StoreConflictError();
          checkByteFields(ctx.files, before.className, changes, before);
          const change: WriteChange = { action: 'update', className: before.className, before, fields: { ...withoutInternal(before.fields), ...changes } };
          if (!(await guard.may('update', before.className, before, change.fields))) throw new ApiError('403', `this session may not update this ${before.className} object`);
          const fields = { ...(await beforeWrite(ctx, request, change)), ...internalFields(before) };
          const object = await ctx.store.put({ id: before.id, className: before.className, fields, ifStoreTime: before.storeTime });
          return { change, object };
        };
        const { change, object } = expected === undefined ? await retryOnConflict(write) : await write();
        return writtenAnswer(ctx, request, guard, change, object);
      },
    },
    {
      method: 'DELETE',
      path: '/v1/object/:id',
      auth: 'objects',
      summary: 'Deletes an object (a body is ignored)',
      answer: 'nothing ({})',
      handler: async (request) => {
        const guard = ctx.guard(request);
        const before = await writable(ctx, guard, request, 'delete');
        const change: WriteChange = { action: 'delete', className: before.className, before };
        await beforeWrite(ctx, request, change);
        // a file's bytes go first: should the object's delete then fail, a retry finds it and nothing is
        // left behind; and again after it, should a replaceOID have put new bytes in between
        const isFile = before.className === ctx.files.className;
        if (isFile) await ctx.files.blobs.delete(before.id);
        await ctx.store.delete(before.id);
        if (isFile) await ctx.files.blobs.delete(before.id);
        await ctx.writeHooks.afterWrite?.(ctx.macroContext(request), { action: 'delete', className: before.className, before });
        return okReply({});
      },
    },
  ];
}
