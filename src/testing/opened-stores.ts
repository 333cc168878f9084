import type { TestApi } from './test-api.js';

/** The stores a contract's tests open, each closed after its test. Call inside `describe`. */
export function openedStores<T extends { close?(): Promise<void> }>(create: () => Promise<T>, { afterEach }: Pick<TestApi, 'afterEach'>) {
  const open = new Set<T>();
  afterEach(async () => {
    for (const store of open) await store.close?.();
    open.clear();
  });
  return {
    /** A new, empty store. */
    fresh: async (): Promise<T> => {
      const store = await create();
      open.add(store);
      return store;
    },
    /** Hands `store` to `reopen` (which closes it) and answers the store it opens. */
    reopened: async (store: T, reopen: (store: T) => Promise<T>): Promise<T> => {
      open.delete(store);
      const again = await reopen(store);
      open.add(again);
      return again;
    },
  };
}
