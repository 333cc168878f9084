import { licenceRoutes } from './auth/licence-routes.js';
import { loginRoutes } from './auth/login.js';
import { batchRoutes } from './batch/routes.js';
import { checkRoutes } from './checks/routes.js';
import { twoFactorRoutes } from './auth/two-factor-routes.js';
import type { ServiceContext } from './context.js';
import { eventRoutes } from './events/routes.js';
import { fileRoutes } from './files/routes.js';
import type { Route } from './http/router.js';
import { macroRoutes } from './macros/routes.js';
import type { ExternalLogin } from './oauth/flow.js';
import { externalLoginRoutes } from './oauth/routes.js';
import { objectRoutes } from './objects/routes.js';
import { openApiRoutes } from './openapi/routes.js';
import type { ServiceOptions } from './options.js';
import { secureLoginRoutes } from './secure/routes.js';
import { PACKAGE_VERSION } from './version.js';

/** Every route of the service, from each folder's route module, and (unless turned off) the OpenAPI document of them all. */
export function serviceRoutes(ctx: ServiceContext, externalLogin: ExternalLogin, options: ServiceOptions): Route[] {
  const routes: Route[] = [
    ...loginRoutes(ctx),
    ...secureLoginRoutes(ctx),
    ...twoFactorRoutes(ctx),
    ...licenceRoutes(ctx),
    ...objectRoutes(ctx),
    ...fileRoutes(ctx),
    ...macroRoutes(ctx),
    ...externalLoginRoutes(ctx, externalLogin),
    ...checkRoutes(ctx, options.serviceCheck),
    ...batchRoutes(ctx),
    ...eventRoutes(ctx),
  ];
  if (options.openApi === false) return routes;
  const { applicationName = 'odbrest', applicationVersion = PACKAGE_VERSION } = options.serviceCheck ?? {};
  return [...routes, ...openApiRoutes(routes, { mount: options.mount, title: applicationName, version: applicationVersion })];
}
