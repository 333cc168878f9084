import type { WriteContext } from './write/index.js';

/**
 * Everything the objects folder adds to the service context: what the features built on objects
 * (events, files, v2, host routes, macros' routes) stand on.
 */
export type ObjectsContext = WriteContext;
