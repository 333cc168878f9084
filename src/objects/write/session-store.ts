/**
 * The store a macro's context holds (PROTOCOL.md 7, 6.4, 6.10): the object store as the calling
 * session may use it. Reads answer only what the session may read (an object it may not read, or of
 * an internal class, is absent, as `GET` answers it); writes go through the one write path
 * (`createObject`, `updateObject`, `deleteObject`): the access rules, the host's `beforeWrite` and
 * `afterWrite`, file bytes deleted with a file object, and whatever else follows a write.
 *
 * Hooks the service itself calls (`xApi_*`, `beforeWrite`/`afterWrite`, `authorize`) and macros run
 * outside any session keep the raw store: that is the service acting for itself (the service
 * context), with every right, as the host's own code does.
 */
import type { WriteContext } from './context.js';
import { ApiError } from '../../http/errors.js';
import type { ApiRequest } from '../../http/request.js';
import type { FindQuery, FindResult, ObjectInput, ObjectStore, StoredObject, Where } from '../../storage/types.js';
import { served } from '../read/index.js';
import { createObject, deleteObject, updateObject, type Writer, writerOf } from './write-path.js';

export function sessionObjectStore(ctx: WriteContext, request: ApiRequest): ObjectStore {
  const raw = ctx.store;
  const writer: Writer = writerOf(ctx, request);
  const { guard } = writer;
  const get = async (id: string) => served(ctx, guard, await raw.get(id));
  const visible = async (objects: StoredObject[]) => {
    const shown = await Promise.all(objects.map((object) => served(ctx, guard, object)));
    return shown.filter((object): object is StoredObject => object !== undefined);
  };
  const find = async (query: FindQuery): Promise<FindResult> => {
    if (ctx.internalClasses.has(query.className) || (await guard.scope('read', query.className)) === 'none') return { objects: [], total: 0 };
    const found = await raw.find(query);
    const objects = await visible(found.objects);
    // objects dropped by authorize, per-object security or a "self" rule leave the count
    const narrowed = (await guard.narrowedIn(query.className)) || (await guard.scope('read', query.className)) === 'self';
    return { objects, total: narrowed ? found.total - (found.objects.length - objects.length) : found.total };
  };
  return {
    get,
    getMany: async (ids) => visible(await raw.getMany(ids)),
    find,
    count: async (className: string, where?: Where) => {
      if (!ctx.internalClasses.has(className) && (await guard.scope('read', className)) === 'all' && !(await guard.narrowedIn(className))) return raw.count(className, where);
      return (await find({ className, where })).objects.length;
    },
    put: async (input: ObjectInput) => {
      if (input.id === undefined) return createObject(writer, input.className, input.fields);
      // new objects get their id from the store, as through POST /v1/object
      if (input.ifStoreTime === null) throw new ApiError('400', 'a macro creates an object without an id (the store assigns it)');
      const read = async () => {
        const before = await get(input.id!);
        if (!before) throw new ApiError('404', `no object ${input.id!.slice(0, 100)}`);
        return before;
      };
      return updateObject(writer, read, input.fields, input.ifStoreTime ?? undefined);
    },
    delete: async (id: string) => {
      const before = await get(id);
      if (!before) return false;
      await deleteObject(writer, before);
      return true;
    },
  };
}
