/** Child processes for tests that need real, separate processes (crash tests, several instances). */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/**
 * Bundles a TypeScript entry into one ES module that plain `node` runs (the children must be real
 * Node processes, not vitest workers).
 */
export async function bundleForNode(entry: string): Promise<string> {
  const outfile = join(mkdtempSync(join(tmpdir(), 'odbrest-child-')), 'child.mjs');
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // resolve packages as node itself does: without esbuild's implicit `module` condition, which picks
    // builds node cannot run (@opentelemetry/api's `build/esm` imports paths without extensions)
    conditions: ['node'],
    logLevel: 'error',
    plugins: [
      {
        // Only the project's own sources are bundled; packages are imported from node_modules by
        // absolute path (the bundle lives outside the project, and CommonJS packages stay CommonJS).
        name: 'packages-external',
        setup(on) {
          on.onResolve({ filter: /^[^./]/ }, async (args) => {
            if (args.pluginData?.inner) return undefined;
            const resolved = await on.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: { inner: true } });
            if (resolved.errors.length > 0) return { errors: resolved.errors };
            return { path: resolved.external ? args.path : pathToFileURL(resolved.path).href, external: true };
          });
        },
      },
    ],
  });
  return outfile;
}

/** A running child whose stdout is split into lines as they arrive. */
export interface LineProcess {
  child: ChildProcess;
  /** Every complete line printed so far. */
  lines: string[];
  /** Resolves with the first line `test` accepts (rejects if the child exits first). */
  waitFor(test: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves when the child has exited. */
  exited: Promise<number | null>;
  /**
   * Ends the child (its whole process group when started `detached`) with `signal`, then SIGKILL
   * after 5 s if it is still running; resolves once it has exited.
   */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface SpawnOptions {
  cwd?: string;
  /** Own process group, so `stop()` also ends what the child started (Next's workers). */
  detached?: boolean;
}

export function spawnLines(
  command: string,
  args: string[],
  env: Record<string, string | undefined> = {},
  options: SpawnOptions = {},
): LineProcess {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], ...options });
  const lines: string[] = [];
  const waiters = new Set<{ test: (line: string) => boolean; resolve: (line: string) => void }>();
  let partial = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!; // a line cut by a kill is not counted
    for (const line of parts) {
      lines.push(line);
      for (const waiter of waiters) if (waiter.test(line)) waiter.resolve(line);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => void (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(options.detached ? -child.pid! : child.pid!, name);
    } catch {
      // already gone
    }
  };
  return {
    child,
    lines,
    exited,
    async stop(name = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      signal(name);
      const timer = setTimeout(() => signal('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
    waitFor(test, timeoutMs = 20_000) {
      const found = lines.find(test);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = { test, resolve: (line: string) => (waiters.delete(waiter), clearTimeout(timer), resolve(line)) };
        const timer = setTimeout(() => (waiters.delete(waiter), reject(new Error(`timed out; stderr: ${stderr}`))), timeoutMs);
        waiters.add(waiter);
        void exited.then((code) => {
          if (!waiters.has(waiter)) return;
          waiters.delete(waiter);
          clearTimeout(timer);
          reject(new Error(`child exited (${code}) before the expected line; stderr: ${stderr}`));
        });
      });
    },
  };
}

/**
 * Waits until `child` has printed `count` lines that `test` accepts, for a crash test that kills it
 * after so much work rather than after so much time (a loaded machine does less in a time, never
 * less in a count). Answers how many it printed: `count`, or fewer when `capMs` passed first; only
 * none at all fails, naming what was awaited.
 */
export async function waitForLines(child: LineProcess, test: (line: string) => boolean, count: number, capMs = 60_000): Promise<number> {
  const seen = () => child.lines.filter(test).length;
  await child.waitFor(() => seen() >= count, capMs).catch(() => undefined);
  const reached = seen();
  if (reached === 0) throw new Error(`the child printed none of the ${count} awaited lines within ${capMs / 1000} s: no progress at all`);
  return reached;
}

/**
 * A `Service`-shaped view of a server listening at `base`, so the fetch-based test helpers (`call`,
 * `login`, ...) talk to it over real HTTP (or through `fetchFn`, e.g. to an in-process service).
 * `base` may end in a path: `${base}/api` makes the helpers' paths relative to a service under `/api`.
 */
export function remoteService(
  base: string,
  fetchFn: (input: string, init: RequestInit) => Promise<Response> = (input, init) => fetch(input, init),
): { fetch(request: Request): Promise<Response> } {
  return {
    async fetch(request) {
      const url = new URL(request.url);
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
      return fetchFn(`${base}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body });
    },
  };
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
