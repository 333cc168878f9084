import { JsonReply } from '../http/envelope.js';
import { Mount, type MountOptions } from '../http/mount.js';
import type { Route } from '../http/router.js';
import type { SchemaDeclarations } from '../objects/model/index.js';
import { openApiDocument } from './document.js';

export interface OpenApiRouteOptions {
  mount?: MountOptions;
  title: string;
  version: string;
  /** The declared classes, whose objects the document describes (PROTOCOL.md 6.8): the host's and those declared at run time (6.12). */
  schema: { declarations(): SchemaDeclarations; readonly version: number };
}

/**
 * `GET /openapi.json`: the OpenAPI document of `routes` and of itself. It is public, like any API
 * description (no app key, no credential), and made on its first request (so a service that is
 * never asked for it never pays for it), and again after a class is declared at run time.
 */
export function openApiRoutes(routes: readonly Route[], { mount, title, version, schema }: OpenApiRouteOptions): Route[] {
  const { basePath, alias } = new Mount(mount);
  let reply: JsonReply | undefined;
  let madeAt = -1;
  const route: Route = {
    method: 'GET',
    path: '/openapi.json',
    auth: 'none',
    appKey: false,
    summary: 'This document: the OpenAPI 3.1 description of the service',
    rawAnswer: {
      status: 200,
      contentType: 'application/json',
      description: 'the OpenAPI document',
      example: { openapi: '3.1.0', info: { title, version }, servers: [{ url: '/' }], paths: { '/v1/login': { post: { summary: 'Logs in: a plain session' } } } },
    },
    handler: async () => {
      if (!reply || madeAt !== schema.version) {
        madeAt = schema.version;
        reply = new JsonReply(JSON.stringify(openApiDocument([...routes, route], { title, version, schema: schema.declarations(), serverUrl: `${basePath}${alias ? `/${alias}` : ''}` || '/' })));
      }
      return reply;
    },
  };
  return [route];
}
