import { IttyRouter } from 'itty-router';
import { ApiError, clip } from './errors.js';
import type { ApiRequest } from './request.js';

/**
 * Who may call a route: `none` (anyone with an app key), `session` (any logged-in session, also the
 * macro-only sessions of code 307), `objects` (logged-in sessions with at least one application).
 */
export type RouteAuth = 'none' | 'session' | 'objects';

export interface Route {
  method: 'GET' | 'POST';
  /** itty-router pattern relative to the service root, e.g. `/v1/object/:id`. */
  path: string;
  auth: RouteAuth;
  /** False for routes a browser or provider reaches without an `appkey` header (OAuth callbacks). */
  appKey?: boolean;
  handler: (request: ApiRequest) => Promise<Response>;
}

interface Probe {
  method: string;
  url: string;
  params: Record<string, string>;
}
type Found = { route: Route; params: Record<string, string> } | undefined;

/** The routing table: finds the route for a request, or throws `404`/`405`. Routes can be added any time. */
export class RouteTable {
  readonly #byMethod = IttyRouter();
  /** Every path pattern under any method, answering the methods it has (for `405` with `Allow`). */
  readonly #anyMethod = IttyRouter();
  readonly #methods = new Map<string, Set<string>>();

  add(routes: readonly Route[]): this {
    for (const route of routes) {
      this.#byMethod[route.method.toLowerCase() as 'get'](route.path, (probe: Probe) => ({ route, params: probe.params }));
      let methods = this.#methods.get(route.path);
      if (!methods) {
        this.#methods.set(route.path, (methods = new Set()));
        this.#anyMethod.all(route.path, () => methods);
      }
      methods.add(route.method);
    }
    return this;
  }

  async match(request: ApiRequest): Promise<{ route: Route; params: Record<string, string> }> {
    const probe = () => ({ method: request.method, url: `http://odbrest${request.path}` }) as never;
    const found = (await this.#byMethod.fetch(probe())) as Found;
    if (!found) {
      const methods = (await this.#anyMethod.fetch(probe())) as Set<string> | undefined;
      if (methods) {
        const allow = [...methods].join(', ');
        throw new ApiError('405', `method ${clip(request.method)} not allowed here; use ${allow}`, { headers: { allow } });
      }
      throw new ApiError('404', `no route ${clip(request.method)} ${clip(request.path)}`);
    }
    const params: Record<string, string> = {};
    for (const [name, raw] of Object.entries(found.params)) {
      try {
        params[name] = decodeURIComponent(raw);
      } catch {
        throw new ApiError('400', `path segment ${name} is not valid percent-encoding`);
      }
    }
    return { route: found.route, params };
  }
}
