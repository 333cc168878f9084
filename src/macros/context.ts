import type { ServiceContext } from '../context.js';
import type { ApiRequest } from '../http/request.js';
import type { Session } from '../auth/sessions.js';
import type { FoldersHook, MacroContext, MacroRegistry } from './registry.js';

/** What macros and the host's hooks add to the service context (PROTOCOL.md 7). */
export interface MacrosContext extends ServiceContext {
  readonly macros: MacroRegistry;
  /** The host's `folders` hook (the query object's `folderPath`/`folderType`, PROTOCOL.md 6.2), if any. */
  readonly folders: FoldersHook | undefined;
  /** What a macro or hook called for this request (or outside one) sees; `session` for one the request does not carry yet (a login's). */
  macroContext(request: ApiRequest | undefined, session?: Session): MacroContext;
  /**
   * What a macro run for this request's session sees (`/v1/execute`, the query object's `macro`): its
   * store reads as the session may and writes through the one write path.
   */
  sessionMacroContext(request: ApiRequest): MacroContext;
}
