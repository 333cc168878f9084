/**
 * Classes declared at run time (PROTOCOL.md 6.12): a declaration is an object of an internal class in
 * the object store (so every store keeps it as it keeps data, and a restart finds it), applied to the
 * same `ClassSchemas` the host's `schema` lives in, so every write path checks it as it checks those.
 * A change is told on the event bus; every instance then reads the declaration again from the store.
 */
import type { ClassAccess, Access } from '../access.js';
import { ApiError } from '../../http/errors.js';
import type { BusMessage, EventBus, GapMessage } from '../../events/types.js';
import type { ObjectStore, StoredObject, Violations } from '../../storage/types.js';
import type { ClassDeclaration, SchemaDeclarations } from './declarations.js';
import { ClassSchemas, type CompiledDeclaration } from './schema.js';

/** The internal class of run-time declarations (never served). */
export const MODEL_CLASS = 'ModelClass';
/** Ids the violation answer names at most. */
export const VIOLATION_EXAMPLES = 10;
/** Objects read at once where the store cannot count violations itself. */
const PAGE = 1000;

/** A run-time declaration as stored: the checked declaration, and what the model answers beside it. */
export interface RuntimeClass {
  declaration: ClassDeclaration;
  description?: string;
  access?: ClassAccess;
}

/** What the runtime model stands on (a slice of the service context). */
export interface RuntimeModelParts {
  store: ObjectStore;
  schema: ClassSchemas;
  access: Access;
  onError(error: unknown): void;
}

/** A class's declaration object has an id of its own, so two instances declaring it at once meet at one object. */
const entryId = (className: string) => `MODEL_${className}`;

/** A stored declaration as read: its entry, or why it cannot be read (a hand edit, text that is no JSON). */
function entryOf(object: StoredObject): { className: string; entry?: RuntimeClass; problem?: string } | undefined {
  const { _className: className, _class: text } = object.fields;
  if (typeof className !== 'string') return undefined;
  try {
    const entry = typeof text === 'string' ? (JSON.parse(text) as RuntimeClass) : undefined;
    if (typeof entry === 'object' && entry !== null && typeof entry.declaration === 'object') return { className, entry };
  } catch {
    // reported below
  }
  return { className, problem: 'the stored text is not a declaration' };
}

export class RuntimeModel {
  readonly #parts: RuntimeModelParts;
  readonly #bus: EventBus;
  readonly #entries = new Map<string, RuntimeClass>();

  constructor(parts: RuntimeModelParts, bus: EventBus) {
    this.#parts = parts;
    parts.schema.runtimePending = true;
    this.#bus = bus;
    bus.subscribe((message) => this.#heard(message));
  }

  /** Reads every run-time declaration from the store and applies it (at start, and after the bus lost messages). */
  async load(): Promise<void> {
    const { objects } = await this.#parts.store.find({ className: MODEL_CLASS, limit: 100_000 });
    const found = new Set<string>();
    for (const object of objects) {
      const read = entryOf(object);
      if (!read) continue;
      found.add(read.className);
      this.#applyRead(read);
    }
    for (const className of [...this.#entries.keys()]) if (!found.has(className)) this.#apply(className, undefined);
    this.#parts.schema.runtimePending = false;
  }

  /**
   * The first load, at start: settled once it succeeded, failed or took `waitMs` (a store that is down
   * at start must not keep the service from starting and answering `503`); a failed or slow load is
   * tried again every second in the background until it succeeds, and writes answer `503` until then.
   */
  start(waitMs = 2000): Promise<void> {
    const attempt = (): Promise<void> =>
      this.load().catch(
        () =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => resolve(attempt()), 1000);
            (timer as { unref?: () => void }).unref?.();
          }),
      );
    const loading = attempt();
    return Promise.race([loading, new Promise<void>((resolve) => (setTimeout(resolve, waitMs) as { unref?: () => void }).unref?.())]);
  }

  /** The run-time declaration of `className`, if it has one. */
  entry(className: string): RuntimeClass | undefined {
    return this.#entries.get(className);
  }

