import { ApiError } from '../../http/errors.js';
import type { JsonObject } from '../../http/json.js';
import { all, andThen, type MaybePromise } from '../../maybe.js';
import { isRef, isSet, type FieldValue, type ObjectStore, type StoredObject } from '../../storage/types.js';

export type { JsonObject };

/** Which objects a session may read (the access rules); the others serialize as metadata only. */
export interface Reader {
  readable(object: StoredObject): MaybePromise<boolean>;
  /**
   * Optional: a synchronous answer for the objects of a class where the class rules alone decide
   * (`true`/`false`), `undefined` for an object that must be asked through `readable` (per-object
   * security, a host `authorize`); no function when every object must be asked.
   */
  classReader?(className: string): MaybePromise<((object: StoredObject) => boolean | undefined) | undefined>;
}

/** A set as serialized (PROTOCOL.md 6.1). */
export interface SerializedSet {
  '~Count': number;
  '~UnfilteredCount': number;
  '~Elements': JsonObject[];
}

/** Hook that may replace an object's serialization (the `xApi_BuildSerialization` macro). */
export type SerializationHook = (object: StoredObject, json: JsonObject) => Promise<JsonObject>;

/** What `~SecurityRights` asks (the request's `Guard` answers it; PROTOCOL.md 6.1, 6.7). */
export interface Rights extends Reader {
  may(action: 'read' | 'update' | 'create' | 'delete' | 'security', className: string, object?: StoredObject): Promise<boolean>;
}

/** A page of a set field (`fieldCustom` of a custom serialization; `page` 0-based). */
export interface SetPage {
  page: number;
  perPage: number;
}

/** The host's field lists per class and style (`objects.serialization.styles`). */
export type SerializationStyle = 'preview' | 'detailview';
export type SerializationStyles = Readonly<Record<string, Partial<Record<SerializationStyle, readonly string[]>>>>;

/** How the objects of an answer are shaped: the `serialization` parameter, parsed (PROTOCOL.md 6.1). */
export type SerializationShape =
  | { readonly type: 'full' }
  | { readonly type: 'empty' }
  | { readonly type: 'oid' }
  | { readonly type: 'custom'; readonly fieldList: readonly string[]; readonly fieldCustom: Readonly<Record<string, SetPage>> }
  | { readonly type: 'class'; readonly style?: SerializationStyle; readonly classes: Readonly<Record<string, Serialization>> }
  | { readonly type: 'macro'; readonly macro: string };
/** A shape and its flags: `getSize` adds `~Size`, `securityRights` adds `~SecurityRights`. */
export type Serialization = SerializationShape & { readonly getSize?: boolean; readonly securityRights?: boolean };

const STYLES: readonly SerializationStyle[] = ['preview', 'detailview'];

/**
 * The `objects.serialization.styles` option, checked at start-up: class names, `preview` and
 * `detailview`, lists of field names (never `_` ones, which are never served).
 */
export function serializationStyles(styles: SerializationStyles = {}): SerializationStyles {
  const what = 'objects.serialization.styles';
  if (typeof styles !== 'object' || styles === null || Array.isArray(styles)) throw new Error(`${what} must map class names to {preview, detailview} field lists`);
  const checked: Record<string, Partial<Record<SerializationStyle, readonly string[]>>> = Object.create(null);
  for (const [className, byStyle] of Object.entries(styles)) {
    if (!/^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(className)) throw new Error(`${what}: ${className} is not a class name`);
    if (typeof byStyle !== 'object' || byStyle === null || Array.isArray(byStyle)) throw new Error(`${what}.${className} must be {preview?, detailview?}`);
    checked[className] = {};
    for (const [style, fields] of Object.entries(byStyle)) {
      if (!(STYLES as readonly string[]).includes(style)) throw new Error(`${what}.${className}: ${style} is not a style (preview, detailview)`);
      if (!Array.isArray(fields) || !fields.every((name) => typeof name === 'string' && name !== '' && !name.startsWith('_'))) {
        throw new Error(`${what}.${className}.${style} must be a list of field names (not starting with _)`);
      }
      checked[className][style as SerializationStyle] = Object.freeze([...fields]);
    }
  }
  return checked;
}

