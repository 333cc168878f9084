// Builds dist/ when it is missing or older than the sources (src, adapters, stores, studio, the build
// configuration), printing nothing unless the build fails. `npm start` and the test setup run it,
// so a current build costs only the look at the file times. `--js` (npm start) builds only the
// JavaScript, in seconds; the declaration files take most of a full build's time.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

function newest(path) {
  const stat = statSync(join(root, path));
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(join(root, path)).map((name) => newest(join(path, name))));
}

/** Whether dist/ is missing, older than a source, or (with `types`) without its declaration files. */
export function isStale(types = true) {
  // the studio's generated module (scripts/build-studio.mjs) is made by the same build
  const built = ['dist/index.js', 'src/studio/assets.generated.js', ...(types ? ['dist/index.d.ts'] : [])].map((file) => join(root, file));
  if (!built.every((file) => existsSync(file))) return true;
  const sources = Math.max(...['src', 'adapters', 'stores', 'studio/src', 'tsup.config.ts', 'package.json'].map(newest));
  return Math.min(...built.map((file) => statSync(file).mtimeMs)) < sources;
}

/**
 * Builds when stale, with the declaration files unless `types` is false; `say` gets one line before
 * a build starts. Throws with the build's output when it fails.
 */
export function buildIfStale({ types = true, say = () => {} } = {}) {
  if (!isStale(types)) return false;
  say(`odbrest: building dist/ (${existsSync(join(root, 'dist/index.js')) ? 'the sources changed' : 'the first time'})`);
  const env = types ? process.env : { ...process.env, ODBREST_BUILD: 'js' };
  const result = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, env, encoding: 'utf8', shell: process.platform === 'win32' });
  if (result.status !== 0) throw new Error(`the build failed:\n${result.stdout}${result.stderr}`);
  return true;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  try {
    buildIfStale({ types: !process.argv.includes('--js'), say: (line) => console.log(line) });
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
