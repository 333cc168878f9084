/**
 * Locks and per-object security (PROTOCOL.md 6.7): `GET`/`POST`/`DELETE /v1/lock/object/{id}` and
 * `POST /v1/setObjectSecurity/{id}`. The locks themselves are `locks.ts` (the write path checks them);
 * the entries are an `_` field written through the one write path and read by the access rules.
 */
import type { WriteContext } from './context.js';
import { okReply } from '../../http/envelope.js';
import { ApiError, clip } from '../../http/errors.js';
import { route } from '../../http/router.js';
import type { Fields, FieldValue, StoredObject } from '../../storage/types.js';
import { SECURITY_FIELD, securityEntries, type SecurityEntry } from '../access.js';
import { currentLock, DEFAULT_LOCK_MINUTES, lockMessage, releaseLock, takeLock } from './locks.js';
import { updateObject, type Writer, writerOf } from './write-path.js';
import { named } from './write-routes.js';
import { internalFields } from '../names.js';
import { LOCK } from './write-contract.js';


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
      ...LOCK.getLockObjectById,
      auth: 'objects',
      summary: 'Whether another session holds a lock on this object',
      examples: { answer: { isLocked: false, messages: [] } },
      answer: LOCK_ANSWER,
      handler: async (request, { params: { id } }) => {
        const w = writerOf(ctx, request);
        const object = await named(ctx, w.guard, id);
        const held = await currentLock(ctx, object.id);
        return okReply({ isLocked: held !== undefined && held.lock.session !== request.session?.id, messages: held ? [lockMessage(held.lock)] : [] });
      },
    }),
    route({
      ...LOCK.postLockObjectById,
      auth: 'objects',
      summary: "Takes or renews this session's lock on the object (423 when another session holds it)",
      examples: { answer: { isLocked: false, messages: ['locked by alice since 20261126T014329+00:00'] } },
      answer: LOCK_ANSWER,
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
      ...LOCK.deleteLockObjectById,
      auth: 'objects',
      summary: "Releases this session's lock on the object",
      answer: LOCK_ANSWER,
      errors: ['404', '423'],
      handler: async (request, { params: { id } }) => {
        const w = writerOf(ctx, request);
        const object = await updatable(w, id);
        await releaseLock(ctx, request.session!, object.id);
        return okReply({ isLocked: false, messages: [] });
      },
    }),
    route({
      ...LOCK.postSetObjectSecurityById,
      auth: 'objects',
      summary: 'Sets per-object security entries: the object is then usable only by the users and groups listed, for their rights',
      answer: 'nothing ({})',
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
