/**
 * One request followed (issue 44 item 2): `odbrest serve --otlp URL --log json` as a user runs it, the
 * built CLI in its own process, exporting to an OTLP/HTTP receiver this test starts. A client's request
 * carrying a W3C `traceparent` is answered by a server span of the client's trace (a child of its
 * span), and its JSON log line names the same request id as the answer's `X-Request-Id` header and the
 * same trace id as the client's.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { APP_KEY, loginBody, USERS } from './helpers.js';
import { hex, otlpReceiver, type OtlpReceiver } from './support/otlp.js';
import { spawnLines, type LineProcess } from './support/processes.js';

const cli = new URL('../dist/cli.js', import.meta.url).pathname;
const running: LineProcess[] = [];
const receivers: OtlpReceiver[] = [];
afterAll(async () => {
  await Promise.all(running.map((child) => child.stop()));
  for (const receiver of receivers) receiver.close();
});

const seed = JSON.stringify({
  objects: [
    { '~ClassName': 'User', '~ObjectID': 'USR00001', Name: 'alice', _password: USERS.alice, _licences: ['crm'] },
    { '~ClassName': 'Customer', '~ObjectID': 'CUS00001', Name: 'Hansen', City: 'Hamburg' },
  ],
});

async function serve(args: string[], config = 'port: 0\nhostname: 127.0.0.1\ndataFile: ./data.json\nusers: { passwordIterations: 1000 }\n') {
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-otlp-'));
  writeFileSync(join(dir, 'api-config.yml'), config);
  writeFileSync(join(dir, 'data.json'), seed);
  const child = spawnLines(process.execPath, [cli, 'serve', ...args], {}, { cwd: dir });
  running.push(child);
  // with --log json (or log.format: json) the start-up lines are JSON too: their msg says it
  const said = (line: string) => (line.startsWith('{') ? String(JSON.parse(line).msg ?? '') : line);
  const url = said(await child.waitFor((line) => said(line).startsWith('odbrest listening on '))).slice('odbrest listening on '.length);
  return { child, url };
}

/** The JSON log lines printed so far. */
const jsonLines = (child: LineProcess) => child.lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, any>);


test('--otlp: the client trace id arrives on the server span; --log json: the line names the X-Request-Id and the trace', async () => {
  const otlp = await otlpReceiver();
  receivers.push(otlp);
  const { child, url } = await serve(['--otlp', otlp.url, '--log', 'json']);
  const login = (await (await fetch(`${url}/v1/login`, { method: 'POST', headers: { appkey: APP_KEY, 'content-type': 'application/json' }, body: JSON.stringify(loginBody('alice', USERS.alice)) })).json()) as any;
  const sessionId = login.data.sessionId as string;

  const traceId = hex(32);
  const clientSpan = hex(16);
  const answer = await fetch(`${url}/v1/object/CUS00001`, {
    headers: { appkey: APP_KEY, sessionid: sessionId, traceparent: `00-${traceId}-${clientSpan}-01`, tracestate: 'vendor=value' },
  });
  expect(answer.status).toBe(200);
  const requestId = answer.headers.get('x-request-id')!;
  expect(requestId).toMatch(/^[A-Za-z0-9._-]+$/);

  // the log line of that request: pino's field names, the answer's request id, the client's trace
  const line = await child.waitFor((text) => text.includes(requestId));
  const entry = JSON.parse(line);
  expect(entry).toMatchObject({
    level: 30,
    time: expect.any(Number),
    reqId: requestId,
    req: { id: requestId, method: 'GET', url: '/v1/object/CUS00001', route: '/v1/object/:id' },
    res: { statusCode: 200 },
    internalStatus: '0',
    responseTime: expect.any(Number),
    user: 'alice',
    trace_id: traceId,
    span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
    msg: 'request completed',
  });
  expect(Math.abs(entry.time - Date.now())).toBeLessThan(60_000);
  const refused = await fetch(`${url}/v1/object/CUS00001?serialization=secretvalue`, { headers: { appkey: APP_KEY, sessionid: sessionId } });
  expect(refused.status).toBe(400);
  const refusedLine = JSON.parse(await child.waitFor((text) => text.includes(refused.headers.get('x-request-id')!)));
  expect(refusedLine).toMatchObject({ req: { url: '/v1/object/CUS00001?serialization=***', route: '/v1/object/:id' }, res: { statusCode: 400 }, internalStatus: '400' });
  // no credential, query value or header value in any line
  for (const text of child.lines) for (const secret of [sessionId, 'secretvalue', 'vendor=value', USERS.alice]) expect(text).not.toContain(secret);
  expect(jsonLines(child).filter((logged) => logged.req).map((logged) => logged.req.route)).toEqual(['/v1/login', '/v1/object/:id', '/v1/object/:id']);

  // SIGTERM: pending spans and metrics are exported before the process exits
  await child.stop();
  const spans = otlp.spans();
  const server = spans.find((span: any) => span.name === 'GET /v1/object/:id');
  expect(server, spans.map((span: any) => span.name).join(', ')).toBeDefined();
  expect(server.traceId).toBe(traceId);
  expect(server.parentSpanId).toBe(clientSpan);
  expect(server.spanId).toBe(entry.span_id);
  const attributes = Object.fromEntries(server.attributes.map((attribute: any) => [attribute.key, Object.values(attribute.value)[0]]));
  expect(attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/v1/object/:id', 'url.scheme': 'http', 'server.address': '127.0.0.1' });
  expect(Number(attributes['http.response.status_code'])).toBe(200);
  // the store calls are children of the server span, named by the store's db.system.name
  const children = spans.filter((span: any) => span.parentSpanId === server.spanId);
  expect(children.map((span: any) => span.name)).toEqual(expect.arrayContaining(['get odbrest.memory', 'getAndExpire odbrest.memory']));
  const [exported] = otlp.received.get('/v1/traces')!;
  expect(exported!.body.resourceSpans[0].resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'odbrest' } });
  expect(exported!.contentType).toBe('application/json');
  expect(otlp.metricNames()).toContain('http.server.request.duration');
});

