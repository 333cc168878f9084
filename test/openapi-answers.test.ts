/**
 * The demo's real answers against its own `/openapi.json` (issue 26: document and service cannot
 * drift apart). Every README curl example (the 'demo curl examples' runner's blocks) runs as printed
 * against `npm start`'s server in a fresh copy, through a recording proxy; then a set of error cases
 * (400, 401, 403, 404, 409, 413). Each answer's status must be documented for its operation, and its
 * JSON body must validate against that response's schema.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { clientPassValue } from '../src/index.js';
import { spawnLines, type LineProcess } from './support/processes.js';
import { blockEnv, claimedBy, freshCopy } from './support/readme.js';

interface Recorded {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: string;
}

type JsonObject = Record<string, any>;

const run = promisify(execFile);
const copy = freshCopy();
let demo: LineProcess;
let demoPort = 0;
let proxy: Server;
let proxyPort = 0;
let document: JsonObject;
const recorded: Recorded[] = [];

/** Forwards to the demo and records each answer whole (no answer the README examples get is a stream). */
function recordingProxy(): Server {
  return createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers.set(name, value);
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    const answer = await fetch(`http://127.0.0.1:${demoPort}${req.url}`, { method: req.method, headers, body, redirect: 'manual' });
    const bytes = Buffer.from(await answer.arrayBuffer());
    recorded.push({ method: req.method!, path: req.url!, status: answer.status, contentType: answer.headers.get('content-type') ?? '', body: bytes.toString('utf8') });
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!['content-encoding', 'transfer-encoding', 'content-length', 'connection'].includes(name)) out[name] = value;
    });
    res.writeHead(answer.status, out).end(bytes);
  });
}

beforeAll(async () => {
  demo = spawnLines(process.execPath, ['examples/node/server.mjs'], blockEnv({ PORT: '0' }), { cwd: copy.dir });
  await demo.waitFor((line) => line.startsWith('curl '));
  demoPort = Number(/listening on http:\/\/localhost:(\d+)/.exec(demo.lines.join('\n'))![1]);
  proxy = recordingProxy();
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyPort = (proxy.address() as AddressInfo).port;
  document = await (await fetch(`http://127.0.0.1:${demoPort}/openapi.json`)).json();
});

afterAll(async () => {
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await demo?.stop();
  copy.remove();
});

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, logger: false });
const validators = new Map<string, ValidateFunction>();

