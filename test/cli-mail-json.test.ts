/**
 * `odbrest serve --log json` (issue 51, part 5) with the mail configuration of docs/accounts.md
 * ("Mail", run as printed but for the SMTP port): the CLI runs as a process, every line on its
 * standard output is JSON, a reset's mail reaches a real SMTP server, and an unexpected error is one
 * JSON line with `err` and the request's `reqId`, not a text stack on standard error.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { clientPassValue } from '../src/index.js';
import { readme, readmeBlocks, root } from './support/readme.js';
import { startSmtp, type TestSmtp } from './support/smtp.js';

let smtp: TestSmtp | undefined;
let stop: (() => void) | undefined;
afterAll(async () => {
  stop?.();
  await smtp?.close();
});

test('serve --log json: JSON lines only, the documented mail configuration mails a reset, an error is one line with err and reqId', async () => {
  smtp = await startSmtp();
  const block = readmeBlocks(readme('docs/accounts.md'), 'docs/accounts.md').find((b) => b.section === 'Mail' && b.language === 'yaml');
  expect(block, 'docs/accounts.md, "Mail": the yaml block').toBeDefined();
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-mail-'));
  writeFileSync(
    join(dir, 'data.json'),
    JSON.stringify({ objects: [{ '~ClassName': 'User', '~ObjectID': 'USRMAIL1', Name: 'erin', Email: 'erin@example.com', _password: 'erin-first-secret', _licences: ['crm'] }] }),
  );
  writeFileSync(join(dir, 'macros.mjs'), "export function explode() { throw new TypeError('the macro broke'); }\n");
  const config = `${block!.code.replace('127.0.0.1:2525', `127.0.0.1:${smtp.port}`)}dataFile: data.json\nmacros: ./macros.mjs\n`;
  writeFileSync(join(dir, 'api-config.yml'), config);
  const child = spawn(process.execPath, [join(root, 'dist/cli.js'), 'serve', '--config', join(dir, 'api-config.yml'), '--port', '0', '--host', '127.0.0.1', '--log', 'json'], { cwd: dir, env: { ...process.env, ODBREST_CONFIG: '' } });
  stop = () => child.kill('SIGTERM');
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk));
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk));
  const lines = () => stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, any>);
  const until = async (what: string, found: () => boolean) => {
    for (let i = 0; i < 400 && !found(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    if (!found()) throw new Error(`${what} did not come; stdout:\n${stdout}\nstderr:\n${stderr}`);
  };
  await until('the listening line', () => stdout.includes('listening on'));
  const listening = lines().find((line) => String(line.msg).startsWith('odbrest listening on'))!;
  expect(listening).toMatchObject({ level: 30, pid: child.pid, hostname: hostname() });
  const base = /http:\/\/\S+/.exec(listening.msg)![0];
  const post = (path: string, json: unknown, headers: Record<string, string> = {}) =>
    fetch(base + path, { method: 'POST', headers: { appkey: 'test', 'content-type': 'application/json', ...headers }, body: JSON.stringify(json) });

  const asked = await post('/v1/user/password/reset', { user: 'erin' });
  expect(((await asked.json()) as any).status.internalStatus).toBe('0');
  const mail = await smtp.mail(1);
  expect(mail.subject).toBe('Reset your password');
  const token = new URL(/https:\/\/app\.example\.com\/reset\?\S+/.exec(mail.text!)![0]).searchParams.get('token')!;
  const confirmed = await post('/v1/user/password/reset/confirm', { token, newPass: 'erin-second-secret' });
  expect(((await confirmed.json()) as any).status.internalStatus).toBe('0');

  const login = (await (await post('/v1/login', { user: 'erin', pass: clientPassValue('erin-second-secret'), appNames: ['crm'] })).json()) as any;
  expect(login.status.internalStatus).toBe('0');
  const broken = await post('/v1/execute/explode', {}, { sessionId: login.data.sessionId });
  expect(broken.status).toBe(500);
  const requestId = broken.headers.get('x-request-id');
  await until('the error line', () => stdout.includes('the macro broke'));

  const all = lines(); // every line parses as JSON, or lines() has thrown
  const requests = all.filter((line) => line.req !== undefined);
  expect(requests.length).toBeGreaterThanOrEqual(4);
  for (const line of requests) expect(line).toMatchObject({ level: 30, pid: child.pid, hostname: hostname() });
  const error = all.find((line) => line.err !== undefined)!;
  expect(error).toMatchObject({ level: 50, pid: child.pid, reqId: requestId, err: { type: 'TypeError', message: 'the macro broke' } });
  expect(error.err.stack).toContain('macros.mjs');
  expect(stderr).not.toContain('the macro broke');
  expect(stderr).not.toMatch(/\n\s+at /);
});
