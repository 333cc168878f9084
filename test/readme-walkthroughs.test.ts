/**
 * The README's shell blocks that start the demo or make keys, run as printed in fresh copies of the
 * repository (test/support/readme.ts): the quick start (`npm install && npm start`), `odbrest keygen`,
 * pinning the server key (keygen, the openssl fingerprint, `npm start` with the key file, and the
 * client example that follows it), and the mounting examples' curl line against each Node example
 * named in the section's headings. Each block runs in its own process group, ended afterwards; what
 * it prints is compared with what the README says it prints.
 */
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { execFile } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, test } from 'vitest';
import { hex, otlpReceiver } from './support/otlp.js';
import { blockEnv, codeBlocks, envelopes, freshCopy, gitStatus, onlyBlock, portMap, printedComments, promisedEnvelopes, readmeSection, root, startBlock } from './support/readme.js';

const run = promisify(execFile);
const statusBefore = gitStatus();
// The copies' node_modules are hard links to the repository's, and `npm install` rewrites
// node_modules/.package-lock.json in place: the repository's must keep its content and time
// (freshCopy gives each copy its own).
const npmState = () => {
  const file = join(root, 'node_modules/.package-lock.json');
  return `${statSync(file).mtimeMs} ${readFileSync(file, 'utf8')}`;
};
const npmStateBefore = npmState();
const copies: Array<ReturnType<typeof freshCopy>> = [];
const copy = () => copies.at(copies.push(freshCopy()) - 1)!;

afterAll(() => {
  for (const each of copies) each.remove();
  expect(gitStatus()).toBe(statusBefore); // everything ran in the copies
  expect(npmState() === npmStateBefore, 'node_modules/.package-lock.json of the repository changed').toBe(true);
});

/** What a login answers, for the curl lines that log alice in. */
const LOGGED_IN = { status: { internalStatus: '0', statusMessage: 'ok' }, data: { user: { Name: 'alice' } } };

