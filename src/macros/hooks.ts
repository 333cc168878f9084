import type { SerializationHook } from '../objects/serialize.js';
import type { MacroContext, MacroRegistry, SerializationMacro } from './registry.js';

/** The registered `xApi_BuildSerialization` hook as the serializer calls it, or `undefined`. */
export function serializationHook(macros: MacroRegistry, context: () => MacroContext): SerializationHook | undefined {
  const hook = macros.hook('xApi_BuildSerialization');
  if (!hook) return undefined;
  return async (obj, objectJson) => {
    const result = await hook(context(), { obj, objectJson });
    return typeof result === 'object' && result !== null ? result : objectJson;
  };
}

/** The `objects.serialization.macros` option, checked at start-up (names as macros' names, functions). */
export function serializationMacros(macros: Record<string, SerializationMacro> = {}): ReadonlyMap<string, SerializationMacro> {
  const byName = new Map<string, SerializationMacro>();
  for (const [name, macro] of Object.entries(macros)) {
    if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/.test(name)) throw new Error(`objects.serialization.macros: invalid macro name ${name}`);
    if (typeof macro !== 'function') throw new Error(`objects.serialization.macros: ${name} must be a function`);
    byName.set(name, macro);
  }
  return byName;
}
