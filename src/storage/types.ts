/**
 * The two storage interfaces a host can implement. Both are deliberately small and storage-neutral;
 * `src/testing/` (`odbrest/testing`) holds the shared suites every implementation must pass.
 */

import type { MaybePromise } from '../maybe.js';

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
  /**
   * A conditional write: write only if the stored object with this `id` has exactly this store time
   * (`null`: only if no object has this id). Otherwise `put` throws `StoreConflictError` and writes
   * nothing. The check and the write are one atomic step: of two writers expecting the same version,
   * exactly one succeeds.
   */
  ifStoreTime?: number | null;
  /**
   * The store time to give the object, exactly (whole seconds), instead of the clock's: for imports,
   * which keep the store times of the export (`odbrest import`). Only with `ifStoreTime: null`.
   */
  importedStoreTime?: number;
}

/** A value a filter compares a field with. */
export type Scalar = string | number | boolean | null;

/**
 * Operators of one field's condition (PROTOCOL.md 6.2); every one given must hold.
 * - `$ne`: the field does not equal the value (an absent field matches).
 * - `$gt`, `$gte`, `$lt`, `$lte`: with a number, the field is a number compared numerically; with a
 *   string, the field is a string compared by Unicode code point. A field of another type never matches.
 * - `$in`: the field equals one of the scalars (an empty list matches nothing).
 * - `$prefix`: the field is a string starting with the value.
 * - `$exists`: `true` when the field is present (also when it holds `null`), `false` when absent.
 *
 * Added for query text (each a store must answer like the others; `odbrest/testing` checks it):
 * - `$eq`: the field equals the scalar (as a scalar condition), or, for a string, references the object
 *   with that id directly or as a member of a set (query text `=`).
 * - `$like`: the field is a string matching the whole pattern, `*` any run of characters and `?` one
 *   character (a code point), compared after lower-casing both (`String.prototype.toLowerCase`).
 * - `$null`: `true` when the field is absent or holds `null`; `false` when it holds something else.
 * - `$match`: the field references an object (directly or as a member of a set) that exists and
 *   matches this filter (a reference path, `Customer.City = "Berlin"`).
 */
export interface FieldOperators {
  $ne?: Scalar;
  $gt?: number | string;
  $gte?: number | string;
  $lt?: number | string;
  $lte?: number | string;
  $in?: Scalar[];
  $prefix?: string;
  $exists?: boolean;
  $eq?: Scalar;
  $like?: string;
  $null?: boolean;
  $match?: Where;
}

/**
 * One field's condition:
 * - a scalar: the field is present and equal to it (same JSON type and value; `null` matches a field
 *   holding `null`, not an absent one; an array or object never equals a scalar);
 * - a reference `{ $ref: id }`: the field references that object, directly or as a member of a set;
 * - an object of operators (`FieldOperators`).
 */
export type Condition = Scalar | RefValue | FieldOperators;

/**
 * Members of a `Where` that are not field names (fields never start with `$`), each holding alongside
 * the field conditions:
 * - `$and`: every filter of the list holds (an empty list: all hold).
 * - `$or`: at least one filter of the list holds (an empty list matches nothing).
 * - `$not`: the filter does not hold.
 * - `$oids`: the object's id is one of these (an empty list matches nothing).
 * - `$storeTime`: the object's store time (epoch ms) satisfies these range operators (`$gt`, `$gte`,
 *   `$lt`, `$lte` with numbers, `$ne`, `$in`).
 * - `$text`: full text (`seFulltext`, PROTOCOL.md 6.9): every word of it (split at white space) is
 *   contained in the object's string fields (top-level, not starting with `_`), compared after
 *   lower-casing both; an empty text matches every object.
 * - `$classes`: the object's class is one of these (an empty list matches nothing). The service adds it
 *   inside `$match`, so a reference path reaches only objects the session may read (PROTOCOL.md 6.4).
 */
export interface WhereNodes {
  $and?: Where[];
  $or?: Where[];
  $not?: Where;
  $oids?: string[];
  $storeTime?: FieldOperators;
  $text?: string;
  $classes?: string[];
}

