/**
 * The recycle bin (PROTOCOL.md 6.3). A recycled object stays under its own id as an entry of an
 * internal class (never served, so every read, listing, reference and filter meets it exactly as
 * deleted) until it is restored, emptied or expires. Moving it to the bin is one conditional put
 * that turns the object into its entry, and restoring one conditional put that turns the entry back
 * into the object: each is one atomic step in every store (`put` with `ifStoreTime`), so no
 * interruption leaves an object both live and in the bin, or two entries for one object. A newer
 * deletion's entry is the only one, and a restore takes exactly it.
 *
 * Entries written before (one per deletion, under ids of their own, naming the object in
 * `_objectId`) are moved under their object's id on the bin's next use: the newest deletion's, unless
 * the id holds anything already (a live object, or a newer entry), which always wins over them.
 */
import type { WriteContext } from './context.js';
import { ApiError, clip } from '../../http/errors.js';
import { andThen } from '../../maybe.js';
import type { Fields, ObjectStore, StoredObject } from '../../storage/types.js';
import { StoreConflictError } from '../../storage/errors.js';

/** The internal class of recycle bin entries (never served). */
export const RECYCLED_CLASS = 'RecycledObject';

/** A recycled object and when, and by whom, it was recycled. */
export interface Recycled {
  object: StoredObject;
  deletedAt: number;
  deletedBy: string;
}

/**
 * `store` as the service reads it: an id whose object is in the recycle bin answers nothing to `get`
 * and `getMany` (so references read `null`, sets leave it out, and a recycled user is gone, exactly as
 * deleted); everything else as `store` answers it. The bin itself finds its entries with `find`.
 */
export function withoutRecycled(store: ObjectStore): ObjectStore {
  const live = (object: StoredObject | undefined) => (object?.className === RECYCLED_CLASS ? undefined : object);
  const liveOnly = (objects: StoredObject[]) => (objects.some((object) => object.className === RECYCLED_CLASS) ? objects.filter((object) => object.className !== RECYCLED_CLASS) : objects);
  const { getNow, getManyNow, classNames, classCounts, referencing, putMany, inSession, violations, ensureIndex, close } = store;
  return {
    get: (id) => store.get(id).then(live),
    getMany: (ids) => store.getMany(ids).then(liveOnly),
    ...(getNow && { getNow: (id: string) => andThen(getNow.call(store, id), live) }),
    ...(getManyNow && { getManyNow: (ids: readonly string[]) => andThen(getManyNow.call(store, ids), liveOnly) }),
    find: (query) => store.find(query),
    count: (className, where) => store.count(className, where),
    put: (object) => store.put(object),
    delete: (id) => store.delete(id),
    ...(classNames && { classNames: () => classNames.call(store) }),
    ...(classCounts && { classCounts: () => classCounts.call(store) }),
    ...(referencing && { referencing: referencing.bind(store) }),
    ...(putMany && { putMany: putMany.bind(store) }),
    ...(inSession && { inSession: inSession.bind(store) }),
    // a declaration's check and its indexes (objects/model/runtime.ts) read live objects' classes only
    ...(violations && { violations: violations.bind(store) }),
    ...(ensureIndex && { ensureIndex: ensureIndex.bind(store) }),
    ...(close && { close: () => close.call(store) }),
  };
}

/** Old entries (`_objectId`, ids of their own) moved under their objects' ids per use of the bin, at most. */
const OLD_ENTRIES_PER_USE = 1000;

function recycled(entry: StoredObject): Recycled {
  const f = entry.fields;
  return {
    object: { id: (f._objectId as string | undefined) ?? entry.id, className: f._className as string, storeTime: f._storeTime as number, fields: JSON.parse(f._fields as string) as Fields },
    deletedAt: f._deletedAt as number,
    deletedBy: f._deletedBy as string,
  };
}

function entryFields({ object, deletedAt, deletedBy }: Recycled): Fields {
  // the fields as text: the object's references are kept, but no filter or index of the store sees them
  return { _className: object.className, _storeTime: object.storeTime, _fields: JSON.stringify(object.fields), _deletedAt: deletedAt, _deletedBy: deletedBy };
}

/** `false` for a conditional write that found another version (someone else came first); any other error is thrown. */
function lostRace(error: unknown): false {
  if (error instanceof StoreConflictError) return false;
  throw error;
}

/**
 * Moves `object` to `principalId`'s bin, in one step: the object becomes its entry, but only as the
 * version read (answers `false`, writing nothing, when another write changed or removed it since).
 */
export async function recycle(ctx: WriteContext, object: StoredObject, principalId: string): Promise<boolean> {
  await sweep(ctx);
  const fields = entryFields({ object, deletedAt: ctx.now(), deletedBy: principalId });
  return ctx.store.put({ id: object.id, className: RECYCLED_CLASS, fields, ifStoreTime: object.storeTime }).then(() => true, lostRace);
}

/** The bin of `principalId`, oldest first (at most `limit`). */
export async function recycledOf(ctx: WriteContext, principalId: string, limit = 1000): Promise<{ entries: Recycled[]; total: number }> {
  await sweep(ctx);
  const found = await ctx.store.find({ className: RECYCLED_CLASS, where: { _deletedBy: principalId, _objectId: { $exists: false } }, limit });
  return { entries: found.objects.map(recycled), total: found.total };
}

