import { StoreConflictError, StoreValueError } from './errors.js';
import { compareFieldValues, compileWhere, fieldValue, isScalar, type Lookup } from './filter.js';
import { newObjectId } from './ids.js';
import { nextStoreTime } from './store-time.js';
import {
  isRef,
  isSet,
  referencedIds,
  type ClassCount,
  type FieldValue,
  type Fields,
  type FindQuery,
  type FindResult,
  type ObjectInput,
  type ObjectStore,
  type OrderBy,
  type ReferencingQuery,
  type Scalar,
  type StoredObject,
  type Where,
} from './types.js';

export interface MemoryObjectStoreOptions {
  now?: () => number;
}

/**
 * The default ObjectStore: objects in memory, per class in creation order. Returned objects are
 * copies, so callers cannot change the store behind its back.
 *
 * A page is answered without walking the class where it can be: each class keeps its objects in an
 * array in creation order (deleted ones leave a hole until the array is compacted), so an unfiltered
 * page costs its own length; equality, `$in` and reference filters use an index per field, `$exists`
 * one of the objects holding the field, `$oids` the ids themselves (also inside an `$and`, as folders
 * and `self` listings narrow a filter), range filters the run of the field's order index they select,
 * and ordered listings an index per order, each built the first
 * time a query needs it and then kept up to date by every write to the class. Where the number of
 * matches is known without walking (the class's live count, an index's length), a walk that tests
 * objects stops after the page.
 */
export class MemoryObjectStore implements ObjectStore {
  readonly systemName: string = 'odbrest.memory';
  readonly #byId = new Map<string, Entry>();
  readonly #classes = new Map<string, ClassObjects>();
  /** The objects referencing each id (`referencing`), kept up to date by every write. */
  readonly #referrers = new Map<string, Set<Entry>>();
  readonly #now: () => number;
  /** Referenced objects for reference paths (`$match`): the stored entries themselves, read only. */
  readonly #lookup: Lookup = (id) => this.#byId.get(id);

  constructor(options: MemoryObjectStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  async get(id: string): Promise<StoredObject | undefined> {
    const found = this.#byId.get(id);
    return found && copy(found);
  }

  async getMany(ids: readonly string[]): Promise<StoredObject[]> {
    return this.#many(ids, copy);
  }

  /** The object as it is stored, frozen (see `ObjectStore.getNow`): no copy per read. */
  getNow(id: string): StoredObject | undefined {
    const found = this.#byId.get(id);
    return found && snapshotOf(found);
  }

  getManyNow(ids: readonly string[]): StoredObject[] {
    return this.#many(ids, snapshotOf);
  }

  /** The objects of `ids` that exist, in that order, each as `as` gives it (a copy or the frozen snapshot). */
  #many(ids: readonly string[], as: (entry: Entry) => StoredObject): StoredObject[] {
    const out: StoredObject[] = [];
    for (const id of ids) {
      const found = this.#byId.get(id);
      if (found) out.push(as(found));
    }
    return out;
  }

