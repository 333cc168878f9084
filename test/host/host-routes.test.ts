/**
 * Host routes (PROTOCOL.md 6.10) and the typed OpenAPI document (issue 26): a host route answers with
 * the envelope under every credential kind and inside /v1/multi, refuses a bad body naming the field,
 * may not shadow a built-in route, and every answer of these requests (successes and failures) is
 * valid against the operation's response schema in /openapi.json, which @redocly/cli lints with no error.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as v from 'valibot';
import { beforeAll, describe, expect, test } from 'vitest';
import { ApiError, createService, defineRoute, type Service } from '../../src/index.js';
import { call, demoService, login, loginToken, type CallResult } from '../helpers.js';

const settings = defineRoute({
  method: 'POST',
  path: 'v1/userSetting/:key',
  summary: "Stores one of the session user's settings",
  body: v.object({ value: v.pipe(v.string(), v.maxLength(200)) }),
  answer: v.object({ key: v.string(), value: v.string() }),
  handler: async (_context, params, body) => ({ key: params.key!, value: body.value }),
});
const unread = defineRoute({
  method: 'GET',
  path: 'v1/personal/unreadDocuments',
  query: v.object({ limit: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, 'limit must be a number'))) }),
  answer: v.object({ count: v.number(), user: v.nullable(v.string()) }),
  errors: ['404'],
  handler: async (context, _params, _body, query) => {
    if (query.limit === '0') throw new ApiError('404', 'nothing to show');
    const user = await context.user();
    return { count: await context.store.count('Document'), user: (user?.fields.Name as string | undefined) ?? null };
  },
});
const open = defineRoute({ method: 'GET', path: '/v1/public/motd', public: true, answer: v.object({ motd: v.string() }), handler: () => ({ motd: 'hello' }) });

type Document = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>> };

let service: Service;
let document: Document;
let ajv: Ajv2020;
beforeAll(async () => {
  service = await demoService({
    routes: [settings, unread, open],
    schema: { Customer: { fields: { Name: { type: 'string', required: true }, City: 'string', Revenue: 'number' } } },
  });
  document = (await call(service, 'GET', '/openapi.json')).body;
  ajv = new Ajv2020({ strict: false });
  ajv.addSchema({ ...document, $id: 'doc' } as object);
});

/** Checks an answer against the response schema its method, path template and HTTP status document. */
function conforms(template: string, method: string, answer: CallResult): void {
  const responses = document.paths[template]?.[method.toLowerCase()]?.responses;
  expect(responses, `${method} ${template}`).toBeDefined();
  const response = responses![String(answer.status)];
  expect(response, `${method} ${template} documents HTTP ${answer.status} (${answer.text.slice(0, 200)})`).toBeDefined();
  const pointer = `doc#/paths/${template.replaceAll('~', '~0').replaceAll('/', '~1')}/${method.toLowerCase()}/responses/${answer.status}/content/application~1json/schema`;
  const validate = ajv.getSchema(pointer)!;
  expect(validate(answer.body), `${method} ${template} ${answer.status}: ${ajv.errorsText(validate.errors)}\n${answer.text.slice(0, 300)}`).toBe(true);
}