/** The serializer's options from the `objects` option group (styles checked). */
export function serializerOptions(objects: { serializationDepth?: number; serialization?: { styles?: SerializationStyles } } = {}): Pick<SerializerOptions, 'depth' | 'styles'> {
  return { depth: objects.serializationDepth ?? 2, styles: serializationStyles(objects.serialization?.styles) };
}

/** The default. */
export const FULL: Serialization = Object.freeze({ type: 'full' });

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
  /** The file class, whose `Size` field `~Size` reports. Default `Document`. */
  fileClass?: string;
  /** Field lists per class and style for `class` serializations. */
  styles?: SerializationStyles;
}

/** `~SecurityRights` bits (bit n = 2^(n-1)): read, write, create in its class, delete, change its security. */
const RIGHT_BITS = [
  ['read', 1],
  ['update', 2],
  ['create', 4],
  ['delete', 8],
  ['security', 16],
] as const;

/**
 * Turns stored objects into JSON. References are loaded level by level with one `getMany` per level
 * for all objects being serialized, nested in full down to `depth`, below that as metadata only.
 * Fields starting with `_` are internal and never serialized.
 */
export class Serializer {
  readonly #depth: number;
  readonly #internalClasses: ReadonlySet<string>;
  readonly #storeTime: (epochMs: number) => string;
  readonly #fileClass: string;
  readonly #styles: SerializationStyles;
  readonly #keys = new QuotedNames();
  readonly #texts: ObjectTexts;

  constructor(
    private readonly store: ObjectStore,
    options: SerializerOptions,
    /** The `xApi_BuildSerialization` hook, looked up per serialization (macros change at run time). */
    private readonly hook: () => SerializationHook | undefined = () => undefined,
  ) {
    this.#depth = options.depth;
    this.#internalClasses = options.internalClasses;
    this.#storeTime = cachedStoreTimes(options.storeTimeCache);
    this.#fileClass = options.fileClass ?? 'Document';
    this.#styles = options.styles ?? {};
    this.#texts = new ObjectTexts(this.#keys, this.#storeTime);
  }

