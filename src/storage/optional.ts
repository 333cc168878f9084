/**
 * What the optional `ObjectStore` methods of PROTOCOL.md 6.11 answer for a store that lacks them, from
 * the methods every store has: slower (they read class by class), but the same answers.
 */
import { referencedIds, type ClassCount, type FindResult, type ObjectStore, type ReferencingQuery, type StoredObject } from './types.js';

const SCAN_PAGE = 1000;

/** `store.classCounts()`, or `classNames` (else `known`) and a `count` per class. */
export async function classCountsOf(store: ObjectStore, known: readonly string[]): Promise<ClassCount[]> {
  if (store.classCounts) return store.classCounts();
  const names = store.classNames ? await store.classNames() : known;
  const counts = await Promise.all(names.map(async (className) => ({ className, count: await store.count(className) })));
  return counts.filter((entry) => entry.count > 0);
}

/**
 * `store.referencing(id, query)`, or every class (`classNames`, else `known`) read page by page for the
 * objects whose fields reference `id`: a store that lacks the method pays that.
 */
export async function referencingOf(store: ObjectStore, id: string, query: ReferencingQuery, known: readonly string[]): Promise<FindResult> {
  if (store.referencing) return store.referencing(id, query);
  const names = [...(store.classNames ? await store.classNames() : known)].sort();
  const holders: StoredObject[] = [];
  for (const className of names) {
    for (let offset = 0; ; offset += SCAN_PAGE) {
      const { objects } = await store.find({ className, where: query.where, offset, limit: SCAN_PAGE });
      holders.push(...objects.filter((object) => referencedIds(object.fields).has(id)));
      if (objects.length < SCAN_PAGE) break;
    }
  }
  const offset = Math.max(0, query.offset ?? 0);
  return { objects: holders.slice(offset, offset + Math.max(0, query.limit ?? Infinity)), total: holders.length };
}
