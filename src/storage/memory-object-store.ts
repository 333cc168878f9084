import { newObjectId } from './ids.js';
import type { FieldValue, Fields, FindQuery, FindResult, ObjectInput, ObjectStore, StoredObject, Where } from './types.js';

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
    const id = input.id ?? this.freeId();
    return copy(this.load({ id, className: input.className, storeTime: this.#now(), fields: cloneValue(input.fields) as Fields }));
  }

  /** A new id that no stored object has. */
  freeId(): string {
    let id: string;
    do id = newObjectId();
    while (this.#byId.has(id));
    return id;
  }

  /**
   * Creates or replaces an object exactly as given (id and store time included), taking ownership of
   * `stored` (no copy). For stores built on this one, such as the file store replaying its journal.
   */
  load(stored: StoredObject): StoredObject {
    const existing = this.#byId.get(stored.id);
    if (existing && existing.className !== stored.className) this.#byClass.get(existing.className)?.delete(stored.id);
    this.#byId.set(stored.id, stored);
    let members = this.#byClass.get(stored.className);
    if (!members) this.#byClass.set(stored.className, (members = new Map()));
    members.set(stored.id, stored); // a replaced object keeps its place in creation order
    return stored;
  }

  /** Every object, class by class, each class in creation order; not copies (read, do not change). */
  *objects(): IterableIterator<StoredObject> {
    for (const members of this.#byClass.values()) yield* members.values();
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  async delete(id: string): Promise<boolean> {
    return this.remove(id);
  }

  /** `delete` without the promise, for stores built on this one. */
  remove(id: string): boolean {
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
  return { id: object.id, className: object.className, storeTime: object.storeTime, fields: cloneValue(object.fields) as Fields };
}

/**
 * Deep copy of a JSON value. Fields hold only JSON values, so this does what `structuredClone` does
 * for them at a fraction of its cost (structuredClone serializes; every object read goes through here).
 */
function cloneValue(value: FieldValue): FieldValue {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneValue);
  const out: { [key: string]: FieldValue } = {};
  for (const key of Object.keys(value)) {
    const item = cloneValue(value[key]!);
    // a member named "__proto__" (JSON.parse makes it an own property) must stay data, not a prototype
    if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}