/**
 * A filter: every member's condition must hold for its field, and every `WhereNodes` member present.
 * `{}` matches every object of the class.
 */
export type Where = { [field: string]: Condition | WhereNodes[keyof WhereNodes] } & WhereNodes;

/**
 * Order of a listing by one field's value. Values rank: absent or `null`, then `false`, `true`, then
 * numbers (ascending), then strings (by Unicode code point), then anything else (arrays, objects,
 * references), which all tie. `descending` reverses the value order only: ties always keep creation
 * order. Without `orderBy` a listing is in creation order.
 */
export interface OrderBy {
  field: string;
  descending?: boolean;
}

export interface FindQuery {
  className: string;
  where?: Where;
  orderBy?: OrderBy;
  /** Objects to skip (0-based), after ordering. */
  offset?: number;
  /** At most this many objects; 0 returns only `total`. */
  limit?: number;
  /** Reverses the whole order (ties included): with no `orderBy`, newest first. */
  reverse?: boolean;
  /**
   * Optional: another filter of the class whose total the caller needs beside the page (the service
   * asks whether any object of the class carries per-object security). A store that can answers it in
   * `FindResult.alsoCounted`, in the same round trip as the page; one that ignores it leaves that
   * absent, and the caller counts it with `count`.
   */
  alsoCount?: Where;
  /**
   * Optional: the caller only reads the page's objects (a listing's answer). A store may then answer
   * the frozen objects it keeps for `getNow` instead of copies (the serializer keeps the text of a
   * frozen object), and keep the page's objects for later reads; one that ignores it answers copies.
   */
  frozen?: boolean;
}

export interface FindResult {
  objects: StoredObject[];
  /** Objects of the class that match `where`, before paging. */
  total: number;
  /** Objects of the class that match the query's `alsoCount`, when it had one and the store answers it. */
  alsoCounted?: number;
}

/** One class that holds objects, with how many (`classCounts`). */
export interface ClassCount {
  className: string;
  count: number;
  /** `count` is an estimate (a store may estimate above a bound rather than count a large class). */
  estimated?: boolean;
}

/** What `referencing` takes: a filter across classes (its `$classes` narrows them) and a page. */
export interface ReferencingQuery {
  where?: Where;
  /** Objects to skip (0-based). */
  offset?: number;
  /** At most this many objects; 0 returns only `total`. */
  limit?: number;
}

/**
 * A class's declaration as a store checks stored objects against it (PROTOCOL.md 6.8, 6.12): per
 * declared field its type and limits, and whether undeclared fields are refused. An object violates it
 * when its fields (those not starting with `_`) would be refused by a write:
 * - a `required` field absent, or `null` unless its type is `json`; any other declared field may be absent or `null`;
 * - `string`: a string, at most `maxLength` characters (UTF-16 code units), one of `enum`;
 * - `number`: a finite number; `integer`: a whole one; each within `min`/`max` and one of `enum`;
 * - `boolean`: a boolean; `json`: anything;
 * - `date`: a string of `~StoreTime`'s form (`YYYYMMDDThhmmss+hh:mm`) or ISO 8601 (a date, or a date
 *   and a time `hh:mm[:ss[.fraction]]` with an optional zone `Z`, `+hh:mm` or `+hhmm`) that is a real
 *   date (not `2026-02-30`);
 * - `ref`, `file`: exactly `{ $ref: string }`; `set`: exactly `{ $set: [strings] }`;
 * - `strict`: no field other than the declared ones.
 */
export interface ClassRules {
  fields: Record<string, { type: 'string' | 'number' | 'integer' | 'boolean' | 'date' | 'json' | 'ref' | 'set' | 'file'; required: boolean; maxLength?: number; min?: number; max?: number; enum?: readonly (string | number)[] }>;
  strict: boolean;
}

/** What `violations` answers: how many objects violate the rules, and the first of them (creation order). */
export interface Violations {
  count: number;
  ids: string[];
}

