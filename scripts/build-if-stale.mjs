// Builds dist/ when it is missing or older than the sources (src, adapters, stores, the build
// configuration), printing nothing unless the build fails. `npm start` and the test setup run it,
// so a current build costs only the look at the file times.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

function newest(path) {
  const stat = statSync(join(root, path));
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(join(root, path)).map((name) => newest(join(path, name))));
}

/** Whether dist/ is missing or older than a source. */
export function isStale() {
  const built = join(root, 'dist/index.js');
  if (!existsSync(built)) return true;
  const sources = Math.max(...['src', 'adapters', 'stores', 'tsup.config.ts', 'package.json'].map(newest));
  return statSync(built).mtimeMs < sources;
}

/** Builds when stale; `say` gets one line before a build starts. Throws with the build's output when it fails. */
export function buildIfStale(say = () => {}) {
  if (!isStale()) return false;
  say('odbrest: building dist/ (sources changed; this takes a minute the first time)');
  const result = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, encoding: 'utf8', shell: process.platform === 'win32' });
  if (result.status !== 0) throw new Error(`the build failed:\n${result.stdout}${result.stderr}`);
  return true;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  try {
    buildIfStale((line) => console.log(line));
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
