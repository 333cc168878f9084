import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig } from '@valibot/to-json-schema';
import type { GenericSchema, ObjectEntries, ObjectSchema } from 'valibot';
import { STATUS_CODES, type StatusCode } from '../http/errors.js';
import type { RawAnswer, Route } from '../http/router.js';
import type { ClassDeclaration, FieldDeclaration, SchemaDeclarations } from '../objects/model/index.js';
import { SHARED_SCHEMAS } from './schemas.js';
import { TAGS, tagOf } from './tags.js';

/**
 * The OpenAPI 3.1 document of a route table (`GET {base}/openapi.json`), made from the routes
 * themselves: their methods and paths, the valibot schemas their handlers parse bodies and queries
 * with, the schemas of their answers (`answerSchema`) and the codes they fail with (`errors`, and
 * those every route of a kind may answer: `errorCodes`). Nothing here describes one route by hand,
 * so the document cannot drift from the code (and the test suite validates the demo's real answers
 * against it). Of the host's configuration it holds the mount path, the name and version it
 * reports, and the declared classes (PROTOCOL.md 6.8), whose objects it describes field by field.
 */

export interface DocumentInfo {
  title: string;
  version: string;
  /** Where the routes are, relative to the document's own address: the base path and alias, or `/`. */
  serverUrl: string;
  /** The declared classes; their objects get a schema each (`Class_<name>`). */
  schema?: SchemaDeclarations;
}