export interface ObjectStore {
  /**
   * Optional: what the store is, as OpenTelemetry's `db.system.name` of its spans and metrics
   * (`postgresql`, `redis`; a store of odbrest's own `odbrest.memory` or `odbrest.file`). Without it: `odbrest.objects`.
   */
  readonly systemName?: string;
  get(id: string): Promise<StoredObject | undefined>;
  /** Several objects at once, for serializing references; missing ids are left out. */
  getMany(ids: readonly string[]): Promise<StoredObject[]>;
  /**
   * Optional: `get`, answered without a promise when the store has the object at hand (in memory, or
   * a cache that needs no round trip), else the promise `get` answers; the same answer either way.
   * The read path (`GET /v1/object/{id}` and the references it serializes) then runs without waiting.
   * Its answers are only read, never changed: a store may answer the object it keeps, frozen
   * (`Object.freeze`, fields included; the memory store does), where `get` answers a copy. The serializer
   * may keep the text of a frozen object (it never changes), so a store must answer a given frozen
   * object only while that version is current, and a new one for each write.
   */
  getNow?(id: string): MaybePromise<StoredObject | undefined>;
  /** Optional: `getMany` as `getNow` is `get`. */
  getManyNow?(ids: readonly string[]): MaybePromise<StoredObject[]>;
  find(query: FindQuery): Promise<FindResult>;
  count(className: string, where?: Where): Promise<number>;
  /**
   * Creates or replaces; assigns `id` (if absent) and `storeTime`. Store times are whole seconds (epoch
   * ms divisible by 1000) and strictly increase per object: a write in the same second as the
   * object's last one takes the next second, so a changed object never shows a store time a client
   * read before. A replaced object keeps its place in creation order. See `ifStoreTime`.
   */
  put(object: ObjectInput): Promise<StoredObject>;
  delete(id: string): Promise<boolean>;
  /** The names of the classes that hold objects, for exports (`odbrest export`). */
  classNames?(): Promise<string[]>;
  /**
   * Optional: every class that holds objects with its number of objects (PROTOCOL.md 6.11), without
   * reading a large class row by row (a count may be an estimate, flagged `estimated`). A store without
   * it is asked `classNames` and then `count` per class.
   */
  classCounts?(): Promise<ClassCount[]>;
  /**
   * Optional: the objects of any class holding a reference to `id` in a top-level field not starting
   * with `_` (`{ $ref: id }`, or `id` in a `{ $set: [...] }`), that match `where`, ordered by class name
   * (code point) and then creation order, with how many match in all. Answered from an index, never by
   * reading every class (PROTOCOL.md 6.11). A store without it is read class by class.
   */
  referencing?(id: string, query?: ReferencingQuery): Promise<FindResult>;
  /**
   * Optional: several puts as one all-or-nothing step (bulk writes, PROTOCOL.md 6.3), answered in
   * input order. Each input is as for `put` (its `ifStoreTime` included); should any conditional write
   * find another version, it throws `StoreConflictError` and writes none of them. An id may appear
   * only once. A store without it is written one object at a time.
   */
  putMany?(objects: readonly ObjectInput[]): Promise<StoredObject[]>;
  /**
   * Optional: how many objects of `className` violate `rules` (see `ClassRules`), and the ids of the
   * first `limit` of them in creation order, in one pass over the class on the store's side (a run-time
   * declaration's check, PROTOCOL.md 6.12). A store without it is read a page at a time and each object
   * checked in process.
   */
  violations?(className: string, rules: ClassRules, limit: number): Promise<Violations>;
  /**
   * Optional: makes the store answer filters on and orders by `field` of `className` from an index,
   * built without blocking writes (a run-time declaration's `Indexes`, PROTOCOL.md 6.12). Resolves once
   * the index is usable. A store without it answers as it always does.
   */
  ensureIndex?(className: string, field: string): Promise<void>;
  /**
   * Optional: session consistency for stores shared by several instances (docs/scaling.md). The
   * service runs each request of a session as `inSession(position, work, wrote)`: `position` is what
   * the session's writes reached (kept in its session record; `undefined` before its first write),
   * and every read `work` makes, on any instance, reflects at least those writes. When `work` wrote,
   * the store calls `wrote` with the position its writes reached, and waits for it, before it settles;
   * the service keeps it in the session record. Positions are the store's own strings, which sort as
   * the positions do (a later one sorts after). A store without it answers every read as it is.
   */
  inSession?<T>(position: string | undefined, work: () => Promise<T>, wrote: (position: string) => Promise<void>): Promise<T>;
  close?(): Promise<void>;
}

