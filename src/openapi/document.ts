import { toJsonSchema } from '@valibot/to-json-schema';
import type { GenericSchema } from 'valibot';
import { STATUS_CODES } from '../http/errors.js';
import type { Route } from '../http/router.js';

/**
 * The OpenAPI 3.1 document of a route table (`GET {base}/openapi.json`), made from the routes
 * themselves: their methods and paths, the valibot schemas their handlers parse bodies and queries
 * with, and the summary and answer written beside each handler. Nothing here describes one route by
 * hand, so the document cannot drift from the code; it holds nothing of the host's configuration but
 * the mount path and the name and version it reports.
 */

export interface DocumentInfo {
  title: string;
  version: string;
  /** Where the routes are, relative to the document's own address: the base path and alias, or `/`. */
  serverUrl: string;
}

type JsonObject = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/${name}` });

/** A valibot schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), as the client sends it (before transforms). */
function jsonSchema(schema: GenericSchema): JsonObject {
  const { $schema: _dialect, ...converted } = toJsonSchema(schema, { target: 'draft-2020-12', typeMode: 'input' }) as JsonObject;
  return converted;
}

const isOptional = (schema: GenericSchema) => schema.type === 'optional' || schema.type === 'nullish';

/** itty's `/v1/object/:id` as OpenAPI's `/v1/object/{id}`, and its parameter names. */
export function openApiPath(path: string): { path: string; names: string[] } {
  const names = [...path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
  return { path: path.replace(/:(\w+)/g, '{$1}'), names };
}

function parameters(route: Route, names: string[]): JsonObject[] {
  const inPath = names.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  const inQuery = Object.entries(route.query?.entries ?? {}).map(([name, entry]) => {
    const { description, ...schema } = jsonSchema(entry);
    return { name, in: 'query', required: !isOptional(entry), ...(description ? { description } : {}), schema };
  });
  return [...inPath, ...inQuery];
}

function requestBody(route: Route): JsonObject | undefined {
  const content: JsonObject = {};
  if (route.body) content['application/json'] = { schema: jsonSchema(route.body) };
  for (const type of route.bodyTypes ?? []) content[type] = { schema: {} };
  if (Object.keys(content).length === 0) return undefined;
  return { required: route.body ? !isOptional(route.body) : true, content };
}

function success(route: Route): JsonObject {
  const raw = route.rawAnswer;
  if (raw) return { [raw.status]: { description: raw.description, ...(raw.contentType ? { content: { [raw.contentType]: { schema: {} } } } : {}) } };
  const description = `internalStatus "0"; data: ${route.answer ?? 'see the summary'}`;
  return { 200: { description, content: { 'application/json': { schema: ref('schemas/Envelope') } } } };
}

/** Who may call a route, as OpenAPI security requirements (any one of the listed sets). */
function security(route: Route): JsonObject[] {
  if (route.auth !== 'none') return ['sessionId', 'bearerToken', 'secureTransport'].map((credential) => ({ appKey: [], [credential]: [] }));
  return route.appKey === false ? [] : [{ appKey: [] }];
}

function operation(route: Route, names: string[]): JsonObject {
  const body = requestBody(route);
  const params = parameters(route, names);
  return {
    operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(\w)?/g, (_, next: string | undefined) => (next ?? '').toUpperCase())}`,
    summary: route.summary,
    ...(params.length ? { parameters: params } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: { ...success(route), default: ref('responses/Error') },
    security: security(route),
  };
}

const CODES = Object.entries(STATUS_CODES)
  .map(([code, status]) => `${code} (HTTP ${status})`)
  .join(', ');

function components(): JsonObject {
  return {
    schemas: {
      Status: {
        type: 'object',
        required: ['internalStatus', 'statusMessage'],
        properties: {
          internalStatus: { type: 'string', description: `"0" for success; else the failure: ${CODES}. Always a string.` },
          statusMessage: { type: 'string', description: 'what happened, in words a person can act on' },
          debugMessage: { type: 'string' },
        },
      },
      Envelope: {
        type: 'object',
        description: 'Every JSON answer, success or failure',
        required: ['status', 'data'],
        properties: { status: ref('schemas/Status'), data: { description: 'the answer; {} for failures unless stated' } },
      },
    },
    responses: {
      Error: {
        description: 'A failure: the envelope with the internalStatus code, the HTTP status the code has, and data {} unless stated',
        content: { 'application/json': { schema: ref('schemas/Envelope') } },
      },
    },
    securitySchemes: {
      appKey: { type: 'apiKey', in: 'header', name: 'appkey', description: 'On every request (missing or not accepted: 100)' },
      sessionId: { type: 'apiKey', in: 'header', name: 'sessionId', description: 'A plain session: sessionId of /v1/login, /v1/auth/df, /v1/extLogin or the hybrid /v2/login' },
      bearerToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The token of /v2/login (HS256, valid while its session lives)' },
      secureTransport: {
        type: 'apiKey',
        in: 'header',
        name: 'Secure-Token',
        description:
          'The session of /v2/login/secure: every request also carries Secure-Counter and Secure-Signature (HMAC-SHA-256), its body and answer are AES-256-CTR encrypted with the symmetricKey of the login',
      },
    },
  };
}

/** The whole document; routes that share a path share a path item. */
export function openApiDocument(routes: readonly Route[], info: DocumentInfo): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    const { path, names } = openApiPath(route.path);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, names);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      description: 'Every JSON answer is the envelope {status: {internalStatus, statusMessage}, data}. Logins answer a credential of one of three kinds: a session id, a JWT, or a secure-transport token.',
    },
    servers: [{ url: info.serverUrl }],
    paths,
    components: components(),
  };
}
