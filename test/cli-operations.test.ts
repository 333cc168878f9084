/**
 * Operating `odbrest serve` (issue 29): metrics for Prometheus on their own port, readiness and
 * liveness for orchestrators, and a graceful shutdown that answers the requests in flight.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { APP_KEY, call, loginBody, USERS } from './helpers.js';
import { freePort, remoteService, spawnLines, type LineProcess } from './support/processes.js';

const cli = new URL('../dist/cli.js', import.meta.url).pathname;
const running: LineProcess[] = [];
afterAll(() => Promise.all(running.map((child) => child.stop())));

const seed = JSON.stringify({
  objects: [
    { '~ClassName': 'User', '~ObjectID': 'USR00001', Name: 'alice', _password: USERS.alice, _licences: ['crm'] },
    { '~ClassName': 'Customer', '~ObjectID': 'CUS00001', Name: 'Hansen', City: 'Hamburg' },
  ],
});

/** The value of the first sample of `name` whose labels include `labels` (in any order), in Prometheus text. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([label, value]) => line.includes(`${label}="${value}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

async function serve(args: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-ops-'));
  writeFileSync(join(dir, 'api-config.yml'), 'port: 0\nhostname: 127.0.0.1\nrequestLog: false\ndataFile: ./data.json\nusers: { passwordIterations: 1000 }\n');
  writeFileSync(join(dir, 'data.json'), seed);
  const child = spawnLines(process.execPath, [cli, 'serve', ...args], {}, { cwd: dir });
  running.push(child);
  const url = (await child.waitFor((line) => line.startsWith('odbrest listening on '))).slice('odbrest listening on '.length);
  return { child, url, service: remoteService(url) as never };
}

test('--metrics serves request durations by route template, logins by result and store calls for Prometheus', async () => {
  const port = await freePort();
  const { child, url, service } = await serve(['--metrics', String(port)]);
  expect(await child.waitFor((line) => line.startsWith('odbrest metrics'))).toBe(`odbrest metrics for Prometheus at http://127.0.0.1:${port}/metrics`);
  const login = await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice) });
  await call(service, 'POST', '/v1/login', { json: loginBody('alice', 'wrong') });
  await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: login.body.data.sessionId } });
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  expect(sample(text, 'http_server_request_duration_count', { http_route: '/v1/object/:id', http_response_status_code: '200' })).toBe(1);
  expect(sample(text, 'odbrest_login_attempts_total', { odbrest_login_result: '302' })).toBe(1);
  expect(sample(text, 'odbrest_login_attempts_total', { odbrest_login_result: '0' })).toBe(1);
  expect(sample(text, 'db_client_operation_duration_count', { db_operation_name: 'get', db_system_name: 'odbrest.memory' })).toBeGreaterThan(0);
  expect(text).not.toContain('CUS00001');
  expect(url).not.toContain(String(port));
});

test('readiness and liveness need no app key; SIGTERM drains: the request in flight is answered, then the process exits 0', async () => {
  const { child, url, service } = await serve();
  const live = await call(service, 'GET', '/_CheckLive', { noAppKey: true });
  const ready = await call(service, 'GET', '/_CheckReady', { noAppKey: true });
  expect([live.body.status.internalStatus, ready.body.status.internalStatus]).toEqual(['0', '0']);

  // a login whose body is still arriving when the signal comes
  const target = new URL(`${url}/v1/login`);
  const body = JSON.stringify(loginBody('alice', USERS.alice));
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(target, { method: 'POST', headers: { appkey: APP_KEY, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.write(body.slice(0, 10));
    setTimeout(() => {
      child.child.kill('SIGTERM');
      setTimeout(() => req.end(body.slice(10)), 300);
    }, 200);
  });
  const { status, text } = await answer;
  expect(status).toBe(200);
  expect(JSON.parse(text).status.internalStatus).toBe('0');
  expect(await child.exited).toBe(0);
});
