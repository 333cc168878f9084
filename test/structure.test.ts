/**
 * The shape of the code: no import circle in src/ (type imports count too), and the stores and
 * adapters stand on the package's public entry points only, as a third party's would.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { Core } from '../src/core.js';

const root = resolve(new URL('..', import.meta.url).pathname);
/** The public entry points a store or adapter may import from src/. */
const PUBLIC_ENTRIES = ['src/index.ts', 'src/client/index.ts'];

function files(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return /\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The repository files a module imports (static `import`/`export ... from`, `import type` included; dynamic `import()` too). */
function importsOf(file: string, base = root): string[] {
  const text = readFileSync(join(base, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2]!);
  return specifiers.filter((s) => s.startsWith('.')).map((s) => relative(base, resolve(base, dirname(file), s)).replace(/\.js$/, '.ts'));
}

/** Every import circle, each as the list of files around it. */
function circles(modules: string[], base = root): string[][] {
  const graph = new Map(modules.map((file) => [file, importsOf(file, base).filter((target) => target.startsWith('src/'))]));
  const found: string[][] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'visiting');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'visiting') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of modules) if (!state.has(file)) visit(file);
  return found;
}

describe('module structure', () => {
  test('src/ has no import circle, type imports included', () => {
    expect(circles(files('src')).map((circle) => circle.join(' -> '))).toEqual([]);
  });

  test('the check finds a circle made by a type import and a re-export', () => {
    const base = mkdtempSync(join(tmpdir(), 'odbrest-circle-'));
    mkdirSync(join(base, 'src'));
    writeFileSync(join(base, 'src/a.ts'), "import type { B } from './b.js';\nexport type A = B;\n");
    writeFileSync(join(base, 'src/b.ts'), "export { c as B } from './a.js';\n");
    expect(circles(['src/a.ts', 'src/b.ts'], base)).toEqual([['src/a.ts', 'src/b.ts', 'src/a.ts']]);
  });

  test.each(['stores', 'adapters'])('%s/ imports only the public entry points of src/', (dir) => {
    const internal = files(dir).flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith('src/') && !PUBLIC_ENTRIES.includes(target))
        .map((target) => `${file} -> ${target}`),
    );
    expect(internal).toEqual([]);
  });

  /**
   * Folders whose files outside code reaches only through the folder's `index.ts`, or its route
   * contracts (`contract.ts`, `*-contract.ts`: method, path and schemas, which the typed client reads).
   */
  const ENTRY_FOLDERS = ['src/objects/read', 'src/objects/write', 'src/objects/model', 'src/query'];

  test.each(ENTRY_FOLDERS)('code outside %s/ imports only its entry (index.ts)', (folder) => {
    const outside = files('src').filter((file) => !file.startsWith(`${folder}/`));
    const reaching = outside.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith(`${folder}/`) && target !== `${folder}/index.ts` && !/^[^/]*contract\.ts$/.test(target.slice(folder.length + 1)))
        .map((target) => `${file} -> ${target}`),
    );
    expect(reaching).toEqual([]);
  });

  test('the reading folder never imports the writing one (writes answer through reads, not the reverse)', () => {
    const back = files('src/objects/read').flatMap((file) => importsOf(file).filter((target) => target.startsWith('src/objects/write/')).map((target) => `${file} -> ${target}`));
    expect(back).toEqual([]);
  });

  test('core.ts keeps only wiring and dispatch (under 150 lines)', () => {
    expect(readFileSync(join(root, 'src/core.ts'), 'utf8').trimEnd().split('\n').length).toBeLessThan(150);
  });

  test('no route module imports the class that assembles the service', () => {
    const importers = files('src').filter((file) => file !== 'src/index.ts' && importsOf(file).includes('src/core.ts'));
    expect(importers).toEqual([]);
  });

  test('no route handler parses its own input: the dispatcher does, from the route table (http/validate.ts routeInput)', () => {
    // what may still parse: the one translator, the body reader, and JSON that arrives inside other
    // input (a decrypted login, a batch item, the subscribe parameter's list, configuration)
    const allowed: Record<string, number> = {
      'src/auth/login.ts': 1, // parseLoginBody: the credentials decrypted by the secure and hybrid logins
      'src/batch/routes.ts': 1, // each /v1/multi item, which fails alone
      'src/events/subscriptions.ts': 2, // the members of the subscribe parameter's JSON list (its schema's parser)
      'src/macros/registry.ts': 1, // a declared macro's parameters (defineMacro), checked before it runs
      'src/mail/outbox.ts': 1, // a macro's mail (ctx.mail.send), checked before it is sent
      'src/oauth/settings.ts': 2, // configuration and provider entries, at start-up
    };
    const calls: Record<string, number> = {};
    for (const file of files('src')) {
      if (file === 'src/http/validate.ts' || file === 'src/http/request.ts') continue;
      const text = readFileSync(join(root, file), 'utf8');
      const count = [...text.matchAll(/\b(?:parseInput|parseQueryParams|readJson|readJsonObject|readItems|parseItem)\(/g)].length;
      if (count > 0) calls[file] = count;
    }
    expect(calls).toEqual(allowed);
  });

  test('who administers is declared on the route (`admin`) and checked in one place, the dispatcher', () => {
    const allowed: Record<string, number> = {
      'src/auth/admins.ts': 1, // the one implementation
      'src/pipeline.ts': 1, // the dispatcher's stage for routes declared `admin`
    };
    const uses: Record<string, number> = {};
    for (const file of files('src')) {
      const text = readFileSync(join(root, file), 'utf8');
      // the check itself, or a group test of its own on users.admins
      const count = [...text.matchAll(/\brequireAdmin\(|inGroup\([^)]*admins/g)].length;
      if (count > 0) uses[file] = count;
    }
    expect(uses).toEqual(allowed);
  });

  test('no route handler reads its path parameters or query raw: each is declared (`params`, `query`) and read from the input', () => {
    // what may still read them: the dispatcher, which parses them; the OAuth routes hand the provider's
    // redirect (its parameters are the provider's) to the flow, and read appNames, which may repeat
    const allowed: Record<string, number> = {
      'src/core.ts': 1, // the match's parameters onto the request, for routeInput
      'src/pipeline.ts': 1, // a route without declared input: its parameters as matched (host routes)
      'src/oauth/routes.ts': 2, // appNames (getAll: it may repeat) and the provider's callback parameters
    };
    const reads: Record<string, number> = {};
    for (const file of files('src')) {
      if (file.startsWith('src/client/') || file === 'src/http/validate.ts' || file === 'src/http/request.ts') continue;
      const text = readFileSync(join(root, file), 'utf8');
      const count = [...text.matchAll(/\brequest\.params\b|\brequest\.query\b|\brequest\.searchParams\b|\bsearchParams\.(?:get|getAll|has|keys)\(/g)].length;
      if (count > 0) reads[file] = count;
    }
    expect(reads).toEqual(allowed);
  });

  test('every built-in route with path parameters declares them (`params`)', () => {
    const undeclared = new Core({}).routes.filter((route) => route.path.includes(':') && route.params === undefined).map((route) => `${route.method} ${route.path}`);
    expect(undeclared).toEqual([]);
  });
});