  /**
   * `400` when the declaration contradicts itself (a range, an enum, an index of no field...), or when
   * what the store would keep of it (its JSON text) is not what was checked: a declaration is never
   * answered `0` unless the form it is stored in compiles (PROTOCOL.md 6.12).
   */
  check(className: string, entry: RuntimeClass): CompiledDeclaration {
    const compiled = compileOrRefuse(this.#parts.schema, className, entry.declaration);
    compileOrRefuse(this.#parts.schema, className, storedForm(entry).declaration);
    return compiled;
  }

  /**
   * Declares `className` or replaces its declaration, after checking every stored object of the class
   * against it: `409` with the count and the first ids when any would be refused (nothing changes then).
   */
  async declare(className: string, entry: RuntimeClass): Promise<void> {
    const { store } = this.#parts;
    const compiled = this.check(className, entry);
    const found = await violationsOf(store, className, compiled);
    if (found.count > 0) {
      throw new ApiError('409', `${found.count} stored ${className} object${found.count === 1 ? '' : 's'} would not satisfy this declaration; nothing was changed`, {
        data: { Violations: found.count, Examples: found.ids },
      });
    }
    const current = await store.get(entryId(className));
    await store.put({ id: entryId(className), className: MODEL_CLASS, fields: { _className: className, _class: JSON.stringify(entry) }, ifStoreTime: current?.storeTime ?? null });
    this.#apply(className, entry);
    await this.#tell(className);
  }

  /** Removes the run-time declaration of `className` (`404` when it has none, `409` while it holds objects). */
  async remove(className: string): Promise<void> {
    const { store } = this.#parts;
    if (!this.#entries.has(className) && !this.#parts.schema.brokenDeclarations().some((broken) => broken.className === className)) throw new ApiError('404', `${className} has no declaration made at run time`);
    const held = await store.count(className);
    if (held > 0) throw new ApiError('409', `${className} holds ${held} object${held === 1 ? '' : 's'}; delete them before its declaration`);
    await store.delete(entryId(className));
    this.#apply(className, undefined);
    await this.#tell(className);
  }

  /** A declaration read from the store: applied, or (when it cannot be used) its class's writes refused and the problem logged. */
  #applyRead(read: { className: string; entry?: RuntimeClass; problem?: string }): void {
    const problem = read.problem ?? this.#apply(read.className, read.entry);
    if (read.problem !== undefined) {
      this.#apply(read.className, undefined);
      this.#parts.schema.markBroken(read.className, read.problem);
    }
    if (problem !== undefined) this.#parts.onError(new Error(`the stored declaration of class ${read.className} cannot be used, its writes are refused until an administrator replaces or deletes it: ${problem}`));
  }

  #apply(className: string, entry: RuntimeClass | undefined): string | undefined {
    const { schema, access, store, onError } = this.#parts;
    const before = this.#entries.get(className);
    const problem = schema.applyRuntime(className, entry?.declaration);
    if (entry && problem === undefined) this.#entries.set(className, entry);
    else this.#entries.delete(className);
    access.setRuntimeRule(className, problem === undefined ? entry?.access : undefined);
    // field indexes the declaration asks for, built in the background (PostgreSQL: without blocking writes)
    if (problem !== undefined) return problem;
    for (const field of entry?.declaration.indexes ?? []) {
      if (before?.declaration.indexes?.includes(field)) continue;
      store.ensureIndex?.(className, field).catch(onError);
    }
    return undefined;
  }

  async #tell(className: string): Promise<void> {
    await this.#bus.publish({ kind: 'model', className }).catch(this.#parts.onError);
  }

  #heard(message: BusMessage | GapMessage): void {
    if (message.kind === 'gap') void this.load().catch(this.#parts.onError);
    else if (message.kind === 'model') void this.#reload(message.className).catch(this.#parts.onError);
  }

  /** Reads one class's declaration again (another instance changed it); from the store, not a cache of it. */
  async #reload(className: string): Promise<void> {
    const { objects } = await this.#parts.store.find({ className: MODEL_CLASS, where: { $oids: [entryId(className)] }, limit: 1 });
    const read = objects[0] && entryOf(objects[0]);
    if (read) this.#applyRead(read);
    else this.#apply(className, undefined);
  }
}

/** The run-time declarations `store` holds, by class name (`odbrest types` adds them to the host's). */
export async function storedDeclarations(store: ObjectStore): Promise<Record<string, ClassDeclaration>> {
  const { objects } = await store.find({ className: MODEL_CLASS, limit: 100_000 });
  const found: Record<string, ClassDeclaration> = {};
  for (const object of objects) {
    const read = entryOf(object);
    if (read?.entry) found[read.className] = read.entry.declaration;
  }
  return found;
}

/**
 * What a service on `store` checks writes against: the host's declarations and the run-time ones
 * `store` holds, for tools that write into a store without a service's write path (`odbrest import`).
 */
export async function storedSchemas(store: ObjectStore, host: SchemaDeclarations | undefined, fileClass: string): Promise<ClassSchemas> {
  const schemas = new ClassSchemas(host, fileClass, store);
  for (const [className, declaration] of Object.entries(await storedDeclarations(store))) schemas.applyRuntime(className, declaration);
  return schemas;
}

/** The entry as the store gives it back: its JSON text read again (`1e400` became `Infinity`, then `null`). */
function storedForm(entry: RuntimeClass): RuntimeClass {
  return JSON.parse(JSON.stringify(entry)) as RuntimeClass;
}

/** The declaration compiled, or `400` saying what contradicts itself. */
function compileOrRefuse(schema: ClassSchemas, className: string, declaration: ClassDeclaration): CompiledDeclaration {
  try {
    return schema.compile(className, declaration);
  } catch (error) {
    throw new ApiError('400', (error as Error).message);
  }
}

/**
 * The stored objects of `className` the declaration would refuse: counted by the store in one pass
 * where it can (`ObjectStore.violations`), else read a page at a time and checked here.
 */
export async function violationsOf(store: ObjectStore, className: string, compiled: CompiledDeclaration): Promise<Violations> {
  if (store.violations) return store.violations(className, compiled.rules, VIOLATION_EXAMPLES);
  const found: Violations = { count: 0, ids: [] };
  for (let offset = 0; ; offset += PAGE) {
    const { objects } = await store.find({ className, offset, limit: PAGE });
    for (const object of objects) {
      if (!compiled.violatedBy(object.fields)) continue;
      found.count++;
      if (found.ids.length < VIOLATION_EXAMPLES) found.ids.push(object.id);
    }
    if (objects.length < PAGE) return found;
  }
}
