/**
 * The Nodes that the processes of the package, adapter and example tests run under (issue 44, item 5):
 * the one running the tests, and Node 24 (scripts/node24.mjs, fetched on first use); the package
 * test adds Node 22. Each is named by what its binary says it is, so a test's name says which Node ran it.
 */
import { execFileSync } from 'node:child_process';
import { nodeBinary } from '../../scripts/node24.mjs';

export interface NodeRuntime {
  /** `Node 24.21.0`: the version the binary printed. */
  name: string;
  /** The binary's path. */
  path: string;
}

const named = (path: string): NodeRuntime => ({ name: `Node ${execFileSync(path, ['--version'], { encoding: 'utf8' }).trim().slice(1)}`, path });

let nodes: readonly NodeRuntime[] | undefined;

/** Each Node once (the runner may be one of the fetched ones). */
const distinct = (all: NodeRuntime[]) => all.filter((node, i) => all.findIndex((other) => other.name === node.name) === i);

/** The test runner's Node, then Node 24 (only once if the runner is Node 24); asked when a file defines its tests. */
export function testNodes(): readonly NodeRuntime[] {
  nodes ??= distinct([named(process.execPath), named(nodeBinary(24))]);
  return nodes;
}

/**
 * The package test's Nodes (test/pack.test.ts, issue 51): the runner's, Node 22 and Node 24, each
 * line `engines` names, as a user installs the package on it. The other process tests keep two.
 */
export function packageNodes(): readonly NodeRuntime[] {
  return distinct([testNodes()[0]!, named(nodeBinary(22)), ...testNodes().slice(1)]);
}

/** Node 24 alone. */
export const node24 = (): NodeRuntime => testNodes().find((node) => node.name.startsWith('Node 24.'))!;
