import type { Service } from '../src/index.js';
import { CLIENT_ADDRESS_KEY, type ClientAddressStore } from './next-client-address.js';
import { fetchChecked } from './request-checks.js';

type RouteHandler = (request: Request) => Promise<Response>;

/**
 * Route handlers for a Next.js App Router catch-all route, e.g. `app/api/[...path]/route.ts`:
 *
 *     export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = createRouteHandlers(service);
 *
 * with the service's `basePath` set to the route's folder (`/api`). Next hands route handlers a web
 * Request but not the connection: the client address comes from `trackClientAddress()`
 * (`odbrest/next/instrumentation`, called in `instrumentation.ts`). Without it the address is unknown,
 * so only the per-user login limit applies, unless `trustProxy` takes it from a proxy you run.
 * `OPTIONS` must be exported too, or Next answers browsers' CORS preflights itself (without the
 * service's `cors` headers). Web APIs only, so this module also loads in the Edge runtime.
 */
export function createRouteHandlers(service: Service): Record<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS', RouteHandler> {
  const handler: RouteHandler = (request) => fetchChecked(service, request, { clientAddress: connectionAddress() });
  return { GET: handler, POST: handler, PUT: handler, PATCH: handler, DELETE: handler, OPTIONS: handler };
}

function connectionAddress(): string | undefined {
  const store = (globalThis as Record<symbol, ClientAddressStore | undefined>)[CLIENT_ADDRESS_KEY];
  return store?.getStore();
}