test.concurrent('quick start: `npm install && npm start` as printed serves the demo where it says and prints a curl line that logs in', async () => {
  const block = onlyBlock('quick start');
  const [start, suite, ...rest] = block.code.trim().split('\n');
  expect(rest).toEqual([]);
  expect(suite).toMatch(/^npm test\s+# runs the whole test suite$/); // the suite itself: not run from inside it
  const promised = /# .* on (http:\/\/localhost:\d+)$/.exec(start!)?.[1];
  expect(promised, start).toBeDefined();
  const { ports, apply } = await portMap();
  const started = startBlock(start!, copy().dir, blockEnv({ PORT: String(ports[8080]) }));
  try {
    const curl = await started.waitFor((line) => line.startsWith('curl '), 90_000).catch((error) => {
      throw new Error(`${error.message}\n${started.lines.join('\n')}`);
    });
    const listening = `odbrest demo listening on ${apply(promised!)}`;
    expect(started.lines.filter((line) => line === listening || line.startsWith(`${listening} `)), started.lines.join('\n')).toHaveLength(1);
    const { stdout } = await run('bash', ['-c', curl]);
    expect(JSON.parse(stdout)).toMatchObject({ ...LOGGED_IN, data: { ...LOGGED_IN.data, databaseName: 'demo' } });
  } finally {
    await started.end();
  }
}, 120_000);

test.concurrent('keygen writes the two files its comment names, the private one with the mode it says', async () => {
  const block = onlyBlock('keygen');
  const [, privateFile, mode, publicFile] = /# writes (\S+) \(mode (\d+)\) and (\S+)$/m.exec(block.code) ?? [];
  expect(publicFile, block.code).toBeDefined();
  const { dir } = copy();
  const started = startBlock(block.code, dir, blockEnv());
  try {
    expect(await started.finished(60_000), started.stderr()).toBe(0);
  } finally {
    await started.end();
  }
  expect((statSync(join(dir, privateFile!)).mode & 0o777).toString(8)).toBe(mode);
  const derived = createPublicKey(createPrivateKey(readFileSync(join(dir, privateFile!)))).export({ type: 'spki', format: 'pem' });
  expect(createPublicKey(readFileSync(join(dir, publicFile!))).export({ type: 'spki', format: 'pem' })).toBe(derived);
}, 90_000);

test.concurrent('pinning the server key: the block as printed, then its client example prints what its comments say', async () => {
  const block = onlyBlock('pinning');
  const client = block.answer;
  expect(client?.language).toBe('js');
  const { dir } = copy();
  const { ports, apply } = await portMap();
  const started = startBlock(block.code, dir, blockEnv({ PORT: String(ports[8080]) }));
  try {
    await started.waitFor((line) => line.startsWith('curl '), 90_000).catch((error) => {
      throw new Error(`${error.message}\n${started.lines.join('\n')}`);
    });
    // "# SHA2-256(stdin)= 64 hex digits": the fingerprint of the key keygen wrote
    expect(block.code).toContain('# SHA2-256(stdin)= 64 hex digits');
    const spki = createPublicKey(readFileSync(join(dir, 'keys/server-key.pub.pem'))).export({ type: 'spki', format: 'der' });
    expect(started.lines).toContain(`SHA2-256(stdin)= ${createHash('sha256').update(spki).digest('hex')}`);
    writeFileSync(join(dir, 'pinning.mjs'), apply(client!.code));
    const { stdout } = await run(process.execPath, ['pinning.mjs'], { cwd: dir, env: blockEnv() });
    const promised = printedComments(client!.code);
    expect(promised).toHaveLength(2);
    expect(stdout.trim().split('\n')).toEqual(promised);
  } finally {
    await started.end();
  }
}, 120_000);

test.concurrent("mounting in an app: the section's curl line logs in on each Node example its headings name", async () => {
  const block = onlyBlock('mounting');
  const section = readmeSection('Mounting in an app');
  const commands = [...section.matchAll(/^#+ .*: `(node examples\/\S+\.mjs)`$/gm)].map((m) => m[1]!);
  expect(commands).toEqual(['node examples/express/server.mjs', 'node examples/koa/server.mjs', 'node examples/node/app.mjs']);
  const [promised, ...more] = promisedEnvelopes(block.code);
  expect(more).toEqual([]);
  const { dir } = copy();
  await Promise.all(
    commands.map(async (command) => {
      const { ports, apply } = await portMap();
      const server = startBlock(command, dir, blockEnv({ PORT: String(ports[3000]) }));
      try {
        await server.waitFor((line) => line.includes(`:${ports[3000]}`), 60_000);
        const { stdout } = await run('bash', ['-o', 'pipefail', '-c', apply(block.code)], { cwd: dir, env: blockEnv() });
        expect(envelopes(stdout), command).toHaveLength(1);
        expect(envelopes(stdout)[0], command).toMatch(promised!);
        expect(JSON.parse(stdout), command).toMatchObject(LOGGED_IN);
      } finally {
        await server.end();
      }
    }),
  );
}, 90_000);

test.concurrent("two ways in: `npx odbrest serve --config api-config.yml` with the README's configuration answers /docs, logs JSON lines naming the answer's X-Request-Id, and continues a client's trace", async () => {
  const block = onlyBlock('serve');
  expect(block.code.trim()).toBe('npx odbrest serve --config api-config.yml');
  const [yaml, ...more] = codeBlocks(readmeSection('Two ways in'), 'yaml');
  expect(more).toEqual([]);
  const { dir } = copy();
  const { ports, apply } = await portMap();
  writeFileSync(join(dir, 'api-config.yml'), apply(yaml!));
  // the trace goes to a receiver of the test's: --otlp's variable, beside the configuration as printed
  const otlp = await otlpReceiver();
  const sent = hex(32);
  const server = startBlock(block.code, dir, blockEnv({ ODBREST_OTLP_URL: otlp.url }));
  try {
    const base = `http://localhost:${ports[8080]}`;
    // the configuration logs JSON: the listening line is one too (`serve --log json`, issue 51)
    await server.waitFor((line) => line.startsWith('{') && JSON.parse(line).msg === `odbrest listening on ${base}`, 60_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${server.lines.join('\n')}\n${server.stderr()}`);
    });
    const docs = await fetch(`${base}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toContain('text/html');
    const answer = await fetch(`${base}/v1/object/CUS00001`, { headers: { appkey: 'demo', traceparent: `00-${sent}-${hex(16)}-01` } });
    const requestId = answer.headers.get('x-request-id')!;
    const line = JSON.parse(await server.waitFor((text) => text.includes(requestId)));
    expect(line).toMatchObject({ reqId: requestId, req: { id: requestId, method: 'GET', route: '/v1/object/:id' }, res: { statusCode: answer.status }, trace_id: sent });
  } finally {
    await server.end();
    otlp.close();
  }
  // on SIGTERM the pending spans were exported: the server span is in the client's trace
    const traced = (traceId: string) => otlp.spans().filter((span: any) => span.traceId === traceId).map((span: any) => span.name);
  expect(traced(sent)).toContain('GET /v1/object/:id');
}, 90_000);
