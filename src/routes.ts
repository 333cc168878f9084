import { passkeyRoutes, Passkeys } from './accounts/passkeys.js';
import type { InstanceMetrics } from './admin/metrics.js';
import { adminRoutes } from './admin/routes.js';
import { savedQueryRoutes } from './saved-queries/routes.js';
import { accountRoutes, accounts } from './accounts/routes.js';
import { licenceRoutes } from './auth/licence-routes.js';
import { loginRoutes } from './auth/login.js';
import { batchRoutes } from './batch/routes.js';
import { checkRoutes } from './checks/routes.js';
import { twoFactorRoutes } from './auth/two-factor-routes.js';
import type { AssembledContext } from './service-context.js';
import type { SecureSessions } from './auth/credentials.js';
import type { Dispatch } from './pipeline.js';
import { hostRoutes } from './host/routes.js';
import { eventRoutes } from './events/routes.js';
import { fileRoutes } from './files/routes.js';
import type { Route } from './http/router.js';
import { macroRoutes } from './macros/routes.js';
import type { ExternalLogin } from './oauth/flow.js';
import { externalLoginRoutes } from './oauth/routes.js';
import { classDeclarationRoutes, modelRoutes } from './objects/model/index.js';
import { objectRoutes } from './objects/routes.js';
import { openApiRoutes } from './openapi/routes.js';
import type { ServiceOptions } from './options.js';
import { secureLoginRoutes } from './secure/routes.js';
import { v2Routes } from './v2/routes.js';
import { PACKAGE_VERSION } from './version.js';

/**
 * Every route of the service, from each folder's route module, then the host's own (`routes`, which
 * may not shadow these), and (unless turned off) the OpenAPI document of them all.
 */
export function serviceRoutes(ctx: AssembledContext, externalLogin: ExternalLogin, options: ServiceOptions, core: { dispatch: Dispatch; secure: SecureSessions; metrics?: InstanceMetrics }): Route[] {
  const account = accounts(ctx, options.users);
  const builtIn: Route[] = [
    ...loginRoutes(ctx),
    ...secureLoginRoutes(ctx),
    ...twoFactorRoutes(ctx),
    ...licenceRoutes(ctx),
    ...accountRoutes(ctx, account),
    ...passkeyRoutes(new Passkeys(ctx, account.users, options.passkeys)),
    ...objectRoutes(ctx),
    ...modelRoutes(ctx),
    ...classDeclarationRoutes(ctx),
    ...fileRoutes(ctx),
    ...macroRoutes(ctx),
    ...externalLoginRoutes(ctx, externalLogin),
    ...checkRoutes(ctx, options.serviceCheck),
    ...batchRoutes(ctx, core.dispatch),
    ...v2Routes(ctx, options.v2),
    ...eventRoutes(ctx, core.secure),
    ...adminRoutes(ctx, core.metrics),
    ...savedQueryRoutes(ctx),
  ];
  const { applicationName = 'odbrest', applicationVersion = PACKAGE_VERSION } = options.serviceCheck ?? {};
  const documented: Route[] = []; // filled below; the document is made on its first request
  const openApi = options.openApi === false ? [] : openApiRoutes(documented, { mount: options.mount, title: applicationName, version: applicationVersion, schema: ctx.schema });
  const routes = [...builtIn, ...hostRoutes(ctx, options.routes, [...builtIn, ...openApi])];
  documented.push(...routes);
  return [...routes, ...openApi];
}
