/**
 * docs/mounting.md, "Your own server loop on Node": the guide's block runs as printed (on a free port
 * instead of 8080, against the built package) and answers as the service does through its public
 * pieces: a GET's envelope with its `X-Request-Id` and exact `Content-Length`, a refusal's envelope,
 * and `405` for a method the loop leaves to `toWebRequest`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transform } from 'esbuild';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { spawnLines, type LineProcess } from '../support/processes.js';
import { codeBlocks, readmeSection } from '../support/readme.js';

const [code] = codeBlocks(readmeSection('Your own server loop on Node'), 'ts');
const dir = mkdtempSync(join(tmpdir(), 'odbrest-own-loop-'));
let server: LineProcess;
let base: string;

beforeAll(async () => {
  expect(code).toContain('.listen(8080);');
  const script = code!
    .replaceAll("'odbrest'", JSON.stringify(new URL('../../dist/index.js', import.meta.url).href))
    .replace('.listen(8080);', '.listen(0, function (this: import("node:net").Server) { console.log(`port ${(this.address() as import("node:net").AddressInfo).port}`); });');
  const file = join(dir, 'own-loop.mjs');
  writeFileSync(file, (await transform(script, { loader: 'ts', format: 'esm', target: 'node20' })).code);
  server = spawnLines(process.execPath, [file]);
  base = `http://127.0.0.1:${(await server.waitFor((line) => line.startsWith('port '))).slice(5)}`;
});

afterAll(async () => {
  await server?.stop('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

test('a GET is answered with the envelope, its X-Request-Id and its exact length', async () => {
  const answer = await fetch(`${base}/_CheckService`);
  const text = await answer.text();
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Number(answer.headers.get('content-length'))).toBe(Buffer.byteLength(text));
  expect(answer.headers.get('x-request-id')).toMatch(/^\S+$/);
  expect(JSON.parse(text).status.internalStatus).toBe('0');
});

test('a refusal is the service\'s envelope; another method is left to toWebRequest (405 here)', async () => {
  const refused = await fetch(`${base}/v1/object/CUS00001`); // no appkey
  expect(refused.status).toBe(401);
  expect(JSON.parse(await refused.text()).status).toEqual({ internalStatus: '100', statusMessage: 'appkey header missing' });
  expect((await fetch(`${base}/_CheckService`, { method: 'POST' })).status).toBe(405);
});
