import type { MaybePromise, Service } from '../src/index.js';
import { answerChecked } from './request-checks.js';

export { refuseMalformedHost } from './request-checks.js';

/** The part of `Deno.ServeHandlerInfo` this adapter uses. */
export interface DenoServeInfo {
  remoteAddr: { transport: string; hostname?: string };
}

/**
 * A handler for `Deno.serve`: passes the connection's address from `info.remoteAddr` (none for Unix
 * sockets). Deno builds the URL by appending the request-target to the `Host` header, so a `Host`
 * that is not `host[:port]` is answered `400` before it can move the path (see `checkWebRequest`).
 * The `Response` itself where the service answers at once, a promise of it otherwise. Web APIs only,
 * so this module loads in any runtime.
 */
export function createDenoHandler(service: Service): (request: Request, info: DenoServeInfo) => MaybePromise<Response> {
  return (request, info) => answerChecked(service, request, { clientAddress: info.remoteAddr.hostname });
}
