import type { Service } from '../src/index.js';

/** The part of `Deno.ServeHandlerInfo` this adapter uses. */
export interface DenoServeInfo {
  remoteAddr: { transport: string; hostname?: string };
}

/**
 * A handler for `Deno.serve`: passes the connection's address from `info.remoteAddr` (none for Unix
 * sockets). Web APIs only, so this module loads in any runtime.
 */
export function createDenoHandler(service: Service): (request: Request, info: DenoServeInfo) => Promise<Response> {
  return (request, info) => service.fetch(request, { clientAddress: info.remoteAddr.hostname });
}
