/**
 * Writing objects (PROTOCOL.md 6.3, 6.7): the one write path, its routes (single, bulk, actions,
 * recycle bin, locks), and the store a session's macros write through. Code outside this folder
 * imports this entry only.
 */
export { afterWrite, beforeWrite, type Writer } from './write-path.js';
export { retryOnConflict, type HostAction, type WriteChange, type WriteHooks, type WriteOptions, type WriteResult } from './writes.js';
export { writeOptions } from './writes.js';
export { RECYCLED_CLASS, withoutRecycled } from './recycle.js';
export { sessionObjectStore } from './session-store.js';
export { writeRoutes } from './write-routes.js';
export { createCheckRoutes } from './create-check-routes.js';
export { bulkRoutes } from './bulk-routes.js';
export { lockRoutes } from './lock-routes.js';
export { recycleRoutes } from './recycle-routes.js';
export type { WriteContext } from './context.js';
