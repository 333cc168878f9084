import { ApiError } from '../http/errors.js';
import { isRef, isSet, type FieldValue, type ObjectStore, type StoredObject } from '../storage/types.js';

export type JsonObject = Record<string, unknown>;

/** Which objects a session may read (the access rules); the others serialize as metadata only. */
export interface Reader {
  readable(object: StoredObject): Promise<boolean>;
}

/** A set as serialized (PROTOCOL.md 6.1). */
export interface SerializedSet {
  '~Count': number;
  '~UnfilteredCount': number;
  '~Elements': JsonObject[];
}

/** Hook that may replace an object's serialization (the `xApi_BuildSerialization` macro). */
export type SerializationHook = (object: StoredObject, json: JsonObject) => Promise<JsonObject>;

/** `YYYYMMDDThhmmss+hh:mm` in UTC. */
export function formatStoreTime(epochMs: number): string {
  const iso = new Date(epochMs).toISOString(); // 2026-11-21T05:46:09.123Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}+00:00`;
}

/**
 * `formatStoreTime` with recently formatted times kept: objects keep their store time for long and
 * are read often, so most lookups hit; the cache is emptied when full, which bounds it without
 * bookkeeping.
 */
function cachedStoreTimes(size: number): (epochMs: number) => string {
  const texts = new Map<number, string>();
  return (epochMs) => {
    let text = texts.get(epochMs);
    if (text === undefined) {
      text = formatStoreTime(epochMs);
      if (texts.size >= size) texts.clear();
      texts.set(epochMs, text);
    }
    return text;
  };
}

export interface SerializerOptions {
  /** Nesting depth of referenced objects. */
  depth: number;
  /** Classes whose objects appear only as metadata (their fields may hold secrets). */
  internalClasses: ReadonlySet<string>;
  /** Formatted store times kept. */
  storeTimeCache: number;
}

/**
 * Turns stored objects into JSON. References are loaded level by level with one `getMany` per level
 * for all objects being serialized, nested in full down to `depth`, below that as metadata only.
 * Fields starting with `_` are internal and never serialized.
 */
export class Serializer {
  readonly #depth: number;
  readonly #internalClasses: ReadonlySet<string>;
  readonly #storeTime: (epochMs: number) => string;

  constructor(
    private readonly store: ObjectStore,
    options: SerializerOptions,
    /** The `xApi_BuildSerialization` hook, looked up per serialization (macros change at run time). */
    private readonly hook: () => SerializationHook | undefined = () => undefined,
  ) {
    this.#depth = options.depth;
    this.#internalClasses = options.internalClasses;
    this.#storeTime = cachedStoreTimes(options.storeTimeCache);
  }

