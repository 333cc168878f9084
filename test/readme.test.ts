/**
 * The README's promises: `npm start`'s server (examples/node/server.mjs) serves the demo, and every
 * `curl` example in its "Endpoints" and "Files" sections, run as printed, answers what the README shows
 * (except session ids, tokens, times, the ids of uploaded files and the two-factor enrolment's secret,
 * which differ on every run; the
 * two-factor walkthrough's codes come from examples/totp.mjs); and the "Secure login" section's client
 * example and Python client (an independent implementation of the wire format) print what they say,
 * and its test-vector table holds the vectors test/secure/vectors.test.ts checks.
 */
import { spawnSync, execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { COUNTER_BLOCKS, GET_SIGNATURE, M_HEX, RESPONSE_BODY, RESPONSE_PLAIN, RESPONSE_SIGNATURE } from './secure/vectors.js';
import { spawnLines, type LineProcess } from './support/processes.js';
import { requireOrSkip } from './support/servers.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
/** Members that differ on every run (the two-factor enrolment's secret and what is made of it included). */
const VOLATILE = new Set(['sessionId', 'token', 'expiresAt', '~StoreTime', 'secret', 'otpauthUri', 'qrCode', 'backupCodes']);

/**
 * The `sh` blocks of the "Endpoints" and "Files" sections followed by the answer they print: a `json`
 * block (compared as JSON, `volatile` members by type only) or, in "Files", a `text` block (compared as text).
 */
function examples(): Array<{ command: string; answer?: unknown; text?: string; volatile: ReadonlySet<string> }> {
  const endpoints = [...section('Endpoints').matchAll(/```sh\n([\s\S]*?)```\n```json\n([\s\S]*?)```/g)].map(([, command, answer]) => ({
    command: command!.trim(),
    answer: JSON.parse(answer!),
    volatile: VOLATILE,
  }));
  // uploads make objects with new ids
  const files = [...section('Files').matchAll(/```sh\n([\s\S]*?)```\n```(json|text)\n([\s\S]*?)```/g)].map(([, command, kind, answer]) => ({
    command: command!.trim(),
    ...(kind === 'json' ? { answer: JSON.parse(answer!) } : { text: answer! }),
    volatile: new Set([...VOLATILE, '~ObjectID']),
  }));
  return [...endpoints, ...files];
}

function normalize(value: unknown, volatile: ReadonlySet<string> = VOLATILE): unknown {
  if (Array.isArray(value)) return value.map((item) => normalize(item, volatile));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, volatile.has(k) ? typeof v : normalize(v, volatile)]));
  }
  return value;
}

let server: LineProcess;
let port = 0;

beforeAll(async () => {
  server = spawnLines(process.execPath, ['examples/node/server.mjs'], { PORT: '0' }, { cwd: root });
  await server.waitFor((line) => line.startsWith('curl '));
  port = Number(/listening on http:\/\/localhost:(\d+)/.exec(server.lines.join('\n'))![1]);
});

afterAll(() => server?.stop());

test('the README\'s secure transport test vectors are the ones the vector tests check', () => {
  const readme = readFileSync(`${root}README.md`, 'utf8');
  const start = readme.indexOf('Test vectors (`test/secure/vectors.test.ts`)');
  expect(start).toBeGreaterThan(0);
  const table = readme.slice(start, readme.indexOf('\n\n', readme.indexOf('\n|', start)));
  const lines = table.split('\n').filter((line) => line.startsWith('|'));
  expect(lines.slice(0, 2)).toEqual(['| | value |', '|---|---|']);
  const rows = lines.slice(2).map((line) => /^\| (.+) \| (\S+(?: \S+)*) \|$/.exec(line)?.slice(1) ?? line);
  const [n, request, answer] = COUNTER_BLOCKS.find(([n]) => n === 4294967297)!;
  expect(rows).toEqual([
    ['`M` (hex)', `\`${M_HEX}\``],
    [`counter blocks, \`n\` = ${n}`, `request \`${request}\`, answer \`${answer}\``],
    [`body of answer 7 (counter block (7, 1)), plaintext \`${RESPONSE_PLAIN}\``, `\`${RESPONSE_BODY}\``],
    ['`Secure-Signature` of that answer (status 200)', `\`${RESPONSE_SIGNATURE}\``],
    ['`Secure-Signature` of request 8, `GET /v1/object/USR00001`, no body', `\`${GET_SIGNATURE}\``],
  ]);
});

