import type { SerializationHook } from '../objects/read/index.js';
import type { MacroContext, MacroRegistry } from './registry.js';

/** The registered `xApi_BuildSerialization` hook as the serializer calls it, or `undefined`. */
export function serializationHook(macros: MacroRegistry, context: () => MacroContext): SerializationHook | undefined {
  const hook = macros.hook('xApi_BuildSerialization');
  if (!hook) return undefined;
  return async (obj, objectJson) => {
    const result = await hook(context(), { obj, objectJson });
    return typeof result === 'object' && result !== null ? result : objectJson;
  };
}