  /** The three metadata members of an object. */
  metadata(object: StoredObject): JsonObject {
    return { '~ClassName': object.className, '~ObjectID': object.id, '~StoreTime': this.#storeTime(object.storeTime) };
  }

  /** With a `reader`, referenced objects it may not read keep only their metadata (at any depth). */
  async object(object: StoredObject, reader?: Reader): Promise<JsonObject> {
    return (await this.#level([object], 0, this.hook(), reader))[0]!;
  }

  /**
   * A value (a macro's result) with every stored object in it, at any depth, serialized as `GET` would
   * serve it, and every other member whose name starts with `_` left out: so nothing internal reaches
   * a client, whatever shape the macro gave it. A value nested deeper than `MAX_EMBEDDING_DEPTH` (or
   * one that contains itself) is refused with a bare `500`, never passed through.
   */
  async embedded(value: unknown, reader?: Reader, depth = 0): Promise<unknown> {
    if (depth === 0 && !needsEmbedding(value, 0)) return value;
    if (!isWalked(value)) return value;
    if (isStoredObject(value)) return this.object(value, reader);
    if (Array.isArray(value)) return Promise.all(value.map((item) => this.embedded(item, reader, depth + 1)));
    const out: JsonObject = {};
    for (const [name, item] of Object.entries(value)) if (!name.startsWith('_')) out[name] = await this.embedded(item, reader, depth + 1);
    return out;
  }

  async set(objects: StoredObject[], unfilteredCount: number, reader?: Reader): Promise<SerializedSet> {
    const elements = await this.#level(objects, 0, this.hook(), reader);
    return { '~Count': elements.length, '~UnfilteredCount': unfilteredCount, '~Elements': elements };
  }

  // Runs for every object read: no per-field arrays, and promises only where the store or a hook needs them.
  async #level(objects: StoredObject[], level: number, hook: SerializationHook | undefined, reader: Reader | undefined): Promise<JsonObject[]> {
    const hidden = reader ? await unreadable(objects, reader) : undefined;
    const shown = (object: StoredObject) => !this.#internalClasses.has(object.className) && !hidden?.has(object);
    // objects of internal classes stay metadata only: the hook does not see them
    const finish = (json: JsonObject[]) =>
      hook ? Promise.all(objects.map((object, i) => (shown(object) ? hook(object, json[i]!) : json[i]!))) : json;
    if (level > this.#depth) return finish(objects.map((object) => this.metadata(object)));
    const ids = new Set<string>();
    for (const object of objects) if (shown(object)) forVisible(object, (value) => collectRefs(value, ids));
    const nested = new Map<string, JsonObject>();
    if (ids.size > 0) {
      const loaded = await this.store.getMany([...ids]);
      const loadedJson = await this.#level(loaded, level + 1, hook, reader);
      for (let i = 0; i < loaded.length; i++) nested.set(loaded[i]!.id, loadedJson[i]!);
    }
    const json = objects.map((object) => {
      const out = this.metadata(object);
      if (shown(object)) {
        forVisible(object, (value, name) => {
          out[name] = resolve(value, nested);
        });
      }
      return out;
    });
    return finish(json);
  }
}

/** The objects a reader may not read (none of them is asked twice). */
async function unreadable(objects: StoredObject[], reader: Reader): Promise<Set<StoredObject>> {
  const answers = await Promise.all(objects.map((object) => reader.readable(object)));
  return new Set(objects.filter((_, i) => !answers[i]));
}

/** Deeper than this, a macro's result is sent as it is (JSON nesting of answers stays bounded). */
const MAX_EMBEDDING_DEPTH = 64;

/** A stored object as stores return them (any store's, so by shape). */
function isStoredObject(value: object): value is StoredObject {
  const { id, className, storeTime, fields } = value as Partial<StoredObject>;
  return typeof id === 'string' && typeof className === 'string' && typeof storeTime === 'number' && typeof fields === 'object' && fields !== null;
}

/** An object whose members JSON would serialize (not a value with its own `toJSON`, such as a Date). */
function isWalked(value: unknown): value is object {
  return typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/**
 * Whether a stored object or a member named `_...` sits anywhere in `value` (a synchronous walk, so
 * plain results cost no promises); throws a bare `500` past `MAX_EMBEDDING_DEPTH`.
 */
function needsEmbedding(value: unknown, depth: number): boolean {
  if (!isWalked(value)) return false;
  if (depth > MAX_EMBEDDING_DEPTH) throw new ApiError('500', 'unexpected server error');
  if (isStoredObject(value)) return true;
  if (Array.isArray(value)) return value.some((item) => needsEmbedding(item, depth + 1));
  let needed = false;
  for (const [name, item] of Object.entries(value)) if (name.startsWith('_') || needsEmbedding(item, depth + 1)) needed = true;
  return needed;
}

/** Calls `visit` with each serialized field (names starting with `_` are internal). */
function forVisible(object: StoredObject, visit: (value: FieldValue, name: string) => void): void {
  const { fields } = object;
  for (const name of Object.keys(fields)) if (!name.startsWith('_')) visit(fields[name]!, name);
}

function collectRefs(value: FieldValue, into: Set<string>): void {
  if (isRef(value)) into.add(value.$ref);
  else if (isSet(value)) for (const id of value.$set) into.add(id);
}

/** A reference to a missing object serializes as `null`; a set leaves such members out. */
function resolve(value: FieldValue, nested: Map<string, JsonObject>): unknown {
  if (isRef(value)) return nested.get(value.$ref) ?? null;
  if (isSet(value)) {
    const elements = value.$set.map((id) => nested.get(id)).filter((item): item is JsonObject => item !== undefined);
    return { '~Count': elements.length, '~UnfilteredCount': elements.length, '~Elements': elements };
  }
  return value;
}
