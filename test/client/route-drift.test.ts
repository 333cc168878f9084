/**
 * The typed client against the route table (issue 42): every path the client sends, with its method,
 * is one the service's table answers, so a route renamed, moved or given another method fails here
 * before any user meets it. The paths are read from the client's source as written (each `${...}`
 * after a `/` a path segment, any other a query suffix), with the method of the call they are in.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { Core } from '../../src/core.js';
import { RouteTable } from '../../src/http/router.js';

const root = resolve(new URL('../..', import.meta.url).pathname);
const METHODS = 'GET|POST|PATCH|PUT|DELETE';

/** `[method | undefined, path]` of every service path literal in the client's (or studio's) source. */
export function clientPaths(files: readonly string[]): Array<[string | undefined, string, string]> {
  const found: Array<[string | undefined, string, string]> = [];
  for (const file of files) {
    for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
      if (/^\s*(\*|\/\/|\/\*\*)/.test(line)) continue; // comments name paths in prose
      for (const match of line.matchAll(/(['`])(\/(?:v1|v2|_Check)[^'`]*)\1/g)) {
        const path = match[2]!
          .replace(/\/\$\{[^}]*\}/g, '/x') // a segment
          .replace(/\$\{[^}]*\}.*$/, '') // a query suffix
          .replace(/\?.*$/, '');
        const before = line.slice(0, match.index);
        const method = [...before.matchAll(new RegExp(`'(${METHODS})'`, 'g'))].pop()?.[1] ?? (/sessionLogin\($/.test(before.trimEnd()) ? 'POST' : undefined);
        found.push([method, path, `${file}: ${line.trim().slice(0, 120)}`]);
      }
    }
  }
  return found;
}

const sources = (dir: string) => readdirSync(join(root, dir)).filter((name) => /\.tsx?$/.test(name)).map((name) => `${dir}/${name}`);

describe('the client speaks the route table', () => {
  const table = new RouteTable().add(new Core({}).routes);

  test('every path the client sends is a route of the table, with that method', () => {
    const paths = clientPaths(sources('src/client'));
    expect(paths.length).toBeGreaterThan(50);
    const unanswered = paths.filter(([method, path]) => (method ? !table.answers(method, path) : !table.fits(path))).map(([method, path, where]) => `${method ?? '?'} ${path} (${where})`);
    expect(unanswered).toEqual([]);
  });

  test('the check fails on drift: a path or method the table does not have is reported', () => {
    expect(table.answers('GET', '/v1/object/x')).toBe(true);
    expect(table.answers('PUT', '/v1/object/x')).toBe(false);
    expect(table.fits('/v1/objekt/x')).toBe(false);
  });
});