  /** The three metadata members of an object. */
  metadata(object: StoredObject): JsonObject {
    return { '~ClassName': object.className, '~ObjectID': object.id, '~StoreTime': this.#storeTime(object.storeTime) };
  }

  /**
   * With a `reader`, referenced objects it may not read keep only their metadata (at any depth).
   * `serialization` shapes the object itself (nested references are always served in full, to the
   * depth, as the reader may see them); a `macro` serialization needs `macro`, the named macro bound
   * to the request, and `securityRights` a reader that answers `may`.
   */
  async object(object: StoredObject, reader?: Reader | Rights, serialization: Serialization = FULL, macro?: SerializationHook): Promise<JsonObject> {
    if (serialization.type === 'full' && !serialization.getSize && !serialization.securityRights) return (await this.#level([object], 0, this.hook(), reader))[0]!;
    return (await this.#shaped([object], reader, serialization, macro))[0]!;
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

  /** A set whose elements are shaped as `object` shapes one. */
  async set(objects: StoredObject[], unfilteredCount: number, reader?: Reader | Rights, serialization: Serialization = FULL, macro?: SerializationHook): Promise<SerializedSet> {
    const elements =
      serialization.type === 'full' && !serialization.getSize && !serialization.securityRights
        ? await this.#level(objects, 0, this.hook(), reader)
        : await this.#shaped(objects, reader, serialization, macro);
    return { '~Count': elements.length, '~UnfilteredCount': unfilteredCount, '~Elements': elements };
  }

  /**
   * `object` as JSON text: the answers' one writer (`setText` shares it). A full serialization without
   * the `xApi_BuildSerialization` hook is written straight into the text, without a promise when the
   * store and the reader answer at once (`ObjectStore.getManyNow`, `Reader.classReader`); a
   * serialization a hook or macro shapes is the object form (`object`) stringified.
   */
  objectText(object: StoredObject, reader?: Reader | Rights, serialization: Serialization = FULL, macro?: SerializationHook): MaybePromise<string> {
    if (!this.#writesText(serialization)) return this.object(object, reader, serialization, macro).then((json) => JSON.stringify(json));
    return andThen(this.#levelText([object], 0, reader), (texts) => texts[0]!);
  }

  /** `set` as JSON text, its elements written as `objectText` writes one object. */
  setText(objects: StoredObject[], unfilteredCount: number, reader?: Reader | Rights, serialization: Serialization = FULL, macro?: SerializationHook): MaybePromise<string> {
    if (!this.#writesText(serialization)) return this.set(objects, unfilteredCount, reader, serialization, macro).then((set) => JSON.stringify(set));
    return andThen(
      this.#levelText(objects, 0, reader),
      (elements) => `{"~Count":${elements.length},"~UnfilteredCount":${JSON.stringify(unfilteredCount)},"~Elements":[${elements.join(',')}]}`,
    );
  }

  /** Whether the text writer serves `serialization`: a full one, without flags, while no serialization hook is registered. */
  #writesText(serialization: Serialization): boolean {
    return serialization.type === 'full' && !serialization.getSize && !serialization.securityRights && !this.hook();
  }

  /**
   * The JSON text of each object (the members and order of the object form, `#level`), its references
   * loaded level by level, one `getMany` per level for all of them, each referenced object written
   * once however many objects reference it.
   */
  #levelText(objects: StoredObject[], level: number, reader: Reader | undefined): MaybePromise<string[]> {
    return andThen(reader ? unreadable(objects, reader) : undefined, (hidden) => {
      const shown = (object: StoredObject) => !this.#internalClasses.has(object.className) && !hidden?.has(object);
      const texts = objects.map((object) => this.#texts.of(object));
      if (level > this.#depth) return texts.map((text) => text.hidden);
      const ids = new Set<string>();
      for (let i = 0; i < objects.length; i++) if (shown(objects[i]!)) for (const slot of texts[i]!.slots) collectRefs(slot, ids);
      if (ids.size === 0) return objectsText(objects, texts, shown, undefined);
      const wanted = [...ids];
      const loaded = this.store.getManyNow ? this.store.getManyNow(wanted) : this.store.getMany(wanted);
      return andThen(loaded, (loaded) =>
        andThen(this.#levelText(loaded, level + 1, reader), (loadedText) => {
          const nested = new Map<string, string>();
          for (let i = 0; i < loaded.length; i++) nested.set(loaded[i]!.id, loadedText[i]!);
          return objectsText(objects, texts, shown, nested);
        }),
      );
    });
  }

  /** The objects an answer serves (never nested ones), shaped as `serialization` says, flags added. */
  async #shaped(objects: StoredObject[], reader: Reader | Rights | undefined, serialization: Serialization, macro: SerializationHook | undefined): Promise<JsonObject[]> {
    const json = await this.#shapes(objects, reader, serialization, macro);
    if (serialization.getSize || serialization.securityRights) {
      await Promise.all(objects.map((object, i) => this.#addFlags(object, json[i]!, reader, serialization)));
    }
    return json;
  }

  async #shapes(objects: StoredObject[], reader: Reader | Rights | undefined, serialization: Serialization, macro: SerializationHook | undefined): Promise<JsonObject[]> {
    switch (serialization.type) {
      case 'full':
        return this.#level(objects, 0, this.hook(), reader);
      case 'empty':
        return objects.map((object) => this.metadata(object));
      case 'oid':
        return objects.map((object) => ({ '~ObjectID': object.id }));
      case 'custom':
        return this.#custom(objects, reader, serialization.fieldList, serialization.fieldCustom);
      case 'macro': {
        if (!macro) throw new Error(`serialization macro ${serialization.macro} was not bound`);
        const full = await this.#level(objects, 0, this.hook(), reader);
        // a macro may put stored objects into its answer: they are served as GET would serve them
        return Promise.all(objects.map(async (object, i) => (await this.embedded(await macro(object, full[i]!), reader)) as JsonObject));
      }
      case 'class':
        return this.#byClass(objects, reader, serialization, macro);
    }
  }

  /** Each class's objects shaped by its override, else its style's field list, else in full. */
  async #byClass(objects: StoredObject[], reader: Reader | Rights | undefined, serialization: Extract<SerializationShape, { type: 'class' }>, macro: SerializationHook | undefined): Promise<JsonObject[]> {
    const groups = new Map<string, number[]>();
    for (let i = 0; i < objects.length; i++) {
      const name = objects[i]!.className;
      const group = groups.get(name);
      if (group) group.push(i);
      else groups.set(name, [i]);
    }
    const out: JsonObject[] = new Array(objects.length);
    await Promise.all(
      [...groups].map(async ([className, indexes]) => {
        const members = indexes.map((i) => objects[i]!);
        const override = Object.hasOwn(serialization.classes, className) ? serialization.classes[className] : undefined;
        const fieldList = serialization.style && Object.hasOwn(this.#styles, className) ? this.#styles[className]![serialization.style] : undefined;
        const json = override
          ? await this.#shaped(members, reader, override, macro)
          : fieldList
            ? await this.#custom(members, reader, fieldList, {})
            : await this.#level(members, 0, this.hook(), reader);
        indexes.forEach((index, i) => (out[index] = json[i]!));
      }),
    );
    return out;
  }

  /**
   * The metadata and the listed fields (`_` names never), a set field of `pages` paged: only that
   * page's references are loaded, and its `~UnfilteredCount` is the number of members it holds.
   */
  async #custom(objects: StoredObject[], reader: Reader | undefined, fieldList: readonly string[], pages: Readonly<Record<string, SetPage>>): Promise<JsonObject[]> {
    const totals: Array<Map<string, number> | undefined> = [];
    const picked = objects.map((object, i): StoredObject => {
      const fields: StoredObject['fields'] = {};
      const pick = (name: string) => {
        if (name.startsWith('_') || !Object.hasOwn(object.fields, name) || Object.hasOwn(fields, name)) return;
        const value = object.fields[name]!;
        const page = Object.hasOwn(pages, name) ? pages[name] : undefined;
        if (page && isSet(value)) {
          (totals[i] ??= new Map()).set(name, value.$set.length);
          fields[name] = { $set: value.$set.slice(page.page * page.perPage, (page.page + 1) * page.perPage) };
        } else fields[name] = value;
      };
      for (const name of fieldList) pick(name);
      for (const name of Object.keys(pages)) pick(name);
      return { ...object, fields };
    });
    const json = await this.#level(picked, 0, undefined, reader, this.hook());
    totals.forEach((fields, i) => {
      for (const [name, total] of fields ?? []) (json[i]![name] as SerializedSet)['~UnfilteredCount'] = total;
    });
    return json;
  }

  async #addFlags(object: StoredObject, json: JsonObject, reader: Reader | Rights | undefined, serialization: Serialization): Promise<void> {
    if (serialization.getSize) {
      const size = object.className === this.#fileClass ? object.fields.Size : 0;
      json['~Size'] = typeof size === 'number' ? size : 0;
    }
    if (serialization.securityRights) {
      if (!reader || !('may' in reader)) throw new Error('~SecurityRights needs the request guard');
      const answers = await Promise.all(RIGHT_BITS.map(([action]) => reader.may(action, object.className, object)));
      json['~SecurityRights'] = RIGHT_BITS.reduce((bits, [, bit], i) => (answers[i] ? bits | bit : bits), 0);
    }
  }

  // Runs for every object read: no per-field arrays, and promises only where the store or a hook needs them.
  // `own` is the hook of this level's objects (the top level of a custom serialization has none), `hook` that of deeper ones.
  async #level(objects: StoredObject[], level: number, own: SerializationHook | undefined, reader: Reader | undefined, hook = own): Promise<JsonObject[]> {
    const hidden = reader ? await unreadable(objects, reader) : undefined;
    const shown = (object: StoredObject) => !this.#internalClasses.has(object.className) && !hidden?.has(object);
    // objects of internal classes stay metadata only: the hook does not see them
    // a hook is host code: it gets copies of a store's frozen objects (getNow), which it may change
    const finish = (json: JsonObject[]) =>
      own ? Promise.all(objects.map((object, i) => (shown(object) ? own(thawed(object), json[i]!) : json[i]!))) : json;
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
          out[name] = resolve(thawed(value), nested);
        });
      }
      return out;
    });
    return finish(json);
  }
}

