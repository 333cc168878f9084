/**
 * Locks and per-object security (PROTOCOL.md 6.7): `GET`/`POST`/`DELETE /v1/lock/object/{id}` and
 * `POST /v1/setObjectSecurity/{id}`. The locks themselves are `locks.ts` (the write path checks them);
 * the entries are an `_` field written through the one write path and read by the access rules.
 */
import * as v from 'valibot';
import type { WriteContext } from './context.js';
import { okReply } from '../../http/envelope.js';
import { ApiError, clip } from '../../http/errors.js';
import { route } from '../../http/router.js';
import type { Fields, FieldValue, StoredObject } from '../../storage/types.js';
import { SECURITY_FIELD, securityEntries, type SecurityEntry } from '../access.js';
import { currentLock, DEFAULT_LOCK_MINUTES, lockMessage, MAX_LOCK_MINUTES, releaseLock, takeLock } from './locks.js';
import { updateObject, type Writer, writerOf } from './write-path.js';
import { named } from './write-routes.js';
import { ObjectIdParams } from '../names.js';
import { Nothing } from '../../openapi/schemas.js';
import { internalFields } from '../names.js';

const LockBodySchema = v.optional(
  v.object({
    minutes: v.optional(
      v.pipe(
        v.number(`minutes must be a whole number from 1 to ${MAX_LOCK_MINUTES}`),
        v.integer(`minutes must be a whole number from 1 to ${MAX_LOCK_MINUTES}`),
        v.minValue(1, `minutes must be a whole number from 1 to ${MAX_LOCK_MINUTES}`),
        v.maxValue(MAX_LOCK_MINUTES, `minutes must be a whole number from 1 to ${MAX_LOCK_MINUTES}`),
        v.description(`how long the lock holds, default ${DEFAULT_LOCK_MINUTES}`),
      ),
    ),
  }),
);

const MAX_ENTRIES = 100;
const SecurityBodySchema = v.object({
  security: v.pipe(
    v.array(
      v.object({
        userObjectName: v.pipe(v.string(), v.minLength(1, 'userObjectName must name a user or group'), v.maxLength(128, 'userObjectName must have at most 128 characters')),
        rights: v.pipe(v.number(), v.integer('rights must be an integer from 0 to 31'), v.minValue(0, 'rights must be an integer from 0 to 31'), v.maxValue(31, 'rights must be an integer from 0 to 31')),
      }),
    ),
    v.maxLength(MAX_ENTRIES, `security holds at most ${MAX_ENTRIES} entries`),
    v.description('entries {userObjectName: a user or group name, rights: bits as ~SecurityRights (1 read, 2 write, 4 create, 8 delete, 16 change security)}'),
  ),
  replace: v.optional(v.pipe(v.boolean(), v.description('true: these entries replace all; otherwise merged per name ([] with replace removes them)'))),
});

const LockStatus = v.strictObject({ isLocked: v.pipe(v.boolean(), v.description('true only when another session holds the lock')), messages: v.array(v.string()) });
const LOCK_ANSWER = '{isLocked: true only when another session holds the lock, messages: ["locked by <user> since <time>"]}';

export function lockRoutes(ctx: WriteContext) {
  /** The object, `403` unless this session may update it. */
  const updatable = async (w: Writer, id: string): Promise<StoredObject> => {
    const object = await named(ctx, w.guard, id);
    if (!(await w.guard.may('update', object.className, object))) throw new ApiError('403', `this session may not update ${object.className} objects`);
    return object;
  };
  return [
    route({
      method: 'GET',
      path: '/v1/lock/object/:id',
      auth: 'objects',
      summary: 'Whether another session holds a lock on this object',
      examples: { answer: { isLocked: false, messages: [] } },
      params: ObjectIdParams('the object'),
      answer: LOCK_ANSWER,
      answerSchema: LockStatus,
      handler: async (request, { params: { id } }) => {
        const w = writerOf(ctx, request);
        const object = await named(ctx, w.guard, id);
        const held = await currentLock(ctx, object.id);
        return okReply({ isLocked: held !== undefined && held.lock.session !== request.session?.id, messages: held ? [lockMessage(held.lock)] : [] });
      },
    }),
    route({
      method: 'POST',
      path: '/v1/lock/object/:id',
      auth: 'objects',
      summary: "Takes or renews this session's lock on the object (423 when another session holds it)",
      examples: { answer: { isLocked: false, messages: ['locked by alice since 20261126T014329+00:00'] } },
      params: ObjectIdParams('the object'),
      body: LockBodySchema,
      answer: LOCK_ANSWER,
      answerSchema: LockStatus,
      errors: ['404', '423'],
      handler: async (request, { params: { id }, body }) => {
        const { minutes = DEFAULT_LOCK_MINUTES } = body ?? {};
        const w = writerOf(ctx, request);
        const object = await updatable(w, id);
        const lock = await takeLock(ctx, request.session!, object.id, minutes);
        return okReply({ isLocked: false, messages: [lockMessage(lock)] });
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/lock/object/:id',
      auth: 'objects',
      summary: "Releases this session's lock on the object",
      params: ObjectIdParams('the object'),
      answer: LOCK_ANSWER,
      answerSchema: LockStatus,
      errors: ['404', '423'],
      handler: async (request, { params: { id } }) => {
        const w = writerOf(ctx, request);
        const object = await updatable(w, id);
        await releaseLock(ctx, request.session!, object.id);
        return okReply({ isLocked: false, messages: [] });
      },
    }),
    route({
      method: 'POST',
      path: '/v1/setObjectSecurity/:id',
      auth: 'objects',
      summary: 'Sets per-object security entries: the object is then usable only by the users and groups listed, for their rights',
      params: ObjectIdParams('the object'),
      body: SecurityBodySchema,
      answer: 'nothing ({})',
      answerSchema: Nothing,
      handler: async (request, { params: { id }, body }) => {
        for (const [i, entry] of body.security.entries()) {
          if (!(await ctx.access.knownName(entry.userObjectName, ctx.principals.userClass))) {
            throw new ApiError('400', `security[${i}].userObjectName ${clip(entry.userObjectName)} names no user or group`);
          }
        }
        const w = writerOf(ctx, request);
        const internal = (before: StoredObject): Fields => {
          const entries = new Map<string, number>(body.replace ? [] : securityEntries(before).map((entry): [string, number] => [entry.name, entry.rights]));
          for (const entry of body.security) entries.set(entry.userObjectName, entry.rights);
          const kept = internalFields(before);
          delete kept[SECURITY_FIELD];
          if (entries.size === 0) return kept;
          const stored: SecurityEntry[] = [...entries].map(([name, rights]) => ({ name, rights }));
          return { ...kept, [SECURITY_FIELD]: stored as unknown as FieldValue };
        };
        await updateObject(w, () => named(ctx, w.guard, id), {}, undefined, { right: 'security', internal });
        return okReply({});
      },
    }),
  ];
}