describe('host routes', () => {
  test('answer with the envelope for every credential kind, and conform to the document', async () => {
    const sid = await login(service);
    const token = await loginToken(service);
    const stored = await call(service, 'POST', '/v1/userSetting/theme', { headers: { sessionId: sid }, json: { value: 'dark' } });
    expect(stored.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { key: 'theme', value: 'dark' } });
    conforms('/v1/userSetting/{key}', 'POST', stored);
    const read = await call(service, 'GET', '/v1/personal/unreadDocuments', { headers: { authorization: `Bearer ${token}` } });
    expect(read.body.data).toMatchObject({ user: 'alice' });
    conforms('/v1/personal/unreadDocuments', 'GET', read);
    conforms('/v1/public/motd', 'GET', await call(service, 'GET', '/v1/public/motd'));
  });

  test('refuse a missing credential, a missing app key, a bad body and a thrown ApiError, each documented', async () => {
    const sid = await login(service);
    const cases: Array<[string, string, string, Parameters<typeof call>[3], string]> = [
      ['POST', '/v1/userSetting/theme', '/v1/userSetting/{key}', { json: { value: 'x' } }, '204'],
      ['POST', '/v1/userSetting/theme', '/v1/userSetting/{key}', { headers: { sessionId: sid }, json: { value: 5 } }, '400'],
      ['POST', '/v1/userSetting/theme', '/v1/userSetting/{key}', { headers: { sessionId: sid }, body: '{"value":"x"}' }, '415'],
      ['POST', '/v1/userSetting/theme', '/v1/userSetting/{key}', { headers: { sessionId: 'nope' }, json: { value: 'x' } }, '201'],
      ['GET', '/v1/personal/unreadDocuments?limit=0', '/v1/personal/unreadDocuments', { headers: { sessionId: sid } }, '404'],
      ['GET', '/v1/personal/unreadDocuments?limit=x', '/v1/personal/unreadDocuments', { headers: { sessionId: sid } }, '400'],
      ['GET', '/v1/public/motd', '/v1/public/motd', { noAppKey: true }, '100'],
      // built-in routes' failures, typed too
      ['GET', '/v1/object/NOPE0000', '/v1/object/{id}', { headers: { sessionId: sid } }, '404'],
      ['GET', '/v1/objects/Customer?perPage=x', '/v1/objects/{className}', { headers: { sessionId: sid } }, '400'],
      ['POST', '/v1/login', '/v1/login', { json: { user: 'alice', pass: 'wrong', appNames: ['crm'] } }, '302'],
      ['POST', '/v1/multi', '/v1/multi', { headers: { sessionId: sid }, json: {} }, '400'],
    ];
    for (const [method, path, template, options, code] of cases) {
      const answer = await call(service, method, path, options);
      expect(answer.body?.status?.internalStatus, `${method} ${path}: ${answer.text}`).toBe(code);
      conforms(template, method, answer);
    }
    const bad = await call(service, 'POST', '/v1/userSetting/theme', { headers: { sessionId: sid }, json: { value: 5 } });
    expect(bad.body.status.statusMessage).toMatch(/value/);
  });

  test('run as /v1/multi items, and the batch answer conforms', async () => {
    const sid = await login(service);
    const batch = await call(service, 'POST', '/v1/multi', {
      headers: { sessionId: sid },
      json: [
        { method: 'POST', path: '/v1/userSetting/lang', data: { value: 'de' } },
        { method: 'GET', path: '/v1/object/CUS00003' },
        { method: 'GET', path: '/v1/objects/Customer?perPage=2' },
      ],
    });
    expect(batch.body.data.map((item: { httpStatus: number }) => item.httpStatus)).toEqual([200, 200, 200]);
    expect(batch.body.data[0].result.data).toEqual({ key: 'lang', value: 'de' });
    conforms('/v1/multi', 'POST', batch);
    conforms('/v1/object/{id}', 'GET', await call(service, 'GET', '/v1/object/CUS00003', { headers: { sessionId: sid } }));
    conforms('/v1/objects/{className}', 'GET', await call(service, 'GET', '/v1/objects/Customer?perPage=3', { headers: { sessionId: sid } }));
  });

  test('a declared class is a schema of its own, and a served object that breaks it does not conform', () => {
    const validate = ajv.getSchema('doc#/components/schemas/ServedObject')!;
    expect(validate({ '~ClassName': 'Customer', '~ObjectID': 'C1', '~StoreTime': 't', Name: 'A', Revenue: 5 })).toBe(true);
    expect(validate({ '~ClassName': 'Customer', '~ObjectID': 'C1', '~StoreTime': 't', Name: 'A', Revenue: 'five' })).toBe(false);
    expect(validate({ '~ClassName': 'Other', '~ObjectID': 'C1', '~StoreTime': 't', Revenue: 'five' })).toBe(true);
  });

  test('a host route that shadows a built-in route, or another host route, is a start-up error', () => {
    const handler = () => ({});
    expect(() => createService({ routes: [{ method: 'GET', path: 'v1/object/:thing', handler }] })).toThrow(/shadows the built-in route GET \/v1\/object\/:id/);
    expect(() => createService({ routes: [{ method: 'GET', path: 'v1/objects/special', handler }] })).toThrow(/shadows/);
    expect(() => createService({ routes: [{ method: 'GET', path: 'openapi.json', handler }] })).toThrow(/shadows/);
    expect(() => createService({ routes: [{ method: 'GET', path: 'v1/a/:x', handler }, { method: 'GET', path: 'v1/a/b', handler }] })).toThrow(/shadows the host route/);
    expect(() => createService({ routes: [{ method: 'GET', path: 'v1/bad path', handler }] })).toThrow(/routes\[0\]\.path/);
    expect(() => createService({ routes: [{ method: 'POST', path: 'v1/object/:x/extra', handler }] })).not.toThrow();
  });
});

test('@redocly/cli lint (recommended rules) finds no error in the document', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'odbrest-openapi-')), 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const cli = new URL('../../node_modules/@redocly/cli/bin/cli.js', import.meta.url).pathname;
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
  const result = await promisify(execFile)(process.execPath, [cli, 'lint', file, '--format', 'json'], { env, maxBuffer: 64 * 1024 * 1024 }).catch((error) => error);
  const report = JSON.parse(result.stdout);
  const errors = report.problems.filter((problem: { severity: string }) => problem.severity === 'error');
  expect(errors.map((problem: { message: string }) => problem.message)).toEqual([]);
  expect(report.totals.errors).toBe(0);
}, 60_000);