/**
 * Short-lived shared state: sessions, failed-login counters, OAuth states, dfUuids. Values are strings
 * (callers encode JSON); every entry has a TTL in milliseconds; each operation is atomic on its key.
 */
export interface KeyValueStore {
  /**
   * Optional: what the store is, as OpenTelemetry's `db.system.name` of its spans and metrics
   * (`postgresql`, `redis`; a store of odbrest's own `odbrest.memory` or `odbrest.file`). Without it: `odbrest.kv`.
   */
  readonly systemName?: string;
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
  /**
   * Adds `by` (default 1, may be negative) to a counter and returns the new value. A new counter starts
   * at `by` and lives `ttlMs` (later increments keep that lifetime); with a negative `by` an absent
   * counter stays absent and the answer is 0.
   */
  increment(key: string, ttlMs: number, by?: number): Promise<number>;
  /** Remaining lifetime in ms, or 0 when the key is absent. */
  ttl(key: string): Promise<number>;
  /** Sets a new lifetime; false when the key is absent. */
  expire(key: string, ttlMs: number): Promise<boolean>;
  /**
   * Reads the value and sets a new lifetime in one step (`get` then `expire`, atomically: one round
   * trip where the store is remote). An absent key stays absent. Renews a session on every request.
   */
  getAndExpire(key: string, ttlMs: number): Promise<string | undefined>;
  /**
   * Optional: `getAndExpire`, answered without a promise when the store holds its entries at hand
   * (in memory), else the promise `getAndExpire` answers: a request's session is then found without waiting.
   */
  getAndExpireNow?(key: string, ttlMs: number): MaybePromise<string | undefined>;
  /**
   * Optional, with `leaveLine` and `watchLines`: a line under `key` where members stand in the order
   * they came (first come, first served: the failed-login limit's waiting, PROTOCOL.md 2.4, across all
   * instances sharing the store). Puts `member` at the end unless it stands in the line already (then
   * it keeps its place), gives it `ttlMs` to live from now (a member whose time passes leaves by
   * itself, as if its instance stopped), and answers how many members stand ahead of it (0: first),
   * all in one atomic step. Lines are apart from the other keys: a line and a value may share a key.
   * A store without lines: the limit's waiters look again after growing pauses (correct, less fair).
   */
  lineUp?(key: string, member: string, ttlMs: number): Promise<number>;
  /** Optional, with `lineUp`: takes `member` out of the line `key` and, when it stood in it, tells every watcher (`watchLines`). */
  leaveLine?(key: string, member: string): Promise<void>;
  /**
   * Optional, with `lineUp`: calls `listener` with a line's key whenever a member leaves that line
   * through `leaveLine`, on this instance or any other sharing the store, soon after (a notice may be
   * lost while the connection is down: watchers look again now and then). Resolves once watching,
   * with a function that stops it.
   */
  watchLines?(listener: (key: string) => void): Promise<() => void>;
  close?(): Promise<void>;
}

export function isRef(value: unknown): value is RefValue {
  return typeof value === 'object' && value !== null && typeof (value as RefValue).$ref === 'string';
}

export function isSet(value: unknown): value is SetValue {
  return typeof value === 'object' && value !== null && Array.isArray((value as SetValue).$set);
}

/**
 * The ids an object's fields reference (what `ObjectStore.referencing` finds it by): `$ref` and the
 * string members of `$set` in top-level fields not starting with `_`.
 */
export function referencedIds(fields: Fields): Set<string> {
  const ids = new Set<string>();
  for (const [name, value] of Object.entries(fields)) {
    if (name.startsWith('_')) continue;
    if (isRef(value)) ids.add(value.$ref);
    if (isSet(value)) for (const id of value.$set) if (typeof id === 'string') ids.add(id);
  }
  return ids;
}
