import type * as v from 'valibot';
import { parseInput } from '../http/validate.js';
import type { Session } from '../auth/sessions.js';
import type { JsonObject } from '../http/json.js';
import type { Outbox } from '../mail/outbox.js';
import type { MacroMail } from '../mail/types.js';
import type { Fields, KeyValueStore, ObjectStore, OrderBy, StoredObject, Where } from '../storage/types.js';

/** A listing request, also what the `xApi_FindObjects` hook receives and fills in (`elements`). */
export interface ObjectSet {
  className: string;
  where: Where;
  /** The listing's order (`orderBy`); absent: creation order. */
  orderBy: OrderBy | undefined;
  page: number;
  perPage: number;
  reverseOrder: boolean;
  /** Filled by the hook: the objects of the requested page. */
  elements: StoredObject[];
  /** Filled by the hook: matches before paging (defaults to `elements.length`). */
  unfilteredCount?: number;
}

/** What a macro sees besides its parameters. */
export interface MacroContext {
  /** The calling session (absent when the service itself calls a hook outside a session). */
  session: Session | undefined;
  /** Loads the logged-in principal's object (a database user or a custom-login principal). */
  user(): Promise<StoredObject | undefined>;
  /**
   * The object store. For a macro run through `/v1/execute` it is the session's view: it reads only
   * what the session may read and writes through the write path (access rules, `beforeWrite` and
   * `afterWrite`, file bytes). Hooks the service calls itself (`xApi_*`, write hooks, `authorize`)
   * get the raw store: the service acting for itself, with every right.
   */
  store: ObjectStore;
  kv: KeyValueStore;
  /** The web request being answered. */
  request: Request;
  /**
   * Sends mail from the `mail` option's sender (docs/macros.md, "Sending mail"); a file object may be
   * attached by id, read through this context's `store` (so through the session's read rules).
   */
  mail: MacroMail;
}

/**
 * A macro: a plain (async) function. Its return value becomes the response's `data`. Throw an
 * `ApiError` to fail with your own code and message; any other exception is a bare `500`.
 */
export type Macro<P extends Record<string, unknown> = Record<string, unknown>, R = unknown> = (
  context: MacroContext,
  params: P,
) => R | Promise<R>;

/** A macro whose parameters are declared: a valibot schema of the JSON object it takes, and the function that runs. */
export interface MacroDeclaration<S extends v.GenericSchema, R> {
  params: S;
  run(context: MacroContext, params: v.InferOutput<S>): R | Promise<R>;
}

/**
 * A macro with declared parameters: they are checked before it runs (`400` naming the member, as a
 * route's body is: `{"city": 42}` for a `city: v.string()` is "city must be string"), and `run` gets
 * them typed and parsed. Register the result like any macro.
 */
export function defineMacro<S extends v.GenericSchema, R>(declaration: MacroDeclaration<S, R>): Macro<Record<string, unknown>, R> & { params: S } {
  const { params, run } = declaration;
  return Object.assign((context: MacroContext, given: Record<string, unknown>) => run(context, parseInput(params, given, 'macro parameters')), { params });
}

/** What `xApi_DBCreateInit_xApiUserProvider` receives (PROTOCOL.md 5.2 step 4). */
export interface ExternalUserParams extends Record<string, unknown> {
  /** The link object about to be stored; set `userObject.fields.user` to `{ $ref: id }` to assign another user. */
  userObject: { className: string; fields: Fields };
  /** The provider entry. */
  providerConfig: StoredObject;
  userUuid: string;
  name: string;
  surname: string;
  email: string;
}

/** The hooks the service calls itself (PROTOCOL.md 7), typed; registered like macros, never callable through `/v1/execute`. */
export interface Hooks {
  /** Changes `objectJson` or returns a replacement; applied to every serialized object. */
  xApi_BuildSerialization: Macro<{ obj: StoredObject; objectJson: JsonObject }, JsonObject | undefined | void>;
  /** Fills `objectSet.elements` (and `unfilteredCount`) instead of the store's query; `false` fails the listing with `500`. */
  xApi_FindObjects: Macro<{ objectSet: ObjectSet }, boolean | undefined | void>;
  /** A new external identity of a provider with a `defaultUser`: non-zero refuses the login. */
  xApi_DBCreateInit_xApiUserProvider: Macro<ExternalUserParams, number | undefined | void>;
}
export type HookName = keyof Hooks;

