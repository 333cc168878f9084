/**
 * The README's "The typed client" examples (saving and resuming a session, custom login, errors),
 * each run as printed against `npm start`'s demo server, print what their comments say.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { spawnLines, type LineProcess } from '../support/processes.js';
import { CLIENT_IMPORT, codeBlocks, printedComments, readmeSection, runCodeBlock } from '../support/readme.js';

let server: LineProcess;
let base = '';

beforeAll(async () => {
  server = spawnLines(process.execPath, ['examples/node/server.mjs'], { PORT: '0' }, { cwd: new URL('../../', import.meta.url).pathname });
  await server.waitFor((line) => line.startsWith('curl '));
  base = /listening on (http:\/\/localhost:\d+)/.exec(server.lines.join('\n'))![1]!;
});

afterAll(() => server?.stop());

const examples = codeBlocks(readmeSection('The typed client'), 'ts');

test('the section has its three examples, each saying what it prints', () => {
  expect(examples).toHaveLength(3);
  for (const code of examples) expect(printedComments(code).length).toBeGreaterThan(0);
});

test.each(examples.map((code) => [code.split('\n').find((line) => line.includes('console.log'))!.trim(), code]))('%s', async (_line, code) => {
  expect(await runCodeBlock(code, { replace: { ...CLIENT_IMPORT, 'http://localhost:8080': base } })).toEqual(printedComments(code));
});