test('a request without traceparent starts its own trace; the text log gains the time and the request id', async () => {
  const otlp = await otlpReceiver();
  receivers.push(otlp);
  const { child, url } = await serve(['--otlp', otlp.url]);
  const answer = await fetch(`${url}/v1/object/CUS00001`, { headers: { appkey: APP_KEY } });
  expect(answer.status).toBe(401);
  const requestId = answer.headers.get('x-request-id')!;
  const line = await child.waitFor((text) => text.includes(requestId));
  expect(line).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z GET /v1/object/CUS00001 401 204 [\\d.]+ms ${requestId.replaceAll('.', '\\.')}$`));
  await child.stop();
  const spans = otlp.spans();
  const server = spans.find((span: any) => span.name === 'GET /v1/object/:id');
  expect(server.parentSpanId ?? '').toBe('');
});

test('log.format: json in the configuration; a wrong --log or --otlp is a usage error', async () => {
  const { child, url } = await serve([], 'port: 0\nhostname: 127.0.0.1\nlog: { format: json }\n');
  const answer = await fetch(`${url}/v1/object/CUS00001`, { headers: { appkey: APP_KEY, 'x-request-id': 'client-chosen-1' } });
  expect(answer.headers.get('x-request-id')).toBe('client-chosen-1');
  const entry = JSON.parse(await child.waitFor((text) => text.includes('client-chosen-1')));
  expect(entry).toMatchObject({ level: 30, reqId: 'client-chosen-1', req: { id: 'client-chosen-1' }, res: { statusCode: 401 }, internalStatus: '204' });
  expect(entry.trace_id).toBeUndefined(); // no SDK: nothing recorded
  await child.stop();
  for (const [args, message] of [
    [['--log', 'xml'], '--log must be text or json'],
    [['--otlp', 'collector:4318'], '--otlp must be an http:// or https:// URL, e.g. http://localhost:4318'],
  ] as const) {
    const wrong = spawnLines(process.execPath, [cli, 'serve', ...args]);
    let stderr = '';
    wrong.child.stderr!.on('data', (chunk: string) => (stderr += chunk));
    expect(await wrong.exited).toBe(2);
    expect(stderr).toContain(message);
  }
});
