/** Starts the examples as real server processes for the end-to-end suite. */
import { execFile } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort, spawnLines } from '../support/processes.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const bin = (name: string) => `${ROOT}node_modules/.bin/${name}`;

export type ServerKind = 'express' | 'koa' | 'node' | 'bun' | 'deno' | 'next';

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;

/** The kinds whose example runs on Node (and so under each of test/support/nodes.ts's Nodes). */
export const NODE_KINDS: readonly ServerKind[] = ['express', 'koa', 'node', 'next'];

/**
 * How each kind is started (from the repository root) with `node` the Node binary for the Node kinds,
 * and the stdout line that says it listens (default `LISTENING`).
 */
const COMMANDS: Record<ServerKind, (port: number, node: string) => { command: string; args: string[]; ready?: RegExp }> = {
  express: (_, node) => ({ command: node, args: ['examples/express/server.mjs'] }),
  koa: (_, node) => ({ command: node, args: ['examples/koa/server.mjs'] }),
  node: (_, node) => ({ command: node, args: ['examples/node/app.mjs'] }),
  bun: () => ({ command: bin('bun'), args: ['examples/bun/server.mjs'] }),
  deno: () => ({ command: bin('deno'), args: ['run', '--allow-net', '--allow-read', '--allow-env', 'examples/deno/server.mjs'] }),
  // `next start` does not accept port 0: the port is chosen free just before. Its script run by
  // `node`, not through its `#!/usr/bin/env node` (whichever Node is first on the PATH).
  next: (port, node) => ({ command: node, args: [`${ROOT}node_modules/next/dist/bin/next`, 'start', 'examples/next', '-p', String(port), '-H', '127.0.0.1'], ready: /Ready in/ }),
};

export interface RunningServer {
  /** e.g. `http://127.0.0.1:40123`; the API is under `${origin}/api`. */
  origin: string;
  stop(): Promise<void>;
}

/** Starts one example as a child process with these extra environment variables, the Node kinds under `node`. */
export async function startServer(kind: ServerKind, env: Record<string, string> = {}, node = process.execPath): Promise<RunningServer> {
  const port = kind === 'next' ? await freePort() : 0;
  const { command, args, ready = LISTENING } = COMMANDS[kind](port, node);
  const child = spawnLines(
    command,
    args,
    { NEXT_TELEMETRY_DISABLED: '1', ODBREST_PASSWORD_ITERATIONS: '1000', HOST: '127.0.0.1', PORT: String(port), ...env },
    // Own process group, so stop() ends the server and anything it started (Next's workers).
    { cwd: ROOT, detached: true },
  );
  const stop = () => child.stop();
  try {
    const line = await child.waitFor((text) => ready.test(text), 60_000);
    const origin = kind === 'next' ? `http://127.0.0.1:${port}` : line.match(ready)![1]!;
    return { origin, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * `next build` of examples/next; resolves with the time it took and the bundler used. Turbopack (Next's default)
 * refuses a node_modules that is a symlink out of the repository (how helper worktrees share one
 * install); there the build falls back to webpack. A real install (CI, `npm ci`) uses Turbopack.
 */
export async function buildNextExample(): Promise<{ ms: number; bundler: string }> {
  const started = performance.now();
  const bundler = lstatSync(`${ROOT}node_modules`).isSymbolicLink() ? ['--webpack'] : [];
  await promisify(execFile)(bin('next'), ['build', ...bundler, 'examples/next'], {
    cwd: ROOT,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
    maxBuffer: 16 * 1024 * 1024,
  });
  return { ms: performance.now() - started, bundler: bundler.length ? 'webpack' : 'Turbopack' };
}