/**
 * The objects a reader may not read (none of them is asked twice). Where the class rules alone decide
 * (`classReader`), an object is answered on the spot; the others are asked one by one.
 */
function unreadable(objects: StoredObject[], reader: Reader): MaybePromise<Set<StoredObject>> {
  if (!reader.classReader) return askedEach(objects, reader, new Set());
  const classes: string[] = [];
  for (const object of objects) if (!classes.includes(object.className)) classes.push(object.className);
  return andThen(all(classes.map((className) => reader.classReader!(className))), (readers) => {
    const hidden = new Set<StoredObject>();
    const asked: StoredObject[] = [];
    for (const object of objects) {
      const answer = readers[classes.indexOf(object.className)]?.(object);
      if (answer === undefined) asked.push(object);
      else if (!answer) hidden.add(object);
    }
    return asked.length === 0 ? hidden : askedEach(asked, reader, hidden);
  });
}

/** `hidden` with the objects of `asked` the reader answers it may not read (without a promise where it answers at once). */
function askedEach(asked: StoredObject[], reader: Reader, hidden: Set<StoredObject>): MaybePromise<Set<StoredObject>> {
  return andThen(all(asked.map((object) => reader.readable(object))), (answers) => {
    for (let i = 0; i < asked.length; i++) if (!answers[i]) hidden.add(asked[i]!);
    return hidden;
  });
}

