/**
 * The documentation's promises: every shell block of README.md and the guides (docs/*.md) is run by
 * one of the readme tests (test/support/readme.ts lists who runs which; a block nobody runs fails
 * here). This file runs, in a fresh copy of the repository, `npm start`'s server
 * (examples/node/server.mjs) and every `curl` example followed by its printed answer (a json or text
 * block), as printed, each document's against a demo of its own, comparing the answer
 * (except session ids, tokens, times, ids the service makes and the two-factor enrolment's secret,
 * which differ on every run; the two-factor walkthrough's codes come from examples/totp.mjs); the
 * hybrid login walkthrough; the "Secure login" section's client example and Python client (an
 * independent implementation of the wire format), and its test-vector table holds the vectors
 * test/secure/vectors.test.ts checks. The repository's `git status` is the same afterwards.
 */
import { spawnSync, execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { COUNTER_BLOCKS, GET_SIGNATURE, M_HEX, RESPONSE_BODY, RESPONSE_PLAIN, RESPONSE_SIGNATURE } from './secure/vectors.js';
import { spawnLines, type LineProcess } from './support/processes.js';
import { DOCUMENTS, RUNNERS, blockEnv, claimedBy, codeBlocks, freshCopy, gitStatus, onlyBlock, printedComments, readmeBlocks, readmeSection, root, runCodeBlock, shellBlocks } from './support/readme.js';
import { requireOrSkip } from './support/servers.js';

const run = promisify(execFile);
/** Members that differ on every run (the two-factor enrolment's secret and what is made of it included). */
const VOLATILE = new Set(['sessionId', 'token', 'expiresAt', '~StoreTime', '~DeletedAt', 'secret', 'otpauthUri', 'qrCode', 'backupCodes']);
/** The demo's own object ids; any other `~ObjectID` in an answer was made by the service on this run. */
const DEMO_IDS = new Set(JSON.parse(readFileSync(`${root}examples/demo-data.json`, 'utf8')).objects.map((o: Record<string, unknown>) => o['~ObjectID']));

/** The curl examples with their printed answers, in the documentation's order. */
function examples(): Array<{ file: string; command: string; answer: { language: string; code: string } }> {
  return claimedBy('demo curl examples').map((block) => ({ file: block.file, command: block.code.trim(), answer: block.answer! }));
}

function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        VOLATILE.has(k) ? typeof v : k === '~ObjectID' && typeof v === 'string' && !DEMO_IDS.has(v) ? /^[0-9A-Z]{8}$/.test(v) && 'a new id' : normalize(v),
      ]),
    );
  }
  return value;
}

/** A line of output or of a printed answer: its JSON value, or the text itself. */
function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return line;
  }
}

const statusBefore = gitStatus();
const copy = freshCopy();
let server: LineProcess;
let port = 0;

/** `npm start`'s server in the copy, on a free port. */
async function startDemo(): Promise<{ server: LineProcess; port: number }> {
  const demo = spawnLines(process.execPath, ['examples/node/server.mjs'], blockEnv({ PORT: '0' }), { cwd: copy.dir });
  await demo.waitFor((line) => line.startsWith('curl '));
  return { server: demo, port: Number(/listening on http:\/\/localhost:(\d+)/.exec(demo.lines.join('\n'))![1]) };
}

beforeAll(async () => {
  ({ server, port } = await startDemo());
});

afterAll(async () => {
  await server?.stop();
  copy.remove();
});

test('every shell block of the README and the guides is run by exactly one readme test', () => {
  expect(DOCUMENTS).toContain('docs/security.md');
  const blocks = shellBlocks();
  expect(blocks.length).toBeGreaterThan(20);
  for (const block of blocks) {
    const runners = RUNNERS.filter((runner) => runner.claims(block)).map((runner) => `${runner.file}: ${runner.name}`);
    expect(runners, `${block.file} line ${block.line} (${block.section}): ${block.code.split('\n')[0]}`).toHaveLength(1);
  }
  // every runner runs something: a runner whose blocks went away is a test that checks nothing
  for (const runner of RUNNERS) expect(blocks.filter(runner.claims).length, runner.name).toBeGreaterThan(0);
  expect(readmeBlocks().filter((block) => /^(shell|console|zsh)$/.test(block.language))).toEqual([]);
});

