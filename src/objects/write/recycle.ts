/**
 * The recycle bin (PROTOCOL.md 6.3): a recycled object leaves the store under its id, so every read,
 * listing, reference and filter meets it exactly as deleted, and waits as an entry of an internal
 * class (in the object store: every store, every instance) until it is restored, emptied or expires.
 */
import type { WriteContext } from './context.js';
import { ApiError, clip } from '../../http/errors.js';
import type { Fields, StoredObject } from '../../storage/types.js';
import { StoreConflictError } from '../../storage/errors.js';

/** The internal class of recycle bin entries (never served). */
export const RECYCLED_CLASS = 'RecycledObject';

/** A recycled object and when, and by whom, it was recycled. */
export interface Recycled {
  /** The entry's own id. */
  entryId: string;
  object: StoredObject;
  deletedAt: number;
  deletedBy: string;
}

function recycled(entry: StoredObject): Recycled {
  const f = entry.fields;
  return {
    entryId: entry.id,
    object: { id: f._objectId as string, className: f._className as string, storeTime: f._storeTime as number, fields: JSON.parse(f._fields as string) as Fields },
    deletedAt: f._deletedAt as number,
    deletedBy: f._deletedBy as string,
  };
}

/**
 * Moves `object` to `principalId`'s bin: the entry is stored first, then the object deleted (should
 * that fail, the entry goes again), so the object is never lost and never in both places for long.
 */
export async function recycle(ctx: WriteContext, object: StoredObject, principalId: string): Promise<void> {
  await sweepExpired(ctx);
  const entry = await ctx.store.put({
    className: RECYCLED_CLASS,
    fields: {
      _objectId: object.id,
      _className: object.className,
      _storeTime: object.storeTime,
      // as text: the object's references are kept, but no filter or index of the store sees them
      _fields: JSON.stringify(object.fields),
      _deletedAt: ctx.now(),
      _deletedBy: principalId,
    },
  });
  try {
    await ctx.store.delete(object.id);
  } catch (error) {
    await ctx.store.delete(entry.id).catch(() => undefined);
    throw error;
  }
}

/** The bin of `principalId`, oldest first (at most `limit`). */
export async function recycledOf(ctx: WriteContext, principalId: string, limit = 1000): Promise<{ entries: Recycled[]; total: number }> {
  await sweepExpired(ctx);
  const found = await ctx.store.find({ className: RECYCLED_CLASS, where: { _deletedBy: principalId }, limit });
  return { entries: found.objects.map(recycled), total: found.total };
}

/** Puts the recycled object `objectId` of `principalId`'s bin back as it was (`404` when it is not there). */
export async function restore(ctx: WriteContext, principalId: string, objectId: string): Promise<StoredObject> {
  await sweepExpired(ctx);
  const found = await ctx.store.find({ className: RECYCLED_CLASS, where: { _deletedBy: principalId, _objectId: objectId }, limit: 1 });
  const entry = found.objects[0];
  if (!entry) throw new ApiError('404', `no object ${clip(objectId)} in this session's recycle bin`);
  const { object } = recycled(entry);
  let restored: StoredObject;
  try {
    restored = await ctx.store.put({ id: object.id, className: object.className, fields: object.fields, ifStoreTime: null });
  } catch (error) {
    if (error instanceof StoreConflictError) throw new ApiError('409', `object ${clip(objectId)} cannot be restored: its id is taken`);
    throw error;
  }
  await ctx.store.delete(entry.id);
  return restored;
}

/** Deletes recycled objects for good, a file's bytes included (PROTOCOL.md 6.6). */
export async function purge(ctx: WriteContext, entries: readonly Recycled[]): Promise<void> {
  for (const { entryId, object } of entries) {
    if (object.className === ctx.files.className) await ctx.files.blobs.delete(object.id);
    await ctx.store.delete(entryId);
  }
}

/** Empties `principalId`'s bin; answers how many objects went. */
export async function emptyBin(ctx: WriteContext, principalId: string): Promise<number> {
  let count = 0;
  for (;;) {
    const { entries } = await recycledOf(ctx, principalId, 500);
    if (entries.length === 0) return count;
    await purge(ctx, entries);
    count += entries.length;
  }
}

/** Deletes for good what has waited longer than the configured days (a few at a time, on every use of the bin). */
export async function sweepExpired(ctx: WriteContext): Promise<void> {
  const cutoff = ctx.now() - ctx.writeOptions.recycleDays * 86_400_000;
  const { objects } = await ctx.store.find({ className: RECYCLED_CLASS, where: { _deletedAt: { $lt: cutoff } }, limit: 100 });
  await purge(ctx, objects.map(recycled));
}
