/**
 * Reading objects (PROTOCOL.md 6.1, 6.2, 6.4): which objects a request selects, how each is
 * serialized, and the answers that carry them. Code outside this folder imports this entry only.
 */
export { DEFAULT_PER_PAGE, MAX_PER_PAGE, orderByOfText, parseSelection, selectAll, selectPage, type SelectedPage, type Selection, type SelectionParams } from './selection.js';
export { objectAnswer, checkMacros, parseSerialization, SERIALIZATION_PARAM, serializedSet, setAnswer } from './answers.js';
export { served } from './served.js';
export {
  formatStoreTime,
  Serializer,
  serializerOptions,
  type JsonObject,
  type Serialization,
  type SerializationHook,
  type SerializationStyle,
  type SerializationStyles,
  type SetPage,
} from './serialize.js';
export type { ReadContext } from './context.js';
