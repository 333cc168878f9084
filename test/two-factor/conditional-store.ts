/**
 * An ObjectStore with the conditional writes the interface documents (`ifStoreTime`, whole-second
 * store times that strictly increase per object), over MemoryObjectStore, which does not implement
 * them yet on this branch. Accept-once of two-factor codes under concurrency rests on them.
 */
import { StoreConflictError } from '../../src/storage/errors.js';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.js';
import type { FindQuery, FindResult, ObjectInput, ObjectStore, StoredObject, Where } from '../../src/storage/types.js';

export class ConditionalObjectStore implements ObjectStore {
  readonly #inner = new MemoryObjectStore();
  readonly #times = new Map<string, number>();

  get(id: string): Promise<StoredObject | undefined> {
    return this.#inner.get(id);
  }
  getMany(ids: readonly string[]): Promise<StoredObject[]> {
    return this.#inner.getMany(ids);
  }
  find(query: FindQuery): Promise<FindResult> {
    return this.#inner.find(query);
  }
  count(className: string, where?: Where): Promise<number> {
    return this.#inner.count(className, where);
  }
  delete(id: string): Promise<boolean> {
    this.#times.delete(id);
    return this.#inner.delete(id);
  }

  /** Check and write in one synchronous step, so it is atomic in this process. */
  async put(input: ObjectInput): Promise<StoredObject> {
    const id = input.id ?? this.#inner.freeId();
    const current = this.#times.get(id);
    if (input.ifStoreTime !== undefined && input.ifStoreTime !== (current ?? null)) throw new StoreConflictError();
    const storeTime = Math.max(Math.ceil(Date.now() / 1000) * 1000, (current ?? 0) + 1000);
    this.#times.set(id, storeTime);
    const stored = this.#inner.load({ id, className: input.className, storeTime, fields: structuredClone(input.fields) });
    return structuredClone(stored);
  }
}