/** The operation a request reaches: the matching path template with the fewest parameters. */
function operation(method: string, url: string): { template: string; op: JsonObject } | undefined {
  const path = new URL(url, 'http://x').pathname;
  const templates = Object.keys(document.paths).filter((template) => new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`).test(path));
  templates.sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0));
  for (const template of templates) {
    const op = document.paths[template][method.toLowerCase()];
    if (op) return { template, op };
  }
  return undefined;
}

/**
 * A schema with every object that lists its members and says nothing of others closed to others
 * (`additionalProperties: false`), so that a member the document does not declare fails. Schemas
 * open on purpose (a served object's fields) say `additionalProperties: true`; the parts of an
 * `allOf` (an error envelope narrowed to its codes) stay as they are, each describing only some members.
 */
function strict(schema: unknown, part = false): any {
  if (Array.isArray(schema)) return schema.map((item) => strict(item, part));
  if (!schema || typeof schema !== 'object') return schema;
  const out: JsonObject = {};
  for (const [name, value] of Object.entries(schema)) out[name] = name === 'examples' || name === 'example' ? value : strict(value, part || name === 'allOf');
  if (out.properties && out.additionalProperties === undefined && !part) out.additionalProperties = false;
  return out;
}

/** What is wrong with an answer by the document (`undefined`: nothing). */
function disagreement(answer: Recorded): string | undefined {
  const found = operation(answer.method, answer.path);
  const where = `${answer.method} ${answer.path} -> ${answer.status}`;
  if (!found) return `${where}: no operation in the document`;
  const response = found.op.responses[String(answer.status)] ?? found.op.responses.default;
  if (!response) return `${where}: status not documented for ${answer.method} ${found.template} (documented: ${Object.keys(found.op.responses).join(', ')})`;
  const mediaType = answer.contentType.split(';')[0]!.trim();
  if (answer.body === '' && !response.content) return undefined;
  const documented = response.content ?? {};
  const content = documented[mediaType] ?? documented[`${mediaType.split('/')[0]}/*`] ?? documented['*/*'];
  if (!content) return `${where}: ${mediaType || 'no content type'} not documented (documented: ${Object.keys(documented).join(', ') || 'no body'})`;
  if (mediaType !== 'application/json' || !content.schema) return undefined;
  const key = `${answer.method} ${found.template} ${answer.status}`;
  let validate = validators.get(key);
  if (!validate) validators.set(key, (validate = ajv.compile(strict({ ...content.schema, components: document.components }))));
  if (validate(JSON.parse(answer.body))) return undefined;
  return `${where}: ${ajv.errorsText(validate.errors, { separator: '; ' }).slice(0, 600)}\n  body: ${answer.body.slice(0, 300)}`;
}

test('every README curl example answers as /openapi.json describes', async () => {
  const examples = claimedBy('demo curl examples');
  expect(examples.length).toBeGreaterThan(40);
  const env = blockEnv();
  for (const block of examples) {
    const command = block.code.trim().replaceAll('http://localhost:8080', `http://127.0.0.1:${proxyPort}`);
    const { stdout } = await run('bash', ['-o', 'pipefail', '-c', command], { cwd: copy.dir, env });
    // the session and two-factor values the next examples use, as the README test carries them on
    for (const line of stdout.split('\n')) {
      try {
        const value = JSON.parse(line) as { data?: Record<string, unknown> };
        if (typeof value?.data?.sessionId === 'string' && command.includes('/v1/login')) env.SID = value.data.sessionId;
        if (typeof value?.data?.token === 'string') env.TOKEN = value.data.token;
        if (typeof value?.data?.secret === 'string') env.SECRET = value.data.secret;
      } catch {
        // a plain text line
      }
    }
  }
  expect(recorded.length).toBeGreaterThan(examples.length);
  expect(recorded.map(disagreement).filter(Boolean)).toEqual([]);
}, 180_000);

test('the error answers (400, 401, 403, 404, 409, 413) are the documented ones', async () => {
  const base = `http://127.0.0.1:${proxyPort}`;
  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    fetch(`${base}${path}`, { method, headers: { appkey: 'demo', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, body });
  const login = async (user: string, password: string, appNames: string[]) =>
    (await (await send('POST', '/v1/login', {}, JSON.stringify({ user, pass: clientPassValue(password), appNames }))).json()).data.sessionId as string;
  const alice = { sessionId: await login('alice', 'alice-secret', ['crm']) };
  const bob = { sessionId: await login('bob', 'bob-secret', ['crm']) };
  const before = recorded.length;
  const read = await (await send('GET', '/v1/object/CUS00002', alice)).json();
  const cases: Array<[status: number, answer: () => Promise<Response>]> = [
    [400, () => send('GET', `/v1/objects/Customer?query=${encodeURIComponent('{"queryString":"City ="}')}`, alice)],
    [400, () => send('GET', `/v1/objects/Customer?query=${encodeURIComponent('{"macro":"nothing"}')}`, alice)],
    [400, () => send('GET', '/v1/objects/Customer?perPage=5000', alice)],
    [400, () => send('POST', '/v1/login', {}, '{"user":7}')],
    [400, () => send('POST', '/v2/objectdata/byQuery', alice, '{"className":"Customer"}')],
    [401, () => send('GET', '/v1/objects/Customer')],
    [401, () => send('GET', '/v1/objects/Customer', { sessionId: 'not-a-session' })],
    [401, () => send('POST', '/v1/login', {}, JSON.stringify({ user: 'alice', pass: clientPassValue('wrong'), appNames: ['crm'] }))],
    [403, () => send('POST', '/v1/object/Customer', bob, '{"Name":"x"}')],
    [404, () => send('GET', '/v1/object/NOSUCH01', alice)],
    [404, () => send('POST', '/v1/execute/nothing', alice, '{}')],
    [404, () => send('GET', '/v1/file/NOSUCH01', alice)],
    [409, () => send('PATCH', '/v1/object/CUS00002', alice, JSON.stringify({ '~StoreTime': '20000101T000000+00:00', City: 'Kiel' }))],
    [413, () => send('POST', '/v1/object/Customer', alice, JSON.stringify({ Name: 'x'.repeat(2 * 1024 * 1024) }))],
  ];
  expect(read['~ObjectID'] ?? read.data['~ObjectID']).toBe('CUS00002');
  for (const [, answer] of cases) await (await answer()).arrayBuffer();
  const answers = recorded.slice(before + 1);
  expect(answers.map((answer) => answer.status)).toEqual(cases.map(([status]) => status));
  expect(answers.map(disagreement).filter(Boolean)).toEqual([]);
}, 60_000);
