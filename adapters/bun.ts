import type { MaybePromise, Service } from '../src/index.js';
import { answerChecked } from './request-checks.js';

/** The part of Bun's `Server` this adapter uses. */
export interface BunServer {
  requestIP(request: Request): { address: string } | null;
}

/**
 * A `fetch` handler for `Bun.serve` (or one of its `routes`): passes the connection's address from
 * `server.requestIP`. A malformed `Host` is answered `400` (see `checkWebRequest`). The `Response`
 * itself where the service answers at once (the read path), which Bun writes without a promise turn;
 * a promise of it otherwise. Web APIs only, so this module loads in any runtime.
 */
export function createBunHandler(service: Service): (request: Request, server: BunServer) => MaybePromise<Response> {
  return (request, server) => answerChecked(service, request, { clientAddress: server.requestIP(request)?.address });
}
