import { newObjectId } from './ids.js';
import type { FindQuery, FindResult, ObjectInput, ObjectStore, StoredObject, Where } from './types.js';

export interface MemoryObjectStoreOptions {
  now?: () => number;
}

/**
 * The default ObjectStore: objects in memory, per class in creation order. Returned objects are
 * copies, so callers cannot change the store behind its back.
 */
export class MemoryObjectStore implements ObjectStore {
  readonly #byId = new Map<string, StoredObject>();
  readonly #byClass = new Map<string, Map<string, StoredObject>>();
  readonly #now: () => number;

  constructor(options: MemoryObjectStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  async get(id: string): Promise<StoredObject | undefined> {
    const found = this.#byId.get(id);
    return found && copy(found);
  }

  async getMany(ids: readonly string[]): Promise<StoredObject[]> {
    const out: StoredObject[] = [];
    for (const id of ids) {
      const found = this.#byId.get(id);
      if (found) out.push(copy(found));
    }
    return out;
  }

  async find(query: FindQuery): Promise<FindResult> {
    const matches = this.#matching(query.className, query.where);
    if (query.reverse) matches.reverse();
    const offset = query.offset ?? 0;
    const limit = query.limit ?? matches.length;
    return { objects: matches.slice(offset, offset + limit).map(copy), total: matches.length };
  }

  async count(className: string, where?: Where): Promise<number> {
    if (!where || Object.keys(where).length === 0) return this.#byClass.get(className)?.size ?? 0;
    return this.#matching(className, where).length;
  }

  async put(input: ObjectInput): Promise<StoredObject> {
    const existing = input.id === undefined ? undefined : this.#byId.get(input.id);
    let id = input.id;
    if (id === undefined) {
      do id = newObjectId();
      while (this.#byId.has(id));
    }
    if (existing && existing.className !== input.className) this.#byClass.get(existing.className)?.delete(id);
    const stored: StoredObject = {
      id,
      className: input.className,
      storeTime: this.#now(),
      fields: structuredClone(input.fields),
    };
    this.#byId.set(id, stored);
    let members = this.#byClass.get(input.className);
    if (!members) this.#byClass.set(input.className, (members = new Map()));
    members.set(id, stored); // a replaced object keeps its place in creation order
    return copy(stored);
  }

  async delete(id: string): Promise<boolean> {
    const found = this.#byId.get(id);
    if (!found) return false;
    this.#byId.delete(id);
    this.#byClass.get(found.className)?.delete(id);
    return true;
  }

  #matching(className: string, where: Where | undefined): StoredObject[] {
    const members = this.#byClass.get(className);
    if (!members) return [];
    const entries = where ? Object.entries(where) : [];
    const out: StoredObject[] = [];
    for (const object of members.values()) {
      if (entries.every(([field, value]) => object.fields[field] === value)) out.push(object);
    }
    return out;
  }
}

function copy(object: StoredObject): StoredObject {
  return { id: object.id, className: object.className, storeTime: object.storeTime, fields: structuredClone(object.fields) };
}
