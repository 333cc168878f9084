/**
 * The Bun, Deno and Next.js adapters (and the core they are used with) and the client load in any
 * runtime: their built modules, followed through every relative import, name no Node built-in.
 */
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { expect, test } from 'vitest';
import { ROOT } from './servers.js';

const BUILTINS = new Set(builtinModules);

/** Every import specifier of a built module and of the chunks it imports, by file. */
function importGraph(entry: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const visit = (file: string) => {
    if (graph.has(file)) return;
    // the studio's asset module holds the browser app's files as JSON strings (their own import()
    // calls included): data, not imports of this module; only its code before the data counts
    const text = readFileSync(`${ROOT}dist/${file}`, 'utf8');
    const source = file.startsWith('assets.generated') ? text.slice(0, text.indexOf('{')) : text;
    const specifiers = [...source.matchAll(/(?:^|[;\s])(?:import|export)\s*(?:[^'"]*?from\s*)?['"]([^'"]+)['"]/gm), ...source.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)].map(
      (match) => match[1]!,
    );
    graph.set(file, specifiers);
    for (const specifier of specifiers) if (specifier.startsWith('./')) visit(specifier.slice(2));
  };
  visit(entry);
  return graph;
}

for (const entry of ['index.js', 'bun.js', 'deno.js', 'next.js', 'client.js']) {
  test(`dist/${entry} imports no Node built-in`, () => {
    expect(existsSync(`${ROOT}dist/${entry}`), 'run `npm run build` first').toBe(true);
    const nodeImports = [...importGraph(entry)].flatMap(([file, specifiers]) =>
      specifiers.filter((specifier) => specifier.startsWith('node:') || BUILTINS.has(specifier)).map((specifier) => `${file}: ${specifier}`),
    );
    expect(nodeImports).toEqual([]);
  });
}

test('the check sees Node built-ins where they are (the Node adapter)', () => {
  const specifiers = [...importGraph('node.js').values()].flat();
  expect(specifiers).toContain('node:http');
});
