/**
 * The client's types come from the route table (issue 52, src/contract.ts): a declaration changed on
 * the server side makes code using the client fail to compile. Each case copies `src/` to a temp dir,
 * changes one declaration, and runs `tsc` on a fixture that calls the client as docs/client.md shows;
 * the unchanged copy compiles. The cases run in parallel, one program each, which type-checks the
 * client's files and the fixture only (the server's files are read for their declarations, not
 * checked: the typecheck test does that), so a case costs what it did before the client's table grew.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, test } from 'vitest';

const root = resolve(new URL('../..', import.meta.url).pathname);
/** The client's files and the fixture type-checked, their errors printed as tsc prints them (exit 2 on any). */
const CHECK = `const ts = require('typescript');
const { relative } = require('node:path');
const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile('tsconfig.json', ts.sys.readFile).config, ts.sys, process.cwd());
const program = ts.createProgram(parsed.fileNames, parsed.options);
const lines = [];
for (const file of program.getSourceFiles()) {
  const name = relative(process.cwd(), file.fileName);
  if (name !== 'fixture.ts' && !name.startsWith('src/client/')) continue;
  for (const found of [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]) {
    const { line, character } = file.getLineAndCharacterOfPosition(found.start ?? 0);
    lines.push(name + '(' + (line + 1) + ',' + (character + 1) + '): error TS' + found.code + ': ' + ts.flattenDiagnosticMessageText(found.messageText, ' '));
  }
}
process.stdout.write(lines.join('\\n'));
process.exitCode = lines.length > 0 ? 2 : 0;
`;
const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const FIXTURE = `import { createClient } from './src/client/index.js';
const client = createClient({ baseUrl: 'http://localhost:8080', appKey: 'demo' });
const login = await client.login({ user: 'alice', password: 'alice-secret', appNames: ['crm'] });
export const sessionId: string = login.sessionId;
export const name = (await client.getObject('USR00001')).Name;
export const page = await client.listObjects('Person', { page: 1, perPage: 10 });
export const declared = await client.admin.declareClass('Note', { Fields: { Text: { Type: 'string' } } });
`;

/** One declaration changed: in `file`, `from` (which must be there) becomes `to`. */
interface Change {
  file: string;
  from: string;
  to: string;
}

const CASES: Record<string, Change | undefined> = {
  unchanged: undefined,
  'a body member renamed (login user)': { file: 'src/auth/login-contract.ts', from: "  user: credential('user'),", to: "  userName: credential('user')," },
  'a query member renamed (the listing perPage)': { file: 'src/objects/read-contract.ts', from: "  perPage: integerParam('perPage',", to: "  pageSize: integerParam('perPage'," },
  'an answer member renamed (login sessionId)': { file: 'src/openapi/schemas.ts', from: '  v.object({ sessionId: v.pipe(', to: '  v.object({ session: v.pipe(' },
  'a method changed (GET /v1/object/:id to POST)': { file: 'src/objects/read-contract.ts', from: "spec({ method: 'GET', path: '/v1/object/:id',", to: "spec({ method: 'POST', path: '/v1/object/:id'," },
};

/** The copy's tsc output (empty when it compiles). */
async function compile(change: Change | undefined): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-drift-'));
  made.push(dir);
  cpSync(join(root, 'src'), join(dir, 'src'), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  if (change) {
    const path = join(dir, change.file);
    const text = readFileSync(path, 'utf8');
    expect(text, `${change.file} still holds the declaration the case changes`).toContain(change.from);
    writeFileSync(path, text.replace(change.from, change.to));
  }
  writeFileSync(join(dir, 'fixture.ts'), FIXTURE);
  writeFileSync(join(dir, 'check.cjs'), CHECK);
  const options = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')).compilerOptions;
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...options, types: [] }, files: ['fixture.ts'] }));
  try {
    await promisify(execFile)(process.execPath, [join(dir, 'check.cjs')], { cwd: dir });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout);
  }
}

const results = Object.fromEntries(Object.entries(CASES).map(([name, change]) => [name, compile(change)]));

test.each(Object.keys(CASES))('%s', async (name) => {
  const output = await results[name]!;
  if (name === 'unchanged') return expect(output).toBe('');
  // the client's own code (or the fixture calling it) no longer compiles, not only the server's
  expect(output).toMatch(/^(src\/client\/|fixture\.ts)\S*\(\d+,\d+\): error TS\d+/m);
}, 300_000);
