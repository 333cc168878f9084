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

/** How each kind is started (from the repository root), and the stdout line that says it listens (default `LISTENING`). */
const COMMANDS: Record<ServerKind, (port: number) => { command: string; args: string[]; ready?: RegExp }> = {
  express: () => ({ command: process.execPath, args: ['examples/express/server.mjs'] }),
  koa: () => ({ command: process.execPath, args: ['examples/koa/server.mjs'] }),
  node: () => ({ command: process.execPath, args: ['examples/node/app.mjs'] }),
  bun: () => ({ command: bin('bun'), args: ['examples/bun/server.mjs'] }),
  deno: () => ({ command: bin('deno'), args: ['run', '--allow-net', '--allow-read', '--allow-env', 'examples/deno/server.mjs'] }),
  // `next start` does not accept port 0: the port is chosen free just before.
  next: (port) => ({ command: bin('next'), args: ['start', 'examples/next', '-p', String(port), '-H', '127.0.0.1'], ready: /Ready in/ }),
};

export interface RunningServer {
  /** e.g. `http://127.0.0.1:40123`; the API is under `${origin}/api`. */
  origin: string;
  stop(): Promise<void>;
}

/** Starts one example as a child process with these extra environment variables. */
export async function startServer(kind: ServerKind, env: Record<string, string> = {}): Promise<RunningServer> {
  const port = kind === 'next' ? await freePort() : 0;
  const { command, args, ready = LISTENING } = COMMANDS[kind](port);
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
