/**
 * The options table of docs/operations.md lists every option of `createService` (src/options.ts): each
 * member of `ServiceOptions` as a row of its own or as the group of a row's `group.member` names, and
 * each member of the `objects` group (`ObjectOptions` and the write hooks it extends) by its full name.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { readme, readmeSection, root } from './support/readme.js';

/** The members of `interface NAME` in a TypeScript source: its lines `  name?: ...` at two spaces. */
function members(source: string, name: string): string[] {
  const start = source.indexOf(`export interface ${name} `);
  expect(start, name).toBeGreaterThanOrEqual(0);
  const body = source.slice(start, source.indexOf('\n}\n', start));
  return [...body.matchAll(/^ {2}(?:readonly )?(\$?\w+)\??(?:<\w+>)?(?:\(|:)/gm)].map((match) => match[1]!);
}

/** The option names of the table's first column: `a`, `b.c`; a `.d` after `b.c` in the same cell is `b.d`. */
function documented(): Set<string> {
  const table = readmeSection('Options', readme('docs/operations.md'));
  const names = new Set<string>();
  for (const line of table.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cell = line.split(' | ')[0]!.slice(2);
    let group = '';
    for (const [, name] of cell.matchAll(/`([\w.]+)`/g)) {
      const full = name!.startsWith('.') ? `${group}${name}` : name!;
      group = full.includes('.') ? full.slice(0, full.indexOf('.')) : full;
      names.add(full);
      if (full.includes('.')) names.add(group);
    }
  }
  return names;
}

test('docs/operations.md lists every option of src/options.ts', () => {
  const options = readFileSync(join(root, 'src/options.ts'), 'utf8');
  const hooks = readFileSync(join(root, 'src/objects/write/writes.ts'), 'utf8');
  const shown = documented();
  const service = members(options, 'ServiceOptions');
  expect(service.length).toBeGreaterThan(35);
  expect(service.filter((name) => !shown.has(name))).toEqual([]);
  const objects = [...members(options, 'ObjectOptions'), ...members(hooks, 'WriteHooks')].map((name) => `objects.${name}`);
  expect(objects).toContain('objects.deleteMode');
  expect(objects.filter((name) => !shown.has(name))).toEqual([]);
  // and nothing the table lists at the top level is gone from the options
  expect([...shown].filter((name) => !name.includes('.') && !service.includes(name))).toEqual([]);
});

test('the kv row states the in-memory store\'s bounds as KV_PARTITIONS and MemoryKeyValueStore have them', async () => {
  const { KV_PARTITIONS } = await import('../src/index.js');
  const row = readmeSection('Options', readme('docs/operations.md')).split('\n').find((line) => line.startsWith('| `kv` |'))!;
  expect(row).toContain('100,000'); // keys of no partition: maxEntries' default
  for (const [prefix, { maxEntries }] of Object.entries(KV_PARTITIONS)) expect(row, prefix).toContain(`\`${prefix}\` ${maxEntries.toLocaleString('en-US')}`);
});

test('docs/stores.md, "Writing your own store": every ObjectStore member, filter operator and store error, the required methods counted right', () => {
  const types = readFileSync(join(root, 'src/storage/types.ts'), 'utf8');
  const section = readmeSection('Writing your own store', readme('docs/stores.md'));
  const store = members(types, 'ObjectStore');
  const required = [...types.slice(types.indexOf('export interface ObjectStore {')).matchAll(/^ {2}(\w+)\(/gm)].map((match) => match[1]!).slice(0, 6);
  expect(required).toEqual(['get', 'getMany', 'find', 'count', 'put', 'delete']);
  expect(section).toContain(`has ${['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven'][required.length]} required methods`);
  const operators = [...members(types, 'FieldOperators'), ...members(types, 'WhereNodes')];
  expect(operators).toContain('$like');
  const named = (name: string) => section.includes(`\`${name}\``) || section.includes(`\`${name}(`);
  expect([...store, ...operators, 'ifStoreTime', 'importedStoreTime', 'StoreConflictError', 'StoreValueError', 'StorageUnavailableError'].filter((name) => !named(name))).toEqual([]);
});
