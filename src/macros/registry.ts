import type { Session } from '../auth/sessions.js';
import type { KeyValueStore, ObjectStore, StoredObject } from '../storage/types.js';

/** What a macro sees besides its parameters. */
export interface MacroContext {
  /** The calling session (absent when the service itself calls a hook outside a session). */
  session: Session | undefined;
  /** Loads the logged-in principal's object (a database user or a custom-login principal). */
  user(): Promise<StoredObject | undefined>;
  store: ObjectStore;
  kv: KeyValueStore;
  /** The web request being answered. */
  request: Request;
}

/**
 * A macro: a plain (async) function. Its return value becomes the response's `data`. Throw an
 * `ApiError` to fail with your own code and message; any other exception is a bare `500`.
 */
export type Macro<P extends Record<string, unknown> = Record<string, unknown>, R = unknown> = (
  context: MacroContext,
  params: P,
) => R | Promise<R>;

/** The hooks the service calls itself (PROTOCOL.md 7); not callable through `/v1/execute`. */
export const HOOK_NAMES = ['xApi_DBCreateInit_xApiUserProvider', 'xApi_BuildSerialization', 'xApi_FindObjects'] as const;
export type HookName = (typeof HOOK_NAMES)[number];

export class MacroRegistry {
  readonly #macros = new Map<string, Macro<any, any>>();

  constructor(initial: Record<string, Macro<any, any>> = {}) {
    for (const [name, macro] of Object.entries(initial)) this.register(name, macro);
  }

  register(name: string, macro: Macro<any, any>): this {
    if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/.test(name)) throw new Error(`invalid macro name: ${name}`);
    if (typeof macro !== 'function') throw new Error(`macro ${name} must be a function`);
    this.#macros.set(name, macro);
    return this;
  }

  unregister(name: string): boolean {
    return this.#macros.delete(name);
  }

  get(name: string): Macro<any, any> | undefined {
    return this.#macros.get(name);
  }

  /** A macro callable through `/v1/execute` (hooks are not). */
  callable(name: string): Macro<any, any> | undefined {
    return (HOOK_NAMES as readonly string[]).includes(name) ? undefined : this.#macros.get(name);
  }

  names(): string[] {
    return [...this.#macros.keys()];
  }
}
