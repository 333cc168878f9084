/**
 * The two storage interfaces a host can implement. Both are deliberately small and storage-neutral;
 * `test/contracts/` holds the shared suites every implementation must pass.
 */

/** A JSON value stored in a field. */
export type FieldValue = null | boolean | number | string | FieldValue[] | { [key: string]: FieldValue };

/** A field that references another object: `{ "$ref": "<objectId>" }`. */
export interface RefValue {
  $ref: string;
}
/** A field holding a set of references: `{ "$set": ["<objectId>", ...] }`. */
export interface SetValue {
  $set: string[];
}

/** Fields whose names start with `_` are internal (password hashes, licences) and never serialized. */
export type Fields = Record<string, FieldValue>;

export interface StoredObject {
  /** Short alphanumeric id, unique across classes (`~ObjectID`). */
  id: string;
  className: string;
  /** Epoch milliseconds of the last store (`~StoreTime`). */
  storeTime: number;
  fields: Fields;
}

/** What `put` takes: an object without id is created, one with an id is created or replaced. */
export interface ObjectInput {
  id?: string;
  className: string;
  fields: Fields;
}

/** Scalar equality filter over fields: `{ Name: "alice" }`. */
export type Where = Record<string, string | number | boolean | null>;

export interface FindQuery {
  className: string;
  where?: Where;
  /** Objects to skip (0-based). */
  offset?: number;
  /** At most this many objects; 0 returns only `total`. */
  limit?: number;
  /** Listings are in creation order; `reverse` gives newest first. */
  reverse?: boolean;
}

export interface FindResult {
  objects: StoredObject[];
  /** Objects of the class that match `where`, before paging. */
  total: number;
}

export interface ObjectStore {
  get(id: string): Promise<StoredObject | undefined>;
  /** Several objects at once, for serializing references; missing ids are left out. */
  getMany(ids: readonly string[]): Promise<StoredObject[]>;
  find(query: FindQuery): Promise<FindResult>;
  count(className: string, where?: Where): Promise<number>;
  /** Creates or replaces; assigns `id` (if absent) and `storeTime`. */
  put(object: ObjectInput): Promise<StoredObject>;
  delete(id: string): Promise<boolean>;
  close?(): Promise<void>;
}

/**
 * Short-lived shared state: sessions, failed-login counters, OAuth states, dfUuids. Values are strings
 * (callers encode JSON); every entry has a TTL in milliseconds; each operation is atomic on its key.
 */
export interface KeyValueStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /**
   * Writes `value` only if the current value is exactly `expected` (`undefined`: the key is absent).
   * Returns whether it wrote. The building block for atomic read-modify-write.
   */
  compareAndSet(key: string, expected: string | undefined, value: string, ttlMs: number): Promise<boolean>;
  /** Reads and removes in one step (one-time values). */
  take(key: string): Promise<string | undefined>;
  delete(key: string): Promise<boolean>;
  /** Adds one to a counter; a new counter starts at 1 and lives `ttlMs`. Returns the new value. */
  increment(key: string, ttlMs: number): Promise<number>;
  /** Remaining lifetime in ms, or 0 when the key is absent. */
  ttl(key: string): Promise<number>;
  /** Sets a new lifetime; false when the key is absent. */
  expire(key: string, ttlMs: number): Promise<boolean>;
  close?(): Promise<void>;
}

export function isRef(value: unknown): value is RefValue {
  return typeof value === 'object' && value !== null && typeof (value as RefValue).$ref === 'string';
}

export function isSet(value: unknown): value is SetValue {
  return typeof value === 'object' && value !== null && Array.isArray((value as SetValue).$set);
}