/** Puts the recycled object `objectId` of `principalId`'s bin back as it was (`404` when it is not there). */
export async function restore(ctx: WriteContext, principalId: string, objectId: string): Promise<StoredObject> {
  await sweep(ctx);
  const [entry] = (await ctx.store.find({ className: RECYCLED_CLASS, where: { $oids: [objectId] }, limit: 1 })).objects;
  const missing = () => new ApiError('404', `no object ${clip(objectId)} in this session's recycle bin`);
  if (entry?.className !== RECYCLED_CLASS || entry.fields._deletedBy !== principalId || expired(ctx, entry)) throw missing();
  const { object } = recycled(entry);
  // only over the entry read: one restored (or emptied) by another request meanwhile is gone from the bin
  const restored = await ctx.store.put({ id: object.id, className: object.className, fields: object.fields, ifStoreTime: entry.storeTime }).catch(lostRace);
  if (!restored) throw missing();
  return restored;
}

/**
 * Deletes a bin entry for good, a file's bytes included (PROTOCOL.md 6.6); `false` when a restore came
 * first. The entry is first marked purged (only as the version read): no restore takes it from then
 * on, so deleting the id can never remove an object restored meanwhile, and a purge cut short is
 * finished by a later sweep (a mark's `_deletedAt` is 0, long expired).
 */
async function purge(ctx: WriteContext, entry: StoredObject): Promise<boolean> {
  const className = entry.fields._className as string;
  if (entry.fields._purged !== true) {
    const marked = await ctx.store.put({ id: entry.id, className: RECYCLED_CLASS, fields: { _className: className, _purged: true, _deletedAt: 0 }, ifStoreTime: entry.storeTime }).catch(lostRace);
    if (!marked) return false;
  }
  if (className === ctx.files.className) await ctx.files.blobs.delete(entry.id);
  await ctx.store.delete(entry.id);
  return true;
}

/** Empties `principalId`'s bin; answers how many objects went. */
export async function emptyBin(ctx: WriteContext, principalId: string): Promise<number> {
  let count = 0;
  for (;;) {
    await sweep(ctx);
    const { objects } = await ctx.store.find({ className: RECYCLED_CLASS, where: { _deletedBy: principalId, _objectId: { $exists: false } }, limit: 500 });
    if (objects.length === 0) return count;
    for (const entry of objects) if (await purge(ctx, entry)) count++;
  }
}

function cutoff(ctx: WriteContext): number {
  return ctx.now() - ctx.writeOptions.recycleDays * 86_400_000;
}

function expired(ctx: WriteContext, entry: StoredObject): boolean {
  return (entry.fields._deletedAt as number) < cutoff(ctx);
}

/**
 * On every use of the bin: deletes for good what has waited longer than the configured days (and
 * finishes purges cut short), a few at a time, and moves old entries under their objects' ids.
 */
export async function sweep(ctx: WriteContext): Promise<void> {
  const { objects } = await ctx.store.find({ className: RECYCLED_CLASS, where: { _deletedAt: { $lt: cutoff(ctx) }, _objectId: { $exists: false } }, limit: 100 });
  for (const entry of objects) await purge(ctx, entry);
  for (let moved = 0; moved < OLD_ENTRIES_PER_USE; ) {
    const old = await ctx.store.find({ className: RECYCLED_CLASS, where: { _objectId: { $exists: true } }, limit: 100 });
    let round = 0;
    for (const objectId of new Set(old.objects.map((entry) => entry.fields._objectId as string))) round += await moveOld(ctx, objectId);
    if (round === 0) return; // none left, or another instance is moving them
    moved += round;
  }
}

/**
 * Moves the old entries of one object under its id: the newest deletion's (the highest store time,
 * then the latest `_deletedAt`) becomes the entry, unless the id holds anything already (a live
 * object, or an entry written since), which wins over all of them; then they go. Before it writes the
 * entry, it marks the newest old one (only as read): of two instances moving the same entries, only
 * one writes, and none after they went. Answers how many old entries went.
 */
async function moveOld(ctx: WriteContext, objectId: string): Promise<number> {
  const { objects: old } = await ctx.store.find({ className: RECYCLED_CLASS, where: { _objectId: objectId }, limit: 1000 });
  const newest = old.reduce<StoredObject | undefined>((best, entry) => (best && newer(best, entry) ? best : entry), undefined);
  if (!newest) return 0;
  const claimed = await ctx.store.put({ id: newest.id, className: RECYCLED_CLASS, fields: { ...newest.fields, _moving: true }, ifStoreTime: newest.storeTime }).catch(lostRace);
  if (!claimed) return 0; // another instance is moving them
  await ctx.store.put({ id: objectId, className: RECYCLED_CLASS, fields: entryFields(recycled(newest)), ifStoreTime: null }).catch(lostRace);
  for (const entry of old) await ctx.store.delete(entry.id);
  return old.length;
}

/** Whether old entry `a` is of a later deletion than `b`. */
function newer(a: StoredObject, b: StoredObject): boolean {
  const [x, y] = [recycled(a), recycled(b)];
  return x.object.storeTime !== y.object.storeTime ? x.object.storeTime > y.object.storeTime : x.deletedAt >= y.deletedAt;
}
