/**
 * The Nodes that the processes of the package, adapter and example tests run under (issue 44, item 5):
 * the one running the tests, and Node 24 (scripts/node24.mjs, fetched on first use). Each is named
 * by what its binary says it is, so a test's name says which Node ran it.
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

/** The test runner's Node, then Node 24 (only once if the runner is Node 24); asked when a file defines its tests. */
export function testNodes(): readonly NodeRuntime[] {
  nodes ??= [named(process.execPath), named(nodeBinary(24))].filter((node, i, all) => all.findIndex((other) => other.name === node.name) === i);
  return nodes;
}

/** Node 24 alone. */
export const node24 = (): NodeRuntime => testNodes().find((node) => node.name.startsWith('Node 24.'))!;