/**
 * An object's JSON text in parts: the literal text between its reference and set fields (`slots`),
 * which each answer fills with the referenced objects' texts as that reader may see them.
 */
interface ObjectText {
  /** `slots.length + 1` pieces of text; the last ends with the object's closing brace. */
  literals: string[];
  slots: FieldValue[];
  /** The metadata alone, as objects the reader may not read and those below the depth are written. */
  hidden: string;
}

/** Texts kept at most: about a kilobyte each for a typical object, so some megabytes at most. */
const KEPT_TEXTS = 10_000;

/**
 * The texts of objects, kept for frozen ones (`ObjectStore.getNow`: a store's own copy of one version,
 * which never changes, so its text is never stale); others are written each time. At most
 * `KEPT_TEXTS`, all forgotten at once when full, as the store times are (no bookkeeping per read).
 */
class ObjectTexts {
  readonly #kept = new Map<StoredObject, ObjectText>();
  constructor(
    private readonly keys: QuotedNames,
    private readonly storeTime: (epochMs: number) => string,
  ) {}

  of(object: StoredObject): ObjectText {
    const frozen = Object.isFrozen(object);
    const kept = frozen ? this.#kept.get(object) : undefined;
    if (kept) return kept;
    const text = this.#written(object);
    if (frozen) {
      if (this.#kept.size >= KEPT_TEXTS) this.#kept.clear();
      this.#kept.set(object, text);
    }
    return text;
  }

  #written(object: StoredObject): ObjectText {
    const metadata = `${this.keys.classPrefix(object.className)}${JSON.stringify(object.id)},"~StoreTime":"${this.storeTime(object.storeTime)}"`;
    const literals: string[] = [];
    const slots: FieldValue[] = [];
    let literal = metadata;
    const { fields } = object;
    for (const name of Object.keys(fields)) {
      if (!visible(name)) continue;
      const value = fields[name]!;
      literal += `,${this.keys.text(name)}`;
      if (isRef(value) || isSet(value)) {
        literals.push(literal);
        slots.push(value);
        literal = '';
      } else literal += JSON.stringify(value);
    }
    literals.push(`${literal}}`);
    return { literals, slots, hidden: `${metadata}}` };
  }
}

