/**
 * Tests that start real processes (the demo, framework servers, Bun, Deno) import the package by
 * name, which resolves to dist/. Build once before any test file runs, when dist/ is missing or older
 * than the sources, so `npm test` works on a fresh clone and never races a build against a test.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

function newest(dir: string): number {
  let time = 0;
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    time = Math.max(time, entry.isDirectory() ? newest(path) : statSync(join(root, path)).mtimeMs);
  }
  return time;
}

export default function setup(): void {
  const built = join(root, 'dist/index.js');
  const sources = Math.max(newest('src'), newest('adapters'), newest('stores'), statSync(join(root, 'tsup.config.ts')).mtimeMs, statSync(join(root, 'package.json')).mtimeMs);
  if (existsSync(built) && statSync(built).mtimeMs >= sources) return;
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
}