type JsonObject = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/${name}` });
const schemaRef = (name: string) => ref(`schemas/${name}`);

/** The shared answer schemas become `$ref`s to their components wherever a route's schema uses them. */
const CONVERSION: ConversionConfig = {
  target: 'draft-2020-12',
  typeMode: 'input',
  definitions: SHARED_SCHEMAS,
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  // checks of a member's value the document cannot state (a class name's pattern, a body's allowed members)
  ignoreActions: ['check'],
  // `jsonObject` (http/validate.ts): a JSON object taken as it came; a loose object says it is open
  // (an `object` says nothing: a body's extra members are ignored, and the suite holds answers to their members)
  overrideSchema: ({ valibotSchema, jsonSchema }) =>
    valibotSchema.type === 'custom' ? { type: 'object' } : valibotSchema.type === 'loose_object' ? { ...jsonSchema, additionalProperties: true } : undefined,
};

/** A valibot schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), as the client sends it (before transforms). */
function jsonSchema(schema: GenericSchema): JsonObject {
  const { $schema: _dialect, $defs: _shared, ...converted } = toJsonSchema(schema, CONVERSION) as JsonObject;
  return converted;
}

const isOptional = (schema: GenericSchema) => schema.type === 'optional' || schema.type === 'nullish';

/** A route's operation id: its method and path in camel case (`GET /v1/object/:id` -> `getV1ObjectId`), as Swagger UI links it. */
export function operationId(route: Pick<Route, 'method' | 'path'>): string {
  return `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(\w)?/g, (_, next: string | undefined) => (next ?? '').toUpperCase())}`;
}

/**
 * The operations of a route table as the typed client and the studio know them (src/client/operations.ts
 * is this, generated; a test fails when they differ): by operation id, the method, the OpenAPI path and the tag.
 */
export function operationsOf(routes: readonly Route[]): Record<string, { method: string; path: string; tag: string }> {
  const operations: Record<string, { method: string; path: string; tag: string }> = {};
  for (const route of routes) operations[operationId(route)] = { method: route.method, path: openApiPath(route.path).path, tag: tagOf(route) };
  return operations;
}

/** itty's `/v1/object/:id` as OpenAPI's `/v1/object/{id}`, and its parameter names. */
export function openApiPath(path: string): { path: string; names: string[] } {
  const names = [...path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
  return { path: path.replace(/:(\w+)/g, '{$1}'), names };
}

function parameters(route: Route, names: string[]): JsonObject[] {
  const inPath = names.map((name) => {
    const entry = (route.params as ObjectSchema<ObjectEntries, undefined> | undefined)?.entries[name];
    const { description, ...schema } = entry ? jsonSchema(entry) : { type: 'string' };
    return { name, in: 'path', required: true, ...(description ? { description } : {}), schema };
  });
  const inQuery = Object.entries((route.query as ObjectSchema<ObjectEntries, undefined> | undefined)?.entries ?? {}).map(([name, entry]) => {
    const { description, ...schema } = jsonSchema(entry);
    return { name, in: 'query', required: !isOptional(entry), ...(description ? { description } : {}), schema };
  });
  return [...inPath, ...inQuery];
}

/** The secure transport's body (PROTOCOL.md 4): base64 of the AES-256-CTR ciphertext of the JSON. */
const ENCRYPTED = { 'application/text': { schema: schemaRef('Encrypted') } };

/**
 * An example of a JSON Schema's value, for the API reference page: the schema's own (`examples`,
 * `const`, `default`, the first of an `enum`), else one made of its members' examples, else a
 * placeholder of its type. `$ref`s are followed into `schemas` (the document's components).
 */
export function exampleOf(schema: JsonObject, schemas: Record<string, JsonObject>, depth = 0): unknown {
  if (depth > 8) return {};
  if (typeof schema.$ref === 'string') return exampleOf(schemas[schema.$ref.replace('#/components/schemas/', '')] ?? {}, schemas, depth + 1);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const choices = (schema.anyOf ?? schema.oneOf) as JsonObject[] | undefined;
  if (choices) return exampleOf(choices.find((choice) => choice.type !== 'null') ?? choices[0]!, schemas, depth + 1);
  if (Array.isArray(schema.allOf)) {
    const parts = (schema.allOf as JsonObject[]).map((part) => exampleOf(part, schemas, depth + 1));
    return parts.every((part) => part && typeof part === 'object' && !Array.isArray(part)) ? Object.assign({}, ...parts) : parts[0];
  }
  switch (schema.type) {
    case 'object': {
      const properties = Object.entries((schema.properties ?? {}) as Record<string, JsonObject>);
      return Object.fromEntries(properties.map(([name, member]) => [name, exampleOf(member, schemas, depth + 1)]));
    }
    case 'array':
      return schema.items ? [exampleOf(schema.items as JsonObject, schemas, depth + 1)] : [];
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return schema.format === 'date-time' ? '2026-11-21T17:54:08.000Z' : typeof schema.minLength === 'number' && schema.minLength > 6 ? 'x'.repeat(schema.minLength) : 'text';
    default:
      return schema.properties ? exampleOf({ ...schema, type: 'object' }, schemas, depth + 1) : {};
  }
}

/** The message an example failure carries, by code (the codes' meanings, PROTOCOL.md 1.4). */
const EXAMPLE_MESSAGES: Readonly<Record<string, string>> = {
  '100': 'appkey missing or not accepted',
  '201': 'Session is invalid',
  '204': 'no session credential sent',
  '302': 'wrong user name or password',
  '303': 'too many failed logins; try again later',
  '400': 'appNames must be an array of strings or a string',
  '403': 'this session may not do this',
  '404': 'no object or class NOPE0000',
  '409': 'the object changed since it was read',
  '413': 'the body is larger than 1048576 bytes',
  '500': 'internal error',
  '503': 'a storage backend is unreachable; retry later',
};

function requestBody(route: Route, schemas: Record<string, JsonObject>): JsonObject | undefined {
  const content: JsonObject = {};
  if (route.body) {
    const schema = jsonSchema(route.body);
    content['application/json'] = { schema, example: route.examples && 'body' in route.examples ? route.examples.body : exampleOf(schema, schemas) };
  }
  for (const type of route.bodyTypes ?? []) content[type] = { schema: { type: 'string', contentMediaType: type } };
  if (Object.keys(content).length === 0) return undefined;
  if (route.body && route.auth !== 'none') Object.assign(content, ENCRYPTED);
  return { required: route.body ? !isOptional(route.body) : true, content };
}

const rawAnswers = (route: Route): readonly RawAnswer[] => (route.rawAnswer === undefined ? [] : Array.isArray(route.rawAnswer) ? route.rawAnswer : [route.rawAnswer as RawAnswer]);

const headersOf = (headers: Readonly<Record<string, string>> | undefined) =>
  headers && Object.keys(headers).length ? { headers: Object.fromEntries(Object.entries(headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) } : {};

/** The error envelope of some codes (`internalStatus` one of them). */
const errorSchema = (codes: readonly string[]) => ({ allOf: [schemaRef('ErrorEnvelope'), { properties: { status: { properties: { internalStatus: { enum: [...codes] } } } } }] });

/** The body schema of a raw answer's media type (a JSON answer, such as this document, is an object). */
const rawSchema = (contentType: string): JsonObject =>
  contentType === 'application/json' ? { type: 'object' } : contentType === 'text/plain' ? { type: 'string' } : { type: 'string', format: 'binary' };

/** The successful answers, by HTTP status: the envelope with `answerSchema` as `data`, and the raw ones. */
function successes(route: Route, schemas: Record<string, JsonObject>): Record<string, JsonObject> {
  const answers: Record<string, JsonObject> = {};
  if (route.answerSchema || !route.rawAnswer) {
    const data = route.answerSchema ? jsonSchema(route.answerSchema) : { description: route.answer ?? 'see the summary' };
    const schema = { type: 'object', required: ['status', 'data'], properties: { status: schemaRef('SuccessStatus'), data } };
    const example = { status: { internalStatus: '0', statusMessage: 'ok' }, data: route.examples && 'answer' in route.examples ? route.examples.answer : exampleOf(data, schemas) };
    answers[200] = { description: `internalStatus "0"; data: ${route.answer ?? route.summary}`, content: { 'application/json': { schema, example }, ...(route.auth !== 'none' ? ENCRYPTED : {}) } };
  }
  for (const raw of rawAnswers(route)) {
    if (raw.error) continue;
    const content = raw.contentType ? { [raw.contentType]: { schema: rawSchema(raw.contentType), ...(raw.example !== undefined ? { example: raw.example } : {}) } } : undefined;
    const existing = answers[raw.status];
    if (existing) {
      existing.description = `${existing.description as string}; or ${raw.description}`;
      Object.assign(existing.content as JsonObject, content);
    } else {
      answers[raw.status] = { description: raw.description, ...headersOf(raw.headers), ...(content ? { content } : {}) };
    }
  }
  return answers;
}

/**
 * The `internalStatus` codes a route may answer: those every route may (a bad request line or body,
 * a storage outage, an unexpected error), the app key's, the credential's, the body's, and the route's own.
 */
export function errorCodes(route: Route): StatusCode[] {
  const codes = new Set<StatusCode>(['400', '500', '503']);
  if (route.appKey !== false) codes.add('100');
  if (route.auth !== 'none') for (const code of ['201', '204', '205', '403'] as const) codes.add(code);
  if (route.auth === 'objects') codes.add('307');
  if (route.body || route.bodyTypes || route.method !== 'GET') codes.add('413');
  if (route.body || route.bodyTypes) codes.add('415');
  for (const code of route.errors ?? []) codes.add(code);
  return [...codes].sort((a, b) => Number(a) - Number(b));
}

const errorExample = (code: string) => ({ status: { internalStatus: code, statusMessage: EXAMPLE_MESSAGES[code] ?? `failed with ${code}` }, data: {} });

/** The failures, one response per HTTP status, each the error envelope with the codes of that status. */
function failures(route: Route): Record<string, JsonObject> {
  const byStatus = new Map<number, StatusCode[]>();
  for (const code of errorCodes(route)) {
    const status = STATUS_CODES[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const answers: Record<string, JsonObject> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const retry = status === 429 || status === 503 ? { headers: { 'Retry-After': { description: 'seconds to wait before trying again', schema: { type: 'string' } } } } : {};
    const encrypted = route.auth !== 'none' && !['204', '205'].includes(codes[0]!) ? ENCRYPTED : {};
    answers[status] = {
      description: `internalStatus ${codes.map((code) => `"${code}"`).join(', ')}`,
      ...retry,
      content: { 'application/json': { schema: errorSchema(codes), example: errorExample(codes[0]!) }, ...encrypted },
    };
  }
  for (const raw of rawAnswers(route)) {
    if (raw.error) answers[raw.status] = { description: raw.description, ...headersOf(raw.headers), content: { 'application/json': { schema: errorSchema([raw.error]), example: errorExample(raw.error) } } };
  }
  return answers;
}

/** Who may call a route, as OpenAPI security requirements (any one of the listed sets). */
function security(route: Route): JsonObject[] {
  if (route.auth !== 'none') return ['sessionId', 'bearerToken', 'secureTransport'].map((credential) => ({ appKey: [], [credential]: [] }));
  return route.appKey === false ? [] : [{ appKey: [] }];
}

function operation(route: Route, names: string[], schemas: Record<string, JsonObject>): JsonObject {
  const body = requestBody(route, schemas);
  const params = parameters(route, names);
  return {
    operationId: operationId(route),
    tags: [tagOf(route)],
    summary: route.summary,
    ...(route.answer ? { description: `Answers: ${route.answer}.` } : {}),
    // who administers (PROTOCOL.md 2.8, 6.12 *admin*): members of users.admins, checked by the dispatcher
    ...(route.admin ? { 'x-odbrest-admin': route.admin === true ? 'always' : 'for some inputs' } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: { ...successes(route, schemas), ...failures(route) },
    security: security(route),
  };
}

/** One declared field as JSON Schema (PROTOCOL.md 6.8); fields that are not required may also be null. */
function fieldSchema(declaration: FieldDeclaration): JsonObject {
  const d = typeof declaration === 'string' ? { type: declaration } : declaration;
  const nullable = (schema: JsonObject): JsonObject => (d.required ? schema : { anyOf: [schema, { type: 'null' }] });
  const of = d.class ? ` (${d.class})` : '';
  switch (d.type) {
    case 'string':
      return nullable({ type: 'string', ...(d.maxLength !== undefined ? { maxLength: d.maxLength } : {}), ...(d.enum ? { enum: [...d.enum] } : {}) });
    case 'number':
    case 'integer':
      return nullable({ type: d.type, ...(d.min !== undefined ? { minimum: d.min } : {}), ...(d.max !== undefined ? { maximum: d.max } : {}), ...(d.enum ? { enum: [...d.enum] } : {}) });
    case 'boolean':
      return nullable({ type: 'boolean' });
    case 'date':
      return nullable({ type: 'string', description: 'a date: ISO 8601 or the ~StoreTime form' });
    case 'json':
      return { description: 'any JSON value' };
    case 'ref':
    case 'file':
      return { anyOf: [{ ...schemaRef('ObjectReference'), description: `a reference${of}` }, { type: 'null' }] };
    case 'set':
      return {
        type: 'object',
        description: `a set of references${of}`,
        required: ['~Count', '~UnfilteredCount', '~Elements'],
        properties: { '~Count': { type: 'integer' }, '~UnfilteredCount': { type: 'integer' }, '~Elements': { type: 'array', items: schemaRef('ObjectReference') } },
      };
    default:
      return {};
  }
}

/** A declared class's serialized objects: the `~` members and the declared fields (only those when `strict`). */
function classSchema(name: string, declaration: ClassDeclaration): JsonObject {
  const fields = Object.entries(declaration.fields ?? {});
  // what `required` fields and ~ members an answer holds is the `serialization`'s choice (6.1): only ~ObjectID is always there
  return {
    type: 'object',
    description: `an object of the declared class ${name}`,
    required: ['~ObjectID'],
    properties: { '~ClassName': { const: name }, '~ObjectID': { type: 'string' }, '~StoreTime': { type: 'string' }, ...Object.fromEntries(fields.map(([field, d]) => [field, fieldSchema(d)])) },
    // a strict class holds only its declared fields; any other may hold undeclared ones too
    ...(declaration.strict ? { patternProperties: { '^~': {} }, additionalProperties: false } : { additionalProperties: true }),
  };
}

const className = (name: string) => `Class_${name}`;

function components(declared: SchemaDeclarations): JsonObject {
  const { definitions: _own, ...config } = CONVERSION;
  const shared = toJsonSchemaDefs(SHARED_SCHEMAS, config) as unknown as Record<string, JsonObject>;
  const classes = Object.keys(declared);
  // references inside objects are described only for the fields of declared classes
  const named = Object.fromEntries(Object.entries(shared).filter(([name]) => classes.length > 0 || name !== 'ObjectReference').map(([name, schema]) => [name, withoutDialect(schema)]));
  // an object of a declared class is checked against that class's schema, any other is schemaless
  named.ServedObject = {
    ...named.ServedObject,
    ...(classes.length ? { allOf: classes.map((name) => ({ if: { properties: { '~ClassName': { const: name } }, required: ['~ClassName'] }, then: schemaRef(className(name)) })) } : {}),
  };
  const codes = Object.keys(STATUS_CODES).filter((code) => code !== '0');
  return {
    schemas: {
      ...named,
      ...Object.fromEntries(classes.map((name) => [className(name), classSchema(name, declared[name]!)])),
      SuccessStatus: {
        type: 'object',
        required: ['internalStatus', 'statusMessage'],
        properties: { internalStatus: { const: '0' }, statusMessage: { type: 'string' }, debugMessage: { type: 'string' } },
      },
      ErrorEnvelope: {
        type: 'object',
        description: 'A failure: the envelope with an internalStatus code, answered with the HTTP status of that code',
        required: ['status', 'data'],
        properties: {
          status: {
            type: 'object',
            required: ['internalStatus', 'statusMessage'],
            properties: {
              internalStatus: { type: 'string', enum: codes, description: 'the failure (PROTOCOL.md 1.4); always a string' },
              statusMessage: { type: 'string', description: 'what happened, in words a person can act on' },
              debugMessage: { type: 'string' },
            },
          },
          data: { type: 'object', description: '{} unless stated (a 340 answer carries the setup session in sessionId)' },
        },
      },
      Encrypted: {
        type: 'string',
        contentEncoding: 'base64',
        description: 'The secure transport (a Secure-Token session): base64 of the AES-256-CTR ciphertext of the JSON; signed with Secure-Counter and Secure-Signature',
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
          'The session of /v2/login/secure: every request also carries Secure-Counter and Secure-Signature (HMAC-SHA-256), its body and answer are AES-256-CTR encrypted with the symmetricKey of the login (application/text)',
      },
    },
  };
}

function withoutDialect(schema: JsonObject): JsonObject {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/** The whole document; routes that share a path share a path item. */
export function openApiDocument(routes: readonly Route[], info: DocumentInfo): JsonObject {
  const shared = components(info.schema ?? {});
  const schemas = shared.schemas as Record<string, JsonObject>;
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    const { path, names } = openApiPath(route.path);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, names, schemas);
  }
  const used = new Set(routes.map(tagOf));
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      description: 'Every JSON answer is the envelope {status: {internalStatus, statusMessage}, data}. Logins answer a credential of one of three kinds: a session id, a JWT, or a secure-transport token.',
    },
    servers: [{ url: info.serverUrl }],
    tags: TAGS.filter((tag) => used.has(tag.name)).map(({ name, description }) => ({ name, description })),
    paths,
    components: shared,
  };
}
