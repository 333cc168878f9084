import { isRef, isSet, type FieldValue, type ObjectStore, type StoredObject } from '../storage/types.js';

export type JsonObject = Record<string, unknown>;

/** A set as serialized (PROTOCOL.md 6.1). */
export interface SerializedSet {
  '~Count': number;
  '~UnfilteredCount': number;
  '~Elements': JsonObject[];
}

/** Hook that may replace an object's serialization (the `xApi_BuildSerialization` macro). */
export type SerializationHook = (object: StoredObject, json: JsonObject) => Promise<JsonObject>;

/**
 * Recently formatted store times. Objects keep their store time for long and are read often, so
 * most lookups hit; the cache is emptied when full, which bounds it without bookkeeping.
 */
const storeTimes = new Map<number, string>();
const STORE_TIME_CACHE = 10_000;

/** `YYYYMMDDThhmmss+hh:mm` in UTC. */
export function formatStoreTime(epochMs: number): string {
  let text = storeTimes.get(epochMs);
  if (text === undefined) {
    const iso = new Date(epochMs).toISOString(); // 2026-11-21T05:46:09.123Z
    text = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}+00:00`;
    if (storeTimes.size >= STORE_TIME_CACHE) storeTimes.clear();
    storeTimes.set(epochMs, text);
  }
  return text;
}

export function metadata(object: StoredObject): JsonObject {
  return { '~ClassName': object.className, '~ObjectID': object.id, '~StoreTime': formatStoreTime(object.storeTime) };
}

/**
 * Turns stored objects into JSON. References are loaded level by level with one `getMany` per level
 * for all objects being serialized, nested in full down to `depth`, below that as metadata only.
 * Fields starting with `_` are internal and never serialized.
 */
export class Serializer {
  constructor(
    private readonly store: ObjectStore,
    private readonly depth: number,
    private readonly hook?: () => SerializationHook | undefined,
    /** Classes whose objects appear only as metadata (their fields may hold secrets). */
    private readonly internalClasses: ReadonlySet<string> = new Set(),
  ) {}

  async object(object: StoredObject): Promise<JsonObject> {
    return (await this.#level([object], 0, this.hook?.()))[0]!;
  }

  async set(objects: StoredObject[], unfilteredCount: number): Promise<SerializedSet> {
    const elements = await this.#level(objects, 0, this.hook?.());
    return { '~Count': elements.length, '~UnfilteredCount': unfilteredCount, '~Elements': elements };
  }

  // Runs for every object read: no per-field arrays, and promises only where the store or a hook needs them.
  async #level(objects: StoredObject[], level: number, hook: SerializationHook | undefined): Promise<JsonObject[]> {
    const shown = (object: StoredObject) => !this.internalClasses.has(object.className);
    // objects of internal classes stay metadata only: the hook does not see them
    const finish = (json: JsonObject[]) =>
      hook ? Promise.all(objects.map((object, i) => (shown(object) ? hook(object, json[i]!) : json[i]!))) : json;
    if (level > this.depth) return finish(objects.map(metadata));
    const ids = new Set<string>();
    for (const object of objects) if (shown(object)) forVisible(object, (value) => collectRefs(value, ids));
    const nested = new Map<string, JsonObject>();
    if (ids.size > 0) {
      const loaded = await this.store.getMany([...ids]);
      const loadedJson = await this.#level(loaded, level + 1, hook);
      for (let i = 0; i < loaded.length; i++) nested.set(loaded[i]!.id, loadedJson[i]!);
    }
    const json = objects.map((object) => {
      const out = metadata(object);
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