test('the secure transport test vectors in the guides are the ones the vector tests check', () => {
  const text = readmeSection('Secure login');
  const start = text.indexOf('Test vectors (`test/secure/vectors.test.ts`)');
  expect(start).toBeGreaterThan(0);
  const table = text.slice(start, text.indexOf('\n\n', text.indexOf('\n|', start)));
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

test('the documentation has a checked example for every core endpoint', () => {
  const commands = examples().map((example) => example.command).join('\n');
  for (const path of ['/v1/login', '/v2/login', '/v1/auth/df', '/v1/object/', '/v1/objects/', '/v1/execute/', '/v1/logout', '/_CheckSession', '/_CheckService', '/v1/multi', '/v1/2fa/secret', '/v1/license/release', '/v1/uploadFile', '/v1/file/', '/openapi.json']) {
    expect(commands).toContain(path);
  }
});

/**
 * A session of alice (the README's first request) as `SID` and a JWT of dave (docs/logins.md,
 * `POST /v2/login`) as `TOKEN`, which the guides' examples use.
 */
async function guideCredentials(port: number): Promise<Record<string, string>> {
  const login = async (path: string, user: string, password: string, appNames: string[]) => {
    const pass = createHash('md5').update(password).digest('hex');
    const answer = await fetch(`http://localhost:${port}${path}`, { method: 'POST', headers: { appkey: 'demo', 'content-type': 'application/json' }, body: JSON.stringify({ user, pass, appNames }) });
    return ((await answer.json()) as { data: Record<string, string> }).data;
  };
  return { SID: (await login('/v1/login', 'alice', 'alice-secret', ['crm'])).sessionId!, TOKEN: (await login('/v2/login', 'dave', 'dave-secret', [])).token! };
}

test.each(DOCUMENTS.filter((file) => examples().some((example) => example.file === file)))('every curl example of %s answers as printed', async (file) => {
  // each document runs against a demo of its own, as a reader who starts with it would; the README's own
  // examples make their credentials, a guide's start from the README's
  const demo = file === 'README.md' ? { server: undefined, port } : await startDemo();
  const env = blockEnv(file === 'README.md' ? {} : await guideCredentials(demo.port));
  try {
    for (const { command, answer } of examples().filter((example) => example.file === file)) await check(command, answer, demo.port, env);
  } finally {
    await demo.server?.stop();
  }
}, 120_000);

async function check(command: string, answer: { language: string; code: string }, port: number, env: Record<string, string | undefined>): Promise<void> {
  {
    const { stdout } = await run('bash', ['-o', 'pipefail', '-c', command.replaceAll('http://localhost:8080', `http://localhost:${port}`)], { cwd: copy.dir, env });
    // a json answer is one envelope; a text answer is lines, each JSON or plain text
    const lines = (text: string) => (answer.language === 'json' ? [text] : text.split('\n').filter((line) => line !== ''));
    const got = lines(stdout).map(parseLine);
    expect(got.map(normalize), command).toEqual(lines(answer.code).map(parseLine).map(normalize));
    for (const value of got as Array<{ data?: Record<string, unknown> } | undefined>) {
      if (typeof value?.data?.sessionId === 'string' && command.includes('/v1/login')) env.SID = value.data.sessionId;
      if (typeof value?.data?.token === 'string') env.TOKEN = value.data.token;
      if (typeof value?.data?.secret === 'string') env.SECRET = value.data.secret; // the two-factor walkthrough's codes
    }
  }
}

test('the start-up banner prints a curl line that logs in', async () => {
  const line = server.lines.find((text) => text.startsWith('curl '))!;
  const { stdout } = await run('bash', ['-c', line]);
  expect(JSON.parse(stdout)).toMatchObject({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { user: { Name: 'alice' }, databaseName: 'demo' } });
});

/** The first fenced code block of the README's "Secure login" section in a language. */
const secureBlock = (language: string): string => codeBlocks(readmeSection('Secure login'), language)[0]!;

test('the client example prints what its comments say', async () => {
  const code = secureBlock('ts');
  // in the copy, `odbrest/client` is the built package
  const printed = await runCodeBlock(code, { dir: copy.dir, replace: { 'http://localhost:8080': `http://localhost:${port}` } });
  expect(printed).toEqual(printedComments(code));
});

const hasPythonCrypto =
  spawnSync('python3', ['-c', 'import cryptography'], { stdio: 'ignore' }).status === 0 ||
  requireOrSkip('python3 with the cryptography package', "the README's Python client");

test.skipIf(!hasPythonCrypto)('the Python client logs in securely and prints what its comments say', async () => {
  const code = secureBlock('python');
  writeFileSync(join(copy.dir, 'client.py'), code.replace('http://localhost:8080', `http://localhost:${port}`));
  const { stdout } = await run('python3', ['client.py'], { cwd: copy.dir });
  expect(stdout.trim().split('\n')).toEqual(printedComments(code, '#'));
});

test('the hybrid login walkthrough runs as printed and prints what it shows', async () => {
  const text = readmeSection('Hybrid login');
  const script = codeBlocks(text, 'js').find((code) => code.startsWith('// hybrid-login.mjs'))!;
  const commands = onlyBlock('hybrid login walkthrough');
  const [expected] = codeBlocks(text, 'text');
  writeFileSync(join(copy.dir, 'hybrid-login.mjs'), script);
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', commands.code.replaceAll('http://localhost:8080', `http://localhost:${port}`)], { cwd: copy.dir, env: blockEnv() });
  expect(stdout.trim().split('\n')).toEqual(expected!.trim().split('\n'));
});

test('the repository is as it was: everything ran in the copy', () => {
  expect(gitStatus()).toBe(statusBefore);
});
