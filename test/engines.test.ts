/**
 * package.json's `engines.node` tells the truth (issue 51, part 4): every package a host installs
 * with odbrest (the runtime dependencies and theirs) and every optional peer installed here (and its
 * own) accepts every Node our range accepts, so npm prints no EBADENGINE and nothing breaks on a
 * Node we claim. The packages read are the installed ones, found as Node resolves them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import semver from 'semver';
import { expect, test } from 'vitest';

const root = new URL('..', import.meta.url).pathname;

interface Manifest {
  name: string;
  version: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const read = (folder: string) => JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as Manifest;
const ours = read(root);
const range = ours.engines!.node!;

/** The folder `name` resolves to from `folder`, as Node finds it (node_modules of it and of each parent); undefined if not installed. */
function installed(name: string, folder: string): string | undefined {
  for (let dir = folder; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || dirname(dir) === dir) return undefined;
  }
}

/**
 * Each package reached from `names`, with the range its `engines.node` says (undefined: none), once
 * per installed folder: a package's dependencies must be there, its optional and optional-peer ones
 * count where installed.
 */
function tree(names: string[]): Map<string, { name: string; node: string | undefined }> {
  const seen = new Map<string, { name: string; node: string | undefined }>();
  const visit = (name: string, from: string, required: boolean) => {
    const folder = installed(name, from);
    if (!folder) {
      if (required) throw new Error(`${name} (needed by ${from}) is not installed: npm ci first`);
      return;
    }
    if (seen.has(folder)) return;
    const manifest = read(folder);
    seen.set(folder, { name: `${manifest.name}@${manifest.version}`, node: manifest.engines?.node });
    for (const dependency of Object.keys(manifest.dependencies ?? {})) visit(dependency, folder, true);
    for (const dependency of Object.keys(manifest.optionalDependencies ?? {})) visit(dependency, folder, false);
    for (const peer of Object.keys(manifest.peerDependencies ?? {})) visit(peer, folder, manifest.peerDependenciesMeta?.[peer]?.optional !== true);
  };
  for (const name of names) visit(name, root, true);
  return seen;
}

/** Those whose `engines.node` leaves out some Node that `range` takes in (not a superset of ours), as `name@version: theirs`. */
function excluding(packages: Iterable<{ name: string; node: string | undefined }>): string[] {
  return [...packages].filter(({ node }) => node !== undefined && !semver.subset(range, node)).map(({ name, node }) => `${name}: ${node}`);
}

test('our engines.node is a valid range holding Node 20, 22 and 24, the ones the suite runs on', () => {
  expect(semver.validRange(range)).not.toBeNull();
  expect(['20.19.0', '22.12.0', '24.0.0'].filter((version) => !semver.satisfies(version, range))).toEqual([]);
  // what a range leaving out part of ours looks like to the check: content-disposition 3's, Node 22 only
  expect(excluding([{ name: 'content-disposition@3.0.0', node: '>=22' }])).toEqual(['content-disposition@3.0.0: >=22']);
});

test("no runtime dependency, nor any of theirs, excludes a Node our engines.node takes in", () => {
  const packages = tree(Object.keys(ours.dependencies ?? {}));
  expect(packages.size).toBeGreaterThan(Object.keys(ours.dependencies ?? {}).length);
  expect(excluding(packages.values())).toEqual([]);
});

test('no optional peer installed here, nor any of its dependencies, excludes one either', () => {
  const peers = Object.keys(ours.peerDependencies ?? {}).filter((name) => installed(name, root));
  expect(peers).toContain('@simplewebauthn/server');
  expect(excluding(tree(peers).values())).toEqual([]);
});