/** Each object's text, its references written from `nested` (their texts by id). */
function objectsText(objects: StoredObject[], texts: ObjectText[], shown: (object: StoredObject) => boolean, nested: Map<string, string> | undefined): string[] {
  return objects.map((object, i) => {
    const { literals, slots, hidden } = texts[i]!;
    if (!shown(object)) return hidden;
    let text = literals[0]!;
    for (let slot = 0; slot < slots.length; slot++) text += resolveText(slots[slot]!, nested) + literals[slot + 1]!;
    return text;
  });
}

/** Class names as the start of an object's text, and member keys (`,"Name":` without the comma), quoted once: names repeat in every object of a class. */
class QuotedNames {
  readonly #quoted = new Map<string, string>();
  readonly #keys = new Map<string, string>();

  /** `{"~ClassName":"<name>","~ObjectID":`, each object's text up to its id. */
  classPrefix(name: string): string {
    return QuotedNames.#cached(this.#quoted, name, () => `{"~ClassName":${JSON.stringify(name)},"~ObjectID":`);
  }

  text(name: string): string {
    return QuotedNames.#cached(this.#keys, name, () => `${JSON.stringify(name)}:`);
  }

  static #cached(map: Map<string, string>, name: string, make: () => string): string {
    let text = map.get(name);
    if (text === undefined) {
      text = make();
      // bounded without bookkeeping, as the store times are
      if (map.size >= 10_000) map.clear();
      map.set(name, text);
    }
    return text;
  }
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

/** The members `metadata` writes: a field of the same name never replaces them. */
const METADATA = new Set(['~ClassName', '~ObjectID', '~StoreTime']);

/** Whether a field is served: names starting with `_` are internal, the metadata's are the serializer's. */
const visible = (name: string) => name.charCodeAt(0) !== 95 /* _ */ && !(name.charCodeAt(0) === 126 /* ~ */ && METADATA.has(name));

/** Calls `visit` with each serialized field. */
function forVisible(object: StoredObject, visit: (value: FieldValue, name: string) => void): void {
  const { fields } = object;
  for (const name of Object.keys(fields)) if (visible(name)) visit(fields[name]!, name);
}

function collectRefs(value: FieldValue, into: Set<string>): void {
  if (isRef(value)) into.add(value.$ref);
  else if (isSet(value)) for (const id of value.$set) into.add(id);
}

/** `resolve` as JSON text, the nested objects given as their text. */
function resolveText(value: FieldValue, nested: Map<string, string> | undefined): string {
  if (isRef(value)) return nested?.get(value.$ref) ?? 'null';
  if (isSet(value)) {
    const elements: string[] = [];
    for (const id of value.$set) {
      const text = nested?.get(id);
      if (text !== undefined) elements.push(text);
    }
    return `{"~Count":${elements.length},"~UnfilteredCount":${elements.length},"~Elements":[${elements.join(',')}]}`;
  }
  return JSON.stringify(value);
}

/** `value`, or a copy that may be changed where it is frozen (a store's own, see `ObjectStore.getNow`). */
function thawed<T>(value: T): T {
  return typeof value === 'object' && value !== null && Object.isFrozen(value) ? structuredClone(value) : value;
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