test('the README has a checked example for every core endpoint', () => {
  const commands = examples().map((example) => example.command).join('\n');
  for (const path of ['/v1/login', '/v2/login', '/v1/auth/df', '/v1/object/', '/v1/objects/', '/v1/execute/', '/v1/logout', '/_CheckSession', '/_CheckService', '/v1/multi', '/v1/2fa/secret', '/v1/uploadFile', '/v1/file/']) {
    expect(commands).toContain(path);
  }
});

test('every curl example answers as printed', async () => {
  const env: Record<string, string> = {};
  for (const { command, answer, text, volatile } of examples()) {
    const { stdout } = await run('bash', ['-c', command.replaceAll('http://localhost:8080', `http://localhost:${port}`)], {
      env: { ...process.env, ...env },
    });
    if (text !== undefined) {
      expect(stdout, command).toBe(text.trimEnd());
      continue;
    }
    const got = JSON.parse(stdout);
    expect(normalize(got, volatile), command).toEqual(normalize(answer, volatile));
    if (typeof got.data?.sessionId === 'string' && command.includes('/v1/login')) env.SID = got.data.sessionId;
    if (typeof got.data?.token === 'string') env.TOKEN = got.data.token;
    if (typeof got.data?.secret === 'string') env.SECRET = got.data.secret; // the two-factor walkthrough's codes
  }
});

test('the start-up banner prints a curl line that logs in', async () => {
  const line = server.lines.find((text) => text.startsWith('curl '))!;
  const { stdout } = await run('bash', ['-c', line]);
  expect(JSON.parse(stdout)).toMatchObject({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { user: { Name: 'alice' }, databaseName: 'demo' } });
});

/** The text of one `## ` section of the README. */
function section(title: string): string {
  const readme = readFileSync(`${root}README.md`, 'utf8');
  const start = readme.indexOf(`## ${title}\n`);
  expect(start, title).toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start + 5);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The fenced code blocks of a README section in one language, in order. */
const blocks = (text: string, language: string) => [...text.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);

/** The first fenced code block of the README's "Secure login" section in a language. */
const secureBlock = (language: string): string => blocks(section('Secure login'), language)[0]!;

/** The `// value` comments of a code block, in order. */
const promised = (code: string, comment: string) => [...code.matchAll(new RegExp(`${comment} (.+)$`, 'gm'))].map((m) => m[1]!.trim());

test('the client example prints what its comments say', async () => {
  const code = secureBlock('ts');
  // The example is TypeScript only in one type argument; it runs against the built package.
  const script = code
    .replace('<{ count: number }>', '')
    .replace("'odbrest/client'", JSON.stringify(new URL('dist/client.js', `file://${root}`).href))
    .replaceAll('http://localhost:8080', `http://localhost:${port}`);
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-readme-'));
  writeFileSync(join(dir, 'example.mjs'), script);
  const { stdout } = await run(process.execPath, [join(dir, 'example.mjs')]);
  const expected = promised(code, '//').filter((value) => /^(alice|404)/.test(value));
  expect(stdout.trim().split('\n')).toEqual(expected);
});

const hasPythonCrypto =
  spawnSync('python3', ['-c', 'import cryptography'], { stdio: 'ignore' }).status === 0 ||
  requireOrSkip('python3 with the cryptography package', "the README's Python client");

test.skipIf(!hasPythonCrypto)('the Python client logs in securely and prints what its comments say', async () => {
  const code = secureBlock('python');
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-readme-'));
  writeFileSync(join(dir, 'client.py'), code.replace('http://localhost:8080', `http://localhost:${port}`));
  const { stdout } = await run('python3', [join(dir, 'client.py')]);
  expect(stdout.trim().split('\n')).toEqual(promised(code, '#').filter((value) => !value.startsWith('secure login')));
});

test("the hybrid login walkthrough runs as printed and prints what it shows", async () => {
  const text = section('Hybrid login');
  const script = blocks(text, 'js').find((code) => code.startsWith('// hybrid-login.mjs'))!;
  const [commands] = blocks(text, 'sh');
  const [expected] = blocks(text, 'text');
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-readme-'));
  writeFileSync(join(dir, 'hybrid-login.mjs'), script);
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', commands!.replaceAll('http://localhost:8080', `http://localhost:${port}`)], { cwd: dir });
  expect(stdout.trim().split('\n')).toEqual(expected!.trim().split('\n'));
});
