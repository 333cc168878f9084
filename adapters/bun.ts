import type { Service } from '../src/index.js';
import { fetchChecked } from './request-checks.js';

/** The part of Bun's `Server` this adapter uses. */
export interface BunServer {
  requestIP(request: Request): { address: string } | null;
}

/**
 * A `fetch` handler for `Bun.serve` (or one of its `routes`): passes the connection's address from
 * `server.requestIP`. A malformed `Host` is answered `400` (see `checkWebRequest`). Web APIs only, so this module loads in any runtime.
 */
export function createBunHandler(service: Service): (request: Request, server: BunServer) => Promise<Response> {
  return (request, server) => fetchChecked(service, request, { clientAddress: server.requestIP(request)?.address });
}
