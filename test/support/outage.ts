/** Tools for outage tests: a TCP proxy to cut, a private redis-server, and a request load to watch. */
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { expectError, type CallResult } from '../helpers.js';
import { spawnLines, type LineProcess } from './processes.js';

/**
 * Forwards 127.0.0.1:port to a target. `cut()` closes the listener and every connection (the server
 * looks gone to clients: resets, then refused connections); `restore()` listens on the same port again.
 * `switchTo(port)` sends later connections elsewhere (a virtual IP or PgBouncer moved to a new primary).
 */
export class TcpProxy {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly targetHost: string, private targetPort: number) {}

  /** New connections go to `targetPort` from now on; open ones are reset (they led to the old target). */
  switchTo(targetPort: number): void {
    this.targetPort = targetPort;
    for (const socket of this.#sockets) socket.resetAndDestroy();
  }

  async start(port = 0): Promise<void> {
    const server = createServer((client) => {
      const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.resetAndDestroy();
    if (server) await new Promise((resolve) => server.close(resolve)); // cut already: nothing to wait for
  }

  restore(): Promise<void> {
    return this.start(this.port);
  }
}

/** A redis-server of this test's own on an ephemeral port, without persistence. Never the shared one. */
export class PrivateRedis {
  #process: LineProcess | undefined;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.#process = spawnLines('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no']);
    await this.#process.waitFor((line) => line.includes('Ready to accept connections'));
  }

  /** Kills the server (by its own pid: only the one this test started), as a crash would. */
  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    await child?.stop('SIGKILL');
  }
}

/** What a load saw: answers by kind, and the slowest 503. */
export interface LoadTally {
  ok: number;
  unavailable: number;
  /** Session gone (the private Redis forgets everything when stopped). */
  loggedOut: number;
  slowest503Ms: number;
}

/**
 * Runs `request` from `workers` loops until stopped. Each answer must be success, a `503` envelope, or
 * (if `allowLoggedOut`) a `201`; anything else fails the test.
 */
export function startLoad(request: () => Promise<CallResult>, workers = 8, allowLoggedOut = false) {
  const tally: LoadTally = { ok: 0, unavailable: 0, loggedOut: 0, slowest503Ms: 0 };
  const unexpected: string[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      const started = performance.now();
      const result = await request();
      const code = result.body?.status?.internalStatus;
      if (result.status === 200 && code === '0') tally.ok++;
      else if (result.status === 503) {
        try {
          expectError(result, '503', 503);
          if (result.headers.get('retry-after') !== '1') throw new Error(`503 without Retry-After: 1 (${result.headers.get('retry-after')})`);
          tally.unavailable++;
          tally.slowest503Ms = Math.max(tally.slowest503Ms, performance.now() - started);
        } catch (error) {
          unexpected.push(String(error));
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      } else if (allowLoggedOut && result.status === 401 && code === '201') tally.loggedOut++;
      else unexpected.push(`${result.status} ${result.text.slice(0, 200)}`);
      // A request answered without any I/O (in-memory sessions, cached objects) settles in microtasks
      // alone: without this turn of the event loop, the loops would starve the test's timers and sockets.
      await new Promise((resolve) => setImmediate(resolve));
    }
  });
  return {
    tally,
    /** A copy of the counts so far. */
    snapshot: (): LoadTally => ({ ...tally }),
    async stop(): Promise<{ tally: LoadTally; unexpected: string[] }> {
      running = false;
      await Promise.all(loops);
      return { tally, unexpected };
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns true, at most `timeoutMs`. */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await sleep(50);
  }
}
