/**
 * `POST /v1/object/{className}`, `PATCH` and `DELETE /v1/object/{objectId}` (PROTOCOL.md 6.3, 6.4):
 * the request read and the answer shaped here; the write itself is the one write path (`write-path.ts`).
 */
import * as v from 'valibot';
import type { ServiceContext } from '../context.js';
import { okReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import { readJsonObject, type ApiRequest } from '../http/request.js';
import type { Route } from '../http/router.js';
import type { StoredObject } from '../storage/types.js';
import type { Guard } from './access.js';
import { objectAnswer } from './answers.js';
import { served, validName } from './served.js';
import { createObject, deleteObject, updateObject, type Writer } from './write-path.js';
import { bodyFields, CLASS_NAME, parseStoreTime } from './writes.js';
import { Nothing, ServedObject } from '../openapi/schemas.js';

/** The object a route names: missing, internal or unreadable is `404` (its existence is not revealed). */
async function named(ctx: ServiceContext, guard: Guard, request: ApiRequest): Promise<StoredObject> {
  const id = validName(request.params.id!, 'object id');
  const object = await served(ctx, guard, await ctx.store.get(id));
  if (!object) throw new ApiError('404', `no object ${clip(id)}`);
  return object;
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
  const writer = (request: ApiRequest): Writer => ({ ctx, request, guard: ctx.guard(request) });
  return [
    {
      method: 'POST',
      // one template with GET, PATCH and DELETE /v1/object/:id (OpenAPI allows no second name for the segment)
      path: '/v1/object/:id',
      auth: 'objects',
      summary: 'Creates an object of this class',
      body: ObjectBodySchema,
      answer: STORED_ANSWER,
      answerSchema: ServedObject,
      params: { id: 'the class of the new object (for GET, PATCH and DELETE this segment is an object id)' },
      errors: ['403', '404'],
      handler: async (request) => {
        const className = request.params.id!;
        if (!CLASS_NAME.test(className)) throw new ApiError('400', `class name ${clip(className)} must match [A-Za-z][A-Za-z0-9_]{0,63}`);
        if (ctx.internalClasses.has(className)) throw new ApiError('404', `no class ${className}`);
        const w = writer(request);
        if ((await w.guard.scope('create', className)) !== 'all') throw new ApiError('403', `this session may not create ${className} objects`);
        return objectAnswer(ctx, request, w.guard, await createObject(w, className, await fieldsOf(request, w.guard)));
      },
    },
    {
      method: 'PATCH',
      path: '/v1/object/:id',
      auth: 'objects',
      summary: 'Changes the fields given; with ~StoreTime only if the object is still that version (else 409)',
      body: v.pipe(ObjectBodySchema, v.description('the fields to change (null stores null); ~StoreTime: the version read')),
      answer: STORED_ANSWER,
      answerSchema: ServedObject,
      errors: ['403', '404', '409'],
      handler: async (request) => {
        const w = writer(request);
        const body = readJsonObject(request, 'object');
        const expected = Object.hasOwn(body, '~StoreTime') ? parseStoreTime(body['~StoreTime']) : undefined;
        const changes = await fieldsOf(request, w.guard);
        return objectAnswer(ctx, request, w.guard, await updateObject(w, () => named(ctx, w.guard, request), changes, expected));
      },
    },
    {
      method: 'DELETE',
      path: '/v1/object/:id',
      auth: 'objects',
      summary: 'Deletes an object (a body is ignored)',
      answer: 'nothing ({})',
      answerSchema: Nothing,
      errors: ['403', '404'],
      handler: async (request) => {
        const w = writer(request);
        await deleteObject(w, await named(ctx, w.guard, request));
        return okReply({});
      },
    },
  ];
}