  async find(query: FindQuery): Promise<FindResult> {
    const objects = this.#classes.get(query.className);
    if (!objects) return { objects: [], total: 0 };
    const { entries, total } = objects.select(query, this.#lookup);
    // a page only read (`FindQuery.frozen`) is the objects as `getNow` answers them: no copies
    const page = entries.map(query.frozen ? snapshotOf : copy);
    if (query.alsoCount === undefined) return { objects: page, total };
    const alsoCounted = objects.select({ className: query.className, where: query.alsoCount, limit: 0 }, this.#lookup).total;
    return { objects: page, total, alsoCounted };
  }

  async count(className: string, where?: Where): Promise<number> {
    return this.#classes.get(className)?.select({ className, where, limit: 0 }, this.#lookup).total ?? 0;
  }

  async put(input: ObjectInput): Promise<StoredObject> {
    const storeTime = this.checkWrite(input); // checked and written in one synchronous step
    const id = input.id ?? this.freeId();
    return copy(this.load({ id, className: input.className, storeTime, fields: compactCopy(input.fields) }));
  }

  /** Every input checked first, then all written, in one synchronous step (all or nothing). */
  async putMany(inputs: readonly ObjectInput[]): Promise<StoredObject[]> {
    return this.loadMany(this.checkMany(inputs)).map(copy);
  }

  /** Checks every write of a `putMany` (ids given or chosen, store times), writing nothing; for stores built on this one. */
  checkMany(inputs: readonly ObjectInput[]): StoredObject[] {
    const ids = new Set<string>();
    const planned = inputs.map((input) => {
      const storeTime = this.checkWrite(input);
      let id = input.id;
      if (id === undefined) do id = this.freeId();
      while (ids.has(id));
      if (ids.has(id)) throw new Error(`putMany: id ${id} appears twice`);
      ids.add(id);
      return { id, className: input.className, storeTime, fields: compactCopy(input.fields) };
    });
    return planned;
  }

  /** Loads checked writes (`checkMany`), taking ownership of their fields. */
  loadMany(planned: StoredObject[]): StoredObject[] {
    return planned.map((stored) => this.load(stored));
  }

  /**
   * Checks a write's `ifStoreTime` against the stored object (throws `StoreConflictError`) and
   * answers the store time the write gets. For stores built on this one, which then `load` it.
   */
  checkWrite(input: ObjectInput): number {
    const existing = input.id === undefined ? undefined : this.#byId.get(input.id);
    const expected = input.ifStoreTime;
    if (expected !== undefined && (expected === null ? existing !== undefined : existing?.storeTime !== expected)) {
      throw new StoreConflictError();
    }
    if (input.importedStoreTime !== undefined) {
      if (expected !== null || !Number.isSafeInteger(input.importedStoreTime) || input.importedStoreTime % 1000 !== 0) throw new StoreValueError('importedStoreTime is given only to new objects (ifStoreTime: null), in whole seconds');
      return input.importedStoreTime;
    }
    return nextStoreTime(this.#now(), existing?.storeTime);
  }

  /** Builds the field index of `field` now and keeps it (never dropped for less used ones), for a declared index. */
  async ensureIndex(className: string, field: string): Promise<void> {
    let objects = this.#classes.get(className);
    if (!objects) this.#classes.set(className, (objects = new ClassObjects(this.#byId)));
    objects.pinIndex(field);
  }

  async classNames(): Promise<string[]> {
    return [...this.#classes].filter(([, objects]) => objects.select({ className: '', limit: 0 }).total > 0).map(([name]) => name);
  }

  async classCounts(): Promise<ClassCount[]> {
    return [...this.#classes].filter(([, objects]) => objects.live > 0).map(([className, objects]) => ({ className, count: objects.live }));
  }

  async referencing(id: string, query: ReferencingQuery = {}): Promise<FindResult> {
    const holders = [...(this.#referrers.get(id) ?? [])].sort((a, b) => (a.className === b.className ? a.position - b.position : a.className < b.className ? -1 : 1));
    const test = query.where === undefined ? undefined : compileWhere(query.where, this.#lookup);
    const matching = test ? holders.filter((entry) => test(entry.fields, entry)) : holders;
    const offset = Math.max(0, query.offset ?? 0);
    const limit = Math.max(0, query.limit ?? Infinity);
    return { objects: matching.slice(offset, offset + limit).map(copy), total: matching.length };
  }

  #refer(entry: Entry, on: boolean): void {
    for (const id of referencedIds(entry.fields)) {
      let holders = this.#referrers.get(id);
      if (on) {
        if (!holders) this.#referrers.set(id, (holders = new Set()));
        holders.add(entry);
      } else if (holders) {
        holders.delete(entry);
        if (holders.size === 0) this.#referrers.delete(id);
      }
    }
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
   * `stored.fields` (no copy). For stores built on this one, such as the file store replaying its journal.
   */
  load(stored: StoredObject): StoredObject {
    const existing = this.#byId.get(stored.id);
    if (existing && existing.className === stored.className) {
      // a replaced object keeps its place in creation order
      this.#refer(existing, false);
      this.#classes.get(existing.className)!.replace(existing, stored.storeTime, stored.fields);
      this.#refer(existing, true);
      return existing;
    }
    if (existing) this.remove(existing.id);
    const entry = new Entry(stored.id, stored.className, stored.storeTime, stored.fields);
    this.#byId.set(entry.id, entry);
    let objects = this.#classes.get(entry.className);
    if (!objects) this.#classes.set(entry.className, (objects = new ClassObjects(this.#byId)));
    objects.append(entry);
    this.#refer(entry, true);
    return entry;
  }

  /** Every object, class by class, each class in creation order; not copies (read, do not change). */
  *objects(): IterableIterator<StoredObject> {
    for (const objects of this.#classes.values()) yield* objects.entries();
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
    this.#refer(found, false);
    const objects = this.#classes.get(found.className)!;
    objects.remove(found);
    if (objects.live === 0) this.#classes.delete(found.className);
    return true;
  }
}

/** A stored object, with its place in its class's creation order. */
class Entry implements StoredObject {
  position = 0;
  /** This version as readers get it (`getNow`): frozen, made on its first read, dropped by the next write. */
  snapshot: StoredObject | undefined = undefined;
  constructor(
    readonly id: string,
    readonly className: string,
    public storeTime: number,
    public fields: Fields,
  ) {}
}

/** Slots per block of the live-count table that finds the k-th live object past holes. */
const BLOCK_BITS = 10;
/** An `$or` of at most this many branches is answered from the branches' indexes. */
const MAX_UNION_BRANCHES = 64;
/** Indexes kept per class and kind; the least recently used one is dropped beyond this. */
const MAX_INDEXES = 16;
/** A filtered, ordered listing with at most this many candidates sorts them instead of walking an order index. */
const SORT_CANDIDATES_UP_TO = 2048;
/** `$and`s nested deeper than this are left to the test (which answers them as `compileWhere` does). */
const MAX_NESTING = 16;

/** One member of a conjunction: a field and its condition, or a `WhereNodes` member and its operand. */
type Term = readonly [name: string, condition: unknown];
/** Entries that include every match of a filter, in creation order; `exact`: only matches. */
type Candidates = { entries: readonly Entry[]; exact: boolean };

/**
 * The members of the conjunction `where` is, its `$and`s flattened (`{ $and: [{}, { $oids: [...] }] }`,
 * as a folder or a `self` listing narrows a filter, is one term); `undefined` for what is not a filter
 * object (the test answers it).
 */
function termsOf(where: unknown, depth = 0): Term[] | undefined {
  if (typeof where !== 'object' || where === null || Array.isArray(where)) return undefined;
  const terms: Term[] = [];
  for (const [name, condition] of Object.entries(where)) {
    const flat = name === '$and' && Array.isArray(condition) && depth < MAX_NESTING ? condition.map((item) => termsOf(item, depth + 1)) : undefined;
    if (flat?.every((items) => items !== undefined)) terms.push(...flat.flat());
    else terms.push([name, condition]);
  }
  return terms;
}

const RANGE_OPERATORS = new Set(['$gt', '$gte', '$lt', '$lte']);

/**
 * A condition's operators when all are range operators with operands of one kind, numbers (not NaN)
 * or strings: such a condition selects a run of the field's order index.
 */
function rangeOf(condition: unknown): Array<[string, number | string]> | undefined {
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) return undefined;
  const operators = Object.entries(condition);
  const kind = typeof operators[0]?.[1];
  if (kind !== 'number' && kind !== 'string') return undefined;
  const valid = ([operator, operand]: [string, unknown]) => RANGE_OPERATORS.has(operator) && typeof operand === kind && !Number.isNaN(operand);
  return operators.every(valid) ? (operators as Array<[string, number | string]>) : undefined;
}

/** Whether `condition` is an operator object holding `operator` and nothing else. */
function isOnly<K extends string>(condition: unknown, operator: K): condition is Record<K, unknown> {
  return typeof condition === 'object' && condition !== null && Object.keys(condition).length === 1 && operator in condition;
}

/**
 * Calls `visit` on each entry of `list` (holes skipped), backwards with `reverse`, until it answers
 * false.
 */
function walk(list: readonly (Entry | undefined)[], reverse: boolean | undefined, visit: (entry: Entry) => boolean): void {
  const step = reverse ? -1 : 1;
  for (let i = reverse ? list.length - 1 : 0; i >= 0 && i < list.length; i += step) {
    const entry = list[i];
    if (entry && !visit(entry)) return;
  }
}

/** One class's objects: creation order, field indexes and order indexes. */
class ClassObjects {
  /** Entries in creation order; `undefined` where one was removed (until compaction). */
  #slots: Array<Entry | undefined> = [];
  /** Live entries per block of slots. */
  #blockLive: number[] = [];
  live = 0;
  readonly #fieldIndexes = new Map<string, FieldIndex>();
  readonly #presenceIndexes = new Map<string, PresenceIndex>();
  readonly #orderIndexes = new Map<string, OrderIndex>();
  /** Field indexes a declaration asks for (`ensureIndex`): built at once, never dropped. */
  readonly #pinned = new Map<string, FieldIndex>();

  pinIndex(field: string): void {
    if (!this.#pinned.has(field)) this.#pinned.set(field, this.#fieldIndexes.get(field) ?? new FieldIndex(field, this.entries()));
    this.#fieldIndexes.delete(field);
  }

  /** Every stored object by id (the store's), for `$oids`. */
  readonly #byId: ReadonlyMap<string, Entry>;

  constructor(byId: ReadonlyMap<string, Entry>) {
    this.#byId = byId;
  }

  append(entry: Entry): void {
    entry.position = this.#slots.length;
    this.#slots.push(entry);
    const block = entry.position >> BLOCK_BITS;
    this.#blockLive[block] = (this.#blockLive[block] ?? 0) + 1;
    this.live++;
    for (const index of this.#indexes()) index.add(entry);
  }

  replace(entry: Entry, storeTime: number, fields: Fields): void {
    const indexes = [...this.#indexes()];
    for (const index of indexes) index.remove(entry);
    entry.storeTime = storeTime;
    entry.fields = fields;
    entry.snapshot = undefined;
    for (const index of indexes) index.add(entry);
  }

  remove(entry: Entry): void {
    for (const index of this.#indexes()) index.remove(entry);
    this.#slots[entry.position] = undefined;
    this.#blockLive[entry.position >> BLOCK_BITS]!--;
    this.live--;
    const holes = this.#slots.length - this.live;
    if (holes > 1024 && holes > this.live) this.#compact();
  }

  *entries(): IterableIterator<Entry> {
    for (const entry of this.#slots) if (entry) yield entry;
  }

  *#indexes(): IterableIterator<FieldIndex | PresenceIndex | OrderIndex> {
    yield* this.#pinned.values();
    yield* this.#fieldIndexes.values();
    yield* this.#presenceIndexes.values();
    yield* this.#orderIndexes.values();
  }

  /** Drops the holes; entries keep their relative order, so every index stays sorted. */
  #compact(): void {
    const slots: Entry[] = [];
    for (const entry of this.#slots) {
      if (!entry) continue;
      entry.position = slots.length;
      slots.push(entry);
    }
    this.#slots = slots;
    this.#blockLive = [];
    for (let block = 0; block << BLOCK_BITS < slots.length; block++) {
      this.#blockLive.push(Math.min(1 << BLOCK_BITS, slots.length - (block << BLOCK_BITS)));
    }
  }

  /** The matching entries of one page, and how many match in all. */
  select(query: FindQuery, lookup?: Lookup): { entries: Entry[]; total: number } {
    const offset = Math.max(0, query.offset ?? 0);
    const limit = Math.max(0, query.limit ?? Infinity);
    const where = query.where ?? {};
    const { candidates, exact, total } = this.#plan(termsOf(where));
    if (total !== undefined && limit === 0) return { entries: [], total };
    const compiled = exact ? undefined : compileWhere(where, lookup);
    const test = compiled && ((entry: Entry) => compiled(entry.fields, entry));
    const page = new Page(offset, limit);

    if (query.orderBy && (!candidates || candidates.length > SORT_CANDIDATES_UP_TO)) {
      const ordered = this.#orderIndex(query.orderBy).entries;
      if (!test && !candidates) return { entries: sliceOf(ordered, offset, limit, query.reverse), total: total! };
      // walk the order index, testing each entry; stop early when the total is already known
      const member = test ?? ((entry: Entry) => compileWhere(where, lookup)(entry.fields, entry));
      walk(ordered, query.reverse, (entry) => !member(entry) || page.add(entry) || total === undefined);
      return { entries: page.entries, total: total ?? page.seen };
    }

    let source: readonly (Entry | undefined)[];
    if (candidates) {
      source = candidates;
      if (query.orderBy) source = sortedCopy(candidates, query.orderBy);
    } else {
      if (exact) return { entries: this.#creationPage(offset, limit, query.reverse), total: total! };
      source = this.#slots;
    }
    if (!test) return { entries: sliceOf(source as Entry[], offset, limit, query.reverse), total: source.length };
    walk(source, query.reverse, (entry) => !test(entry) || page.add(entry) || total === undefined);
    return { entries: page.entries, total: total ?? page.seen };
  }

  /**
   * How to answer the conjunction `terms` without testing every entry of the class: the candidates of
   * its most selective indexed term (creation order; absent: the whole class), whether they are exactly
   * the matches, and the number of matches where it is known without walking (then a walk stops after
   * the page).
   */
  #plan(terms: Term[] | undefined): { candidates?: readonly Entry[]; exact: boolean; total?: number } {
    if (terms?.length === 0) return { exact: true, total: this.live };
    if (terms?.length === 1 && !terms[0]![0].startsWith('$')) {
      const [name, condition] = terms[0]!;
      // the objects without a field: the class less those with it (an empty or small index)
      if (isOnly(condition, '$exists') && condition.$exists === false) return { exact: false, total: this.live - this.#presenceIndex(name).entries.length };
      // a range too large to put in creation order: counted from the order index, the page found by walking
      const run = this.#range(name, condition);
      if (run && run.end - run.start > SORT_CANDIDATES_UP_TO) return { exact: false, total: run.end - run.start };
    }
    const best = terms && this.#fromIndex(terms);
    if (terms?.length === 1 && best?.exact) return { candidates: best.entries, exact: true, total: best.entries.length };
    return { candidates: best?.entries, exact: false };
  }

  /**
   * A range condition (`$gt`, `$gte`, `$lt`, `$lte`, all with numbers or all with strings) as the run
   * `[start, end)` of the field's ascending order index that it selects: exactly its matches, in value order.
   */
  #range(name: string, condition: unknown): { ordered: readonly Entry[]; start: number; end: number } | undefined {
    const bounds = rangeOf(condition);
    if (!bounds) return undefined;
    const ordered = this.#orderIndex({ field: name }).entries;
    const first = (before: (value: FieldValue | undefined) => boolean) => lowerBound(ordered, (entry) => before(fieldValue(entry.fields, name)));
    const kind = bounds[0]![1];
    // the values of the operands' kind, then narrowed by each operator
    let start = first((value) => compareFieldValues(value, typeof kind === 'number' ? -Infinity : '') < 0);
    let end = first(typeof kind === 'number' ? (value) => compareFieldValues(value, Infinity) <= 0 : (value) => typeof value === 'string' || compareFieldValues(value, '') < 0);
    for (const [operator, operand] of bounds) {
      if (operator === '$gt') start = Math.max(start, first((value) => compareFieldValues(value, operand) <= 0));
      else if (operator === '$gte') start = Math.max(start, first((value) => compareFieldValues(value, operand) < 0));
      else if (operator === '$lt') end = Math.min(end, first((value) => compareFieldValues(value, operand) < 0));
      else end = Math.min(end, first((value) => compareFieldValues(value, operand) <= 0));
    }
    return { ordered, start, end: Math.max(start, end) };
  }

  /** A page of the whole class in creation order, found past holes by counting live entries per block. */
  #creationPage(offset: number, limit: number, reverse = false): Entry[] {
    const out: Entry[] = [];
    if (offset >= this.live || limit === 0) return out;
    const slots = this.#slots;
    let i = this.#positionOf(reverse ? this.live - 1 - offset : offset);
    for (const step = reverse ? -1 : 1; i >= 0 && i < slots.length && out.length < limit; i += step) {
      const entry = slots[i];
      if (entry) out.push(entry);
    }
    return out;
  }

  /** The slot of the `k`-th live entry (0-based). */
  #positionOf(k: number): number {
    if (this.live === this.#slots.length) return k;
    let block = 0;
    while (k >= this.#blockLive[block]!) k -= this.#blockLive[block++]!;
    for (let i = block << BLOCK_BITS; ; i++) {
      if (this.#slots[i] && k-- === 0) return i;
    }
  }

  /**
   * Candidates from the index of the most selective term of a conjunction: an equality, reference,
   * `$in` or `$exists: true` condition, `$oids`, or an `$or` of such terms; in creation order, `exact`
   * when that term is all its field (or node) asks.
   */
  #fromIndex(terms: readonly Term[]): Candidates | undefined {
    let best: Candidates | undefined;
    for (const [name, condition] of terms) {
      const found = name === '$or' ? this.#fromEither(condition) : name === '$oids' ? this.#withIds(condition) : name.startsWith('$') ? undefined : this.#forField(name, condition);
      if (found && (!best || found.entries.length < best.entries.length)) best = found;
    }
    return best;
  }

  /** Candidates of one field's condition, from its field or presence index. */
  #forField(name: string, condition: unknown): Candidates | undefined {
    if (isScalar(condition)) return { entries: this.#fieldIndex(name).withValue(condition), exact: true };
    if (isRef(condition)) return { entries: this.#fieldIndex(name).referencing(condition.$ref), exact: true };
    if (typeof condition !== 'object' || condition === null) return undefined;
    const exact = Object.keys(condition).length === 1;
    if ('$in' in condition) {
      const values = condition.$in;
      if (Array.isArray(values) && values.every(isScalar)) return { entries: this.#fieldIndex(name).withAnyOf(values), exact };
    }
    if ('$eq' in condition && isScalar(condition.$eq)) {
      // query text's "=": the value, or (a string) a reference to the object with that id
      const index = this.#fieldIndex(name);
      const value = condition.$eq;
      const lists = [index.withValue(value), typeof value === 'string' ? index.referencing(value) : NONE].filter((list) => list.length > 0);
      return { entries: lists.length <= 1 ? (lists[0] ?? NONE) : lists.flat().sort(byPosition), exact };
    }
    if ('$exists' in condition && condition.$exists === true) return { entries: this.#presenceIndex(name).entries, exact };
    const run = this.#range(name, condition);
    if (run && run.end - run.start <= SORT_CANDIDATES_UP_TO) return { entries: run.ordered.slice(run.start, run.end).sort(byPosition), exact: true };
    return undefined;
  }

  /** `$oids`: the entries of this class with those ids (an operand of another shape is left to the test). */
  #withIds(ids: unknown): Candidates | undefined {
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) return undefined;
    const entries = new Set<Entry>();
    for (const id of ids) {
      const entry = this.#byId.get(id);
      if (entry && this.#slots[entry.position] === entry) entries.add(entry);
    }
    return { entries: [...entries].sort(byPosition), exact: true };
  }

  /**
   * Candidates of an `$or` whose every branch an index answers (query text's `City = A or City = B`):
   * the union of the branches' candidates, in creation order; `exact` when every branch is.
   */
  #fromEither(branches: unknown): Candidates | undefined {
    if (!Array.isArray(branches) || branches.length === 0 || branches.length > MAX_UNION_BRANCHES) return undefined;
    const union = new Set<Entry>();
    let exact = true;
    for (const branch of branches) {
      const terms = termsOf(branch, MAX_NESTING);
      // a nested `$or` is left to the test (each level would multiply the branches)
      if (!terms || terms.some(([name]) => name === '$or')) return undefined;
      const found = this.#fromIndex(terms);
      if (!found) return undefined;
      exact &&= found.exact && terms.length === 1;
      for (const entry of found.entries) union.add(entry);
    }
    return { entries: [...union].sort(byPosition), exact };
  }

  #fieldIndex(name: string): FieldIndex {
    return this.#pinned.get(name) ?? recentlyUsed(this.#fieldIndexes, name, () => new FieldIndex(name, this.entries()));
  }

  #presenceIndex(name: string): PresenceIndex {
    return recentlyUsed(this.#presenceIndexes, name, () => new PresenceIndex(name, this.entries()));
  }

  #orderIndex(orderBy: OrderBy): OrderIndex {
    const key = `${orderBy.descending ? '-' : '+'}${orderBy.field}`;
    return recentlyUsed(this.#orderIndexes, key, () => new OrderIndex(orderBy, this.entries()));
  }
}

/** `map.get(key)`, made the most recently used, or a new one (dropping the least recently used). */
function recentlyUsed<T>(map: Map<string, T>, key: string, create: () => T): T {
  let value = map.get(key);
  if (value) map.delete(key);
  else {
    value = create();
    if (map.size >= MAX_INDEXES) map.delete(map.keys().next().value!);
  }
  map.set(key, value);
  return value;
}

/** Collects the entries of one page while counting every entry offered. */
class Page {
  readonly entries: Entry[] = [];
  seen = 0;
  constructor(
    readonly offset: number,
    readonly limit: number,
  ) {}
  /** Offers the next match; answers whether the page still takes more. */
  add(entry: Entry): boolean {
    const at = this.seen++;
    if (at >= this.offset && this.entries.length < this.limit) this.entries.push(entry);
    return this.entries.length < this.limit;
  }
}

function sliceOf(entries: readonly Entry[], offset: number, limit: number, reverse = false): Entry[] {
  const end = Math.min(entries.length, offset + limit);
  if (!reverse) return entries.slice(offset, end);
  const out: Entry[] = [];
  for (let i = offset; i < end; i++) out.push(entries[entries.length - 1 - i]!);
  return out;
}

/** Entries sorted by `orderBy`, ties in creation order (the input's order: the sort is stable). */
function sortedCopy(entries: readonly Entry[], orderBy: OrderBy): Entry[] {
  const compare = orderComparatorOf(orderBy);
  return [...entries].sort(compare);
}

/** Orders entries by `orderBy`, then by creation order: a total order, so it can be searched. */
function orderComparatorOf(orderBy: OrderBy): (a: Entry, b: Entry) => number {
  const { field } = orderBy;
  const sign = orderBy.descending ? -1 : 1;
  return (a, b) => sign * compareFieldValues(fieldValue(a.fields, field), fieldValue(b.fields, field)) || a.position - b.position;
}

const NONE: readonly Entry[] = Object.freeze([]);

/** One field's values and references, each with its entries in creation order. */
class FieldIndex {
  readonly #values = new Map<Scalar, Entry[]>();
  readonly #refs = new Map<string, Entry[]>();

  constructor(
    readonly field: string,
    entries: Iterable<Entry>,
  ) {
    for (const entry of entries) this.add(entry);
  }

  withValue(value: Scalar): readonly Entry[] {
    return this.#values.get(value) ?? NONE;
  }

  referencing(id: string): readonly Entry[] {
    return this.#refs.get(id) ?? NONE;
  }

  /** Entries holding any of `values`, in creation order (a field holds one value: the lists are disjoint). */
  withAnyOf(values: readonly Scalar[]): readonly Entry[] {
    const lists = [...new Set(values)].map((value) => this.withValue(value)).filter((list) => list.length > 0);
    if (lists.length <= 1) return lists[0] ?? NONE;
    return lists.flat().sort(byPosition);
  }

  add(entry: Entry): void {
    this.#each(entry, (map, key) => {
      const list = map.get(key);
      if (list) insertByPosition(list, entry);
      else map.set(key, [entry]);
    });
  }

  remove(entry: Entry): void {
    this.#each(entry, (map, key) => {
      const list = map.get(key)!;
      list.splice(searchByPosition(list, entry.position), 1);
      if (list.length === 0) map.delete(key);
    });
  }

  /** Calls `visit` once per key the entry is indexed under. */
  #each(entry: Entry, visit: <K>(map: Map<K, Entry[]>, key: K) => void): void {
    const value: FieldValue | undefined = fieldValue(entry.fields, this.field);
    if (isScalar(value)) visit(this.#values, value);
    else {
      if (isRef(value)) visit(this.#refs, value.$ref);
      if (isSet(value)) {
        for (const id of new Set(value.$set)) if (typeof id === 'string' && !(isRef(value) && id === value.$ref)) visit(this.#refs, id);
      }
    }
  }
}

/** The entries holding one field (any value, `null` included), in creation order: `$exists`. */
class PresenceIndex {
  readonly entries: Entry[] = [];

  constructor(
    readonly field: string,
    entries: Iterable<Entry>,
  ) {
    for (const entry of entries) this.add(entry);
  }

  add(entry: Entry): void {
    if (Object.hasOwn(entry.fields, this.field)) insertByPosition(this.entries, entry);
  }

  remove(entry: Entry): void {
    if (Object.hasOwn(entry.fields, this.field)) this.entries.splice(searchByPosition(this.entries, entry.position), 1);
  }
}

/** Every entry of a class sorted by one `OrderBy`, ties in creation order. */
class OrderIndex {
  readonly entries: Entry[];
  readonly #compare: (a: Entry, b: Entry) => number;

  constructor(orderBy: OrderBy, entries: Iterable<Entry>) {
    this.#compare = orderComparatorOf(orderBy);
    this.entries = [...entries].sort(this.#compare);
  }

  add(entry: Entry): void {
    const last = this.entries[this.entries.length - 1];
    if (!last || this.#compare(last, entry) < 0) this.entries.push(entry);
    else this.entries.splice(this.#search(entry), 0, entry);
  }

  remove(entry: Entry): void {
    this.entries.splice(this.#search(entry), 1);
  }

  /** Where `entry` is or belongs (the comparator is a total order: positions are unique). */
  #search(entry: Entry): number {
    return lowerBound(this.entries, (other) => this.#compare(other, entry) < 0);
  }
}

const byPosition = (a: Entry, b: Entry) => a.position - b.position;

/** The first index in the sorted `list` whose item is not `before` the one looked for. */
function lowerBound(list: readonly Entry[], before: (item: Entry) => boolean): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (before(list[middle]!)) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Where an entry at `position` is or belongs in a list sorted by position. */
function searchByPosition(list: readonly Entry[], position: number): number {
  return lowerBound(list, (item) => item.position < position);
}

function insertByPosition(list: Entry[], entry: Entry): void {
  const last = list[list.length - 1];
  if (!last || last.position < entry.position) list.push(entry);
  else list.splice(searchByPosition(list, entry.position), 0, entry);
}

/**
 * The entry's current version, frozen to its fields' last member. The store never changes fields it
 * holds (a write replaces them), so freezing them in place costs one walk per version, not a copy per
 * read; a reader that tried to change them would throw rather than change the store.
 */
function snapshotOf(entry: Entry): StoredObject {
  return (entry.snapshot ??= Object.freeze({ id: entry.id, className: entry.className, storeTime: entry.storeTime, fields: deepFreeze(entry.fields) }));
}

function deepFreeze<T extends FieldValue | Fields>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const item of Object.values(value)) deepFreeze(item);
  return Object.freeze(value);
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

/**
 * The copy the store keeps, in the least memory: as `JSON.parse` builds objects, each holds its members
 * inside itself with no spare slots (one grown member by member from `{}` has a separate property array
 * beyond four members, and room for four even with one: about 1.5 times the bytes), and it shares short
 * strings (`JSON.parse` interns them). Fields are JSON values, so the text holds all of them.
 */
function compactCopy(fields: Fields): Fields {
  return JSON.parse(JSON.stringify(fields)) as Fields;
}
