/**
 * `odbrest types`: TypeScript types of the declared classes, which compile and type a client's calls
 * against the client's declarations as the package ships them (dist/client.d.ts).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, test } from 'vitest';
import { FileObjectStore } from '../stores/file-store.js';
import { call, demoService, login } from './helpers.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(root, 'node_modules', '.odbrest-types-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('odbrest types', () => {
  test('writes types of the demo classes from a module and from api-config.yml; they compile and catch a wrong field', async () => {
    await run(process.execPath, [join(root, 'dist/cli.js'), 'types', '--schema', join(root, 'examples/demo-schema.mjs'), '--export', 'demoSchema', '--out', join(dir, 'demo-types.ts')]);
    const source = readFileSync(join(dir, 'demo-types.ts'), 'utf8');
    expect(source).toContain('export interface Customer {');
    expect(source).toContain('  Name: string;');
    expect(source).toContain('  AccountManager?: Employee | ObjectMetadata | null;');
    writeFileSync(join(dir, 'api-config.yml'), 'schema:\n  Note:\n    fields:\n      Text: {type: string, required: true}\n      Level: {type: integer, enum: [1, 2]}\n    strict: true\n');
    const fromConfig = await run(process.execPath, [join(root, 'dist/cli.js'), 'types'], { cwd: dir });
    expect(fromConfig.stdout).toContain('  Level?: 1 | 2 | null;');
    writeFileSync(join(dir, 'note-types.ts'), fromConfig.stdout);
    const good = `import type { Classes, ClassFields, Customer } from './demo-types.js';
import type { Note } from './note-types.js';
import type { OdbRestClient } from 'odbrest/client';
export async function use(client: OdbRestClient): Promise<string> {
  const [page] = await client.v2.byQuery<Customer>([{ className: 'Customer', query: 'Name=Test', order: 'Name ASC' }]);
  const fields: ClassFields['Customer'] = { Name: 'Nora', Number: 3, AccountManager: { '~ObjectID': 'EMP00001' } };
  const created = await client.createObject<Classes['Customer']>('Customer', fields);
  const note: Pick<Note, 'Text'> = { Text: 'x' };
  return page!['~Elements'][0]!.Name + created.City + note.Text;
}
`;
    const bad = `import type { ClassFields } from './demo-types.js';
export const fields: ClassFields['Customer'] = { Name: 3 };
`;
    writeFileSync(join(dir, 'good.ts'), good);
    writeFileSync(join(dir, 'bad.ts'), bad);
    const tsconfig = (files: string[]) => ({
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', skipLibCheck: true, paths: { 'odbrest/client': [join(root, 'dist/client.d.ts')] } },
      files,
    });
    const tsc = (name: string, files: string[]) => {
      writeFileSync(join(dir, name), JSON.stringify(tsconfig(files)));
      return run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(dir, name)], { cwd: dir }).then(
        () => '',
        (error: { stdout?: string }) => error.stdout ?? 'failed',
      );
    };
    expect(await tsc('tsconfig.good.json', ['good.ts'])).toBe('');
    expect(await tsc('tsconfig.bad.json', ['bad.ts'])).toMatch(/bad\.ts.*Type 'number' is not assignable to type 'string'/s);
  }, 120_000);

  test('adds the classes declared at run time that the configured store holds (PROTOCOL.md 6.12)', async () => {
    const folder = join(dir, 'runtime');
    mkdirSync(join(folder, 'data'), { recursive: true });
    const store = await FileObjectStore.open({ path: join(folder, 'data', 'objects.journal') });
    const service = await demoService({ store, users: { admins: 'admins' } });
    const alice = await login(service, 'alice');
    const put = await call(service, 'PUT', '/v1/model/classes/Ticket', { headers: { sessionId: alice }, json: { Fields: { Title: { Type: 'string', Required: true }, Priority: { Type: 'integer', Enum: [1, 2, 3] } } } });
    expect(put.status).toBe(200);
    await store.close();
    writeFileSync(join(folder, 'api-config.yml'), 'store:\n  url: file:./data\n');
    const { stdout } = await run(process.execPath, [join(root, 'dist/cli.js'), 'types'], { cwd: folder });
    expect(stdout).toContain('export interface Ticket {');
    expect(stdout).toContain('  Priority?: 1 | 2 | 3 | null;');
  }, 60_000);

  test('a declaration that contradicts itself fails naming class and field', async () => {
    writeFileSync(join(dir, 'broken.json'), JSON.stringify({ A: { fields: { X: { type: 'number', min: 3, max: 1 } } } }));
    const failed = await run(process.execPath, [join(root, 'dist/cli.js'), 'types', '--schema', join(dir, 'broken.json')]).then(
      () => '',
      (error: { stderr: string }) => error.stderr,
    );
    expect(failed).toContain('schema: class A, field X: min 3 is above max 1');
  });
});
