/**
 * `GET {base}/openapi.json` (issue 17): a valid OpenAPI 3.1 document of every route in the route
 * table, whose request schemas accept the README's example bodies, served without credentials under
 * the mount base, and turned off by `openApi: false`.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, test } from 'vitest';
import { Core } from '../src/core.js';
import type { Route } from '../src/http/router.js';
import { HOST_TAG, TAGS } from '../src/openapi/tags.js';
import { call, demoService } from './helpers.js';
import { shellBlocks } from './support/readme.js';

type Operation = { requestBody?: { content: Record<string, { schema: object; example?: unknown }> }; security?: object[]; parameters?: Array<{ name: string; in: string }>; responses?: any };
type Document = { openapi: string; servers: Array<{ url: string }>; paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, any> } };

/** The service's route table, as the service assembles it. */
function routeTable(): Route[] {
  return new Core({}).routes;
}

async function documentOf(options = {}, path = '/openapi.json'): Promise<Document> {
  const service = await demoService(options);
  const answer = await call(service, 'GET', path, { noAppKey: true });
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  return answer.body;
}

/** Each `curl ... -d '...'` of the README: method, path relative to the service root, body, and whether its answer block says 400. */
function readmeBodies(): Array<{ method: string; path: string; body: unknown; refused: boolean; line: string }> {
  // the demo's host routes (section "Host routes") are not in this service; test/host/host-routes.test.ts checks them
  return shellBlocks().filter((block) => block.section !== 'Host routes').flatMap(({ code: script, answer: printed }) => {
    const answer = printed?.language === 'json' ? printed.code : undefined;
    // a `| tr -d '\r'` after a curl is no body of it
    const commands = script.replace(/\\\n\s*/g, ' ').split('\n').map((line) => line.replace(/ \| *tr -d '[^']*'/g, '')).filter((line) => /\bcurl\b.* -d ['"]/.test(line));
    return commands.map((line, i) => {
      const data = /-d '([^']*)'/.exec(line)?.[1] ?? /-d "((?:[^"\\]|\\.)*)"/.exec(line)![1]!.replace(/\$\([^)]*\)/g, 'x').replace(/\\"/g, '"');
      const url = /(?:https?:\/\/)?(?:localhost|127\.0\.0\.1):\d+(\/[^\s'"?]*)/.exec(line)![1]!;
      const last = i === commands.length - 1;
      return {
        method: /-X (\w+)/.exec(line)?.[1] ?? 'POST',
        path: url.slice(url.search(/\/(v1|v2|_Check)/)),
        body: JSON.parse(data),
        refused: last && answer !== undefined && JSON.parse(answer).status.internalStatus === '400',
        line,
      };
    });
  });
}

/** The documented operation that answers `method path` (templates matched segment by segment). */
function operationFor(document: Document, method: string, path: string): Operation | undefined {
  const matching = Object.keys(document.paths).filter((template) => new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`).test(path));
  return matching.map((template) => document.paths[template]![method.toLowerCase()]).find(Boolean);
}

describe('GET /openapi.json', () => {
  let document: Document;
  beforeAll(async () => {
    document = await documentOf();
  });

  test('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(document as unknown as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('documents every route of the route table, :params as {params}', () => {
    const routes = routeTable();
    expect(routes.length).toBeGreaterThan(30);
    for (const route of routes) {
      const path = route.path.replace(/:(\w+)/g, '{$1}');
      const operation = document.paths[path]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${path}`).toBeDefined();
      const names = [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]);
      expect(operation!.parameters?.filter((p) => p.in === 'path').map((p) => p.name) ?? [], `${route.method} ${path}`).toEqual(names);
    }
    const documented = Object.values(document.paths).reduce((sum, item) => sum + Object.keys(item).length, 0);
    expect(documented).toBe(routes.length);
  });

  test('the request schema of each JSON route accepts the README example bodies (and refuses the one the README shows refused)', () => {
    const ajv = new Ajv2020({ strict: true });
    const examples = readmeBodies();
    expect(examples.length).toBeGreaterThanOrEqual(12);
    expect(examples.filter((example) => example.refused)).toHaveLength(1);
    for (const { method, path, body, refused, line } of examples) {
      const schema = operationFor(document, method, path)?.requestBody?.content['application/json']?.schema;
      expect(schema, line).toBeDefined();
      expect(ajv.validate(schema!, body), `${line}\n${ajv.errorsText()}`).toBe(!refused);
    }
  });

  test('query parameters come from the schemas the routes parse them with', () => {
    const listing = document.paths['/v1/objects/{className}']!.get!;
    expect(listing.parameters!.filter((p) => p.in === 'query').map((p) => p.name)).toEqual(['page', 'perPage', 'query', 'orderBy', 'reverseOrder', 'serialization']);
    // the answer's serialization on every write that answers an object (PROTOCOL.md 6.1, 6.3, 6.6)
    for (const [path, method] of [['/v1/object/{id}', 'post'], ['/v1/object/{id}', 'patch'], ['/v1/uploadFile/{id}', 'patch'], ['/v1/object/{id}', 'get']] as const) {
      expect(document.paths[path]![method]!.parameters!.map((p) => p.name), `${method} ${path}`).toContain('serialization');
    }
    const app = document.paths['/v1/2fa/secret']!.get!.parameters!.find((p) => p.name === 'app');
    expect(app).toMatchObject({ in: 'query', required: true, schema: { type: 'string', maxLength: 128 } });
  });

  test('the three credential kinds and the app key are security schemes, required per route', () => {
    const schemes = document.components.securitySchemes;
    expect(schemes.appKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'appkey' });
    expect(schemes.sessionId).toMatchObject({ type: 'apiKey', in: 'header', name: 'sessionId' });
    expect(schemes.bearerToken).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(schemes.secureTransport).toMatchObject({ type: 'apiKey', in: 'header', name: 'Secure-Token' });
    expect(document.paths['/v1/object/{id}']!.get!.security).toEqual([
      { appKey: [], sessionId: [] },
      { appKey: [], bearerToken: [] },
      { appKey: [], secureTransport: [] },
    ]);
    expect(document.paths['/v1/login']!.post!.security).toEqual([{ appKey: [] }]);
    expect(document.paths['/_CheckService']!.get!.security).toEqual([]);
  });

  test('marks the administrators\' routes (x-odbrest-admin), as the route table declares them', () => {
    const marked = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) => ((operation as Record<string, unknown>)['x-odbrest-admin'] ? [`${method.toUpperCase()} ${path} ${(operation as Record<string, unknown>)['x-odbrest-admin']}`] : [])),
    );
    expect(marked.sort()).toEqual(
      [
        'GET /v1/admin/metrics always',
        'GET /v1/admin/requests always',
        'PUT /v1/model/classes/{className} always',
        'DELETE /v1/model/classes/{className} always',
        'GET /v1/users always',
        'POST /v1/user always',
        'PATCH /v1/user/{name} always',
        'GET /v1/sessions for some inputs',
        'DELETE /v1/sessions for some inputs',
        'GET /v1/2fa/secret for some inputs',
      ].sort(),
    );
  });

  test('lists every operation under a tag the document describes, in the order of TAGS', () => {
    const tags = (document as unknown as { tags: Array<{ name: string; description: string }> }).tags;
    expect(tags.map((tag) => tag.name)).toEqual(TAGS.map((tag) => tag.name).filter((name) => tags.some((tag) => tag.name === name)));
    for (const tag of tags) expect(tag.description.length, tag.name).toBeGreaterThan(20);
    const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ at: `${method} ${path}`, op: op as Operation & { tags?: string[] } })));
    for (const { at, op } of operations) {
      expect(op.tags, at).toHaveLength(1);
      expect(tags.map((tag) => tag.name), at).toContain(op.tags![0]);
    }
    // the built-in routes are never "Host routes": each path has its group
    expect(operations.filter(({ op }) => op.tags![0] === HOST_TAG).map(({ at }) => at)).toEqual([]);
  });

  test('every JSON body and answer has an example that its schema accepts; the main routes show the demo\'s real ones', () => {
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ $id: 'doc', components: (document as unknown as { components: object }).components });
    const resolve = (schema: object) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
    let checked = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, any>)) {
        const media = [op.requestBody?.content?.['application/json'], ...Object.values(op.responses as Record<string, any>).map((answer) => answer.content?.['application/json'])].filter((media) => media && media.schema.format !== 'binary'); // a raw answer (this document) is bytes
        for (const { schema, example } of media) {
          expect(example, `${method} ${path}`).toBeDefined();
          expect(ajv.validate(resolve(schema), example), `${method} ${path}: ${JSON.stringify(example).slice(0, 200)}\n${ajv.errorsText()}`).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(200);
    const example = (path: string, method: string, status = '200') => document.paths[path]![method]!.responses[status].content['application/json'].example;
    expect(example('/v1/object/{id}', 'get').data).toMatchObject({ '~ClassName': 'Customer', '~ObjectID': 'CUS00003', Name: 'David Bauer' });
    expect(example('/v1/objects/{className}', 'get').data['~Elements'][0]).toMatchObject({ '~ClassName': 'Customer', City: 'Berlin' });
    expect(example('/v1/login', 'post').data).toMatchObject({ user: { Name: 'alice' }, databaseName: 'demo' });
    expect(document.paths['/v1/login']!.post!.requestBody!.content['application/json']).toMatchObject({ example: { user: 'alice', appNames: ['crm'] } });
    expect(example('/v1/object/{id}', 'get', '404')).toEqual({ status: { internalStatus: '404', statusMessage: 'no object or class NOPE0000' }, data: {} });
  });

  test('shows nothing of the configuration: no internal class, key or secret', async () => {
    const secret = 'a-jwt-secret-that-must-never-be-shown-0123456789';
    const text = JSON.stringify(await documentOf({ session: { jwtSecret: secret }, appKeys: ['hidden-app-key'], objects: { internalClasses: ['AuditEntry'] } }));
    for (const hidden of [secret, 'hidden-app-key', 'AuditEntry', 'OAuthProvider', 'ExternalIdentity']) expect(text).not.toContain(hidden);
  });
});

describe('where it is served', () => {
  test('under the mount base and alias, which the servers entry names', async () => {
    const document = await documentOf({ mount: { basePath: '/api', alias: 'crm' } }, '/api/crm/openapi.json');
    expect(document.servers).toEqual([{ url: '/api/crm' }]);
    expect(document.paths['/v1/login']).toBeDefined();
  });

  test('at the root, the servers entry is /', async () => {
    expect((await documentOf()).servers).toEqual([{ url: '/' }]);
  });

  test('openApi: false leaves the path unrouted', async () => {
    const service = await demoService({ openApi: false });
    const answer = await call(service, 'GET', '/openapi.json');
    expect(answer.status).toBe(404);
    expect(answer.body.status.internalStatus).toBe('404');
  });

  test('the same answer every time (made once per service)', async () => {
    const service = await demoService();
    const [first, second] = [await call(service, 'GET', '/openapi.json'), await call(service, 'GET', '/openapi.json')];
    expect(second.text).toBe(first.text);
  });
});
