/**
 * The store time a write gives an object (`ObjectStore.put`): whole seconds (what `~StoreTime` can
 * show), and later than the object's previous store time, so a changed object never shows a store
 * time a client read before. `previous` is the object's current store time, if it exists.
 */
export function nextStoreTime(now: number, previous?: number): number {
  const second = Math.floor(now / 1000) * 1000;
  if (previous === undefined) return second;
  return Math.max(second, Math.floor(previous / 1000) * 1000 + 1000);
}