/**
 * A serialization macro (`serialization={"type":"macro","macro":name}`, PROTOCOL.md 6.1): builds the
 * JSON of each object an answer serves from the object and its full serialization (`objectJson`, the
 * access rules applied), returning it or changing `objectJson`. Stored objects in the result are
 * served as `GET` serves them.
 */
export type SerializationMacro = Macro<{ obj: StoredObject; objectJson: JsonObject }, JsonObject | undefined | void>;
export const HOOK_NAMES = ['xApi_DBCreateInit_xApiUserProvider', 'xApi_BuildSerialization', 'xApi_FindObjects'] as const satisfies readonly HookName[];

/**
 * A macro the query object names (`{"macro": name, "macroLevel": n}`, PROTOCOL.md 6.2): it receives the
 * objects the rest of the query selects (at most 10,000, in order) and returns those to keep, as
 * objects or ids. It can only narrow the selection. Registered in `macros` like any macro.
 */
export type SelectionMacro = Macro<{ className: string; objects: StoredObject[]; macroLevel?: number }, readonly (StoredObject | string)[]>;

/**
 * The `folders` hook (PROTOCOL.md 6.2, 6.10): the ids of the objects in a folder, named by path and
 * type as the product's query object names them (`folderPath`, `folderType`). Unknown folder:
 * throw `ApiError('404', ...)`.
 */
export type FoldersHook = (context: MacroContext, folder: { folderPath?: string; folderType?: string }) => readonly string[] | Promise<readonly string[]>;

/** Macros by name; the hook names take their typed signatures. */
export type Macros = Partial<Hooks> & { [name: string]: Macro<any, any> | undefined };

function checkMacro(name: string, macro: unknown, option = ''): void {
  if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/.test(name)) throw new Error(`${option}invalid macro name: ${name}`);
  if (typeof macro !== 'function') throw new Error(`${option}macro ${name} must be a function`);
}

const isHookName = (name: string): name is HookName => (HOOK_NAMES as readonly string[]).includes(name);

export class MacroRegistry {
  readonly #macros = new Map<string, Macro<any, any>>();
  readonly #serialization = new Map<string, SerializationMacro>();

  /** `serialization`: the `objects.serialization.macros` option, a namespace of its own (never callable through `/v1/execute`). */
  constructor(initial: Macros = {}, serialization: Record<string, SerializationMacro> = {}) {
    for (const [name, macro] of Object.entries(initial)) if (macro !== undefined) this.register(name, macro);
    for (const [name, macro] of Object.entries(serialization)) {
      checkMacro(name, macro, 'objects.serialization.macros: ');
      this.#serialization.set(name, macro);
    }
  }

  /** A serialization macro (`serialization={"type":"macro","macro":name}`, PROTOCOL.md 6.1). */
  serialization(name: string): SerializationMacro | undefined {
    return this.#serialization.get(name);
  }

  register<N extends HookName>(name: N, hook: Hooks[N]): this;
  /** Any other name: a macro (a hook's name takes only the hook's signature, above). */
  register<N extends string>(name: N extends HookName ? never : N, macro: Macro<any, any>): this;
  register(name: string, macro: Macro<any, any>): this {
    checkMacro(name, macro);
    this.#macros.set(name, macro);
    return this;
  }

  unregister(name: string): boolean {
    return this.#macros.delete(name);
  }

  /** A registered hook, typed. */
  hook<N extends HookName>(name: N): Hooks[N] | undefined {
    return this.#macros.get(name) as Hooks[N] | undefined;
  }

  /** A macro callable through `/v1/execute` (hooks are not). */
  callable(name: string): Macro<any, any> | undefined {
    return isHookName(name) ? undefined : this.#macros.get(name);
  }
}

/** The context a macro or hook gets. */
export function macroContext(store: ObjectStore, kv: KeyValueStore, session: Session | undefined, request: Request, outbox: Outbox): MacroContext {
  return {
    session,
    user: async () => (session ? store.get(session.principalId) : undefined),
    store,
    kv,
    request,
    mail: outbox.forMacros(store),
  };
}
