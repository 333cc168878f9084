// The soak's own servers, each on a free port with its data in a temporary folder: PostgreSQL 15 and
// Redis from the installed binaries (never the machine's shared ones), a small tmpfs for the blob
// folder, and the odbrest instances (examples/cluster/server.mjs). Only processes started here are
// ever signalled, by their own pid.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, rmSync, openSync, writeSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';

const PG_BIN = process.env.SOAK_PG_BIN ?? '/usr/lib/postgresql/15/bin';
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port nothing listens on right now. */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A child process whose output is kept (the last lines), and whose exit can be awaited. */
export function start(command, args, options = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  const proc = { child, output: '', exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal))) };
  const keep = (chunk) => void (proc.output = (proc.output + chunk).slice(-20_000));
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  return proc;
}

export async function until(what, check, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`${what} not ready within ${timeoutMs / 1000} s`);
    await sleep(50);
  }
}

export async function stopProcess(proc, signal) {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill(signal);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 10_000);
  await proc.exited;
  clearTimeout(timer);
}

/** `postgres` refuses to run as root: as root, the data folder and the server belong to the `postgres` user. */
export function postgresUser() {
  if (process.getuid?.() !== 0) return {};
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith('postgres:'));
  if (!line) throw new Error('running as root needs a postgres user to run PostgreSQL as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

export class PostgresServer {
  constructor(root, port) {
    this.dir = join(root, 'pg');
    this.port = port;
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    this.user = postgresUser();
  }

  init() {
    mkdirSync(this.dir, { mode: 0o700 });
    if (this.user.uid !== undefined) {
      chmodSync(join(this.dir, '..'), 0o711); // the postgres user passes through the soak's folder to its own
      chownSync(this.dir, this.user.uid, this.user.gid);
    }
    const result = spawnSync(join(PG_BIN, 'initdb'), ['-D', join(this.dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'], { ...this.user, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`initdb failed: ${result.stderr || result.error}`);
  }

  async start() {
    const args = ['-D', join(this.dir, 'data'), '-p', String(this.port), '-k', this.dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=100'];
    this.proc = start(join(PG_BIN, 'postgres'), args, this.user);
    await until('PostgreSQL', () => this.query('SELECT 1'), 30_000);
  }

  /** `fast` (SIGINT: sessions ended, then a clean shutdown) or `immediate` (SIGQUIT: as a crash, recovery at start). */
  async stop(mode = 'fast') {
    await stopProcess(this.proc, mode === 'immediate' ? 'SIGQUIT' : 'SIGINT');
    this.proc = undefined;
  }

  async query(text, values) {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 2000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

export class RedisServer {
  constructor(port) {
    this.port = port;
    this.url = `redis://127.0.0.1:${port}`;
  }

  async start() {
    this.proc = start('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no']);
    await until('Redis', async () => this.proc.output.includes('Ready to accept connections'), 15_000);
  }

  /** As a crash: everything Redis held (sessions, locks, counters) is gone. */
  async stop() {
    await stopProcess(this.proc, 'SIGKILL');
    this.proc = undefined;
  }
}

/**
 * The blob folder on a small file system: a tmpfs of `sizeMiB` when this process may mount one (root),
 * which `fill` makes full and `free` empties again. Without mount rights it is a plain folder and the
 * full-disk fault is not injected (`full` says why).
 */
export class BlobDisk {
  constructor(root, sizeMiB = 32) {
    this.path = join(root, 'blobs');
    this.sizeMiB = sizeMiB;
    mkdirSync(this.path);
    const result = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', this.path], { encoding: 'utf8' });
    this.mounted = result.status === 0;
    this.why = this.mounted ? `tmpfs of ${sizeMiB} MiB` : `a plain folder (mount failed: ${(result.stderr || String(result.error)).trim()}); the full-disk fault is skipped`;
  }

  /** Writes a filler file until the file system refuses (ENOSPC). */
  fill() {
    const filler = join(this.path, '.filler');
    const fd = openSync(filler, 'w');
    const chunk = Buffer.alloc(1024 * 1024, 1);
    try {
      for (;;) writeSync(fd, chunk);
    } catch (error) {
      if (error.code !== 'ENOSPC') throw error;
    }
    try {
      for (;;) writeSync(fd, chunk, 0, 4096); // the last pages
    } catch (error) {
      if (error.code !== 'ENOSPC') throw error;
    } finally {
      closeSync(fd);
    }
  }

  free() {
    rmSync(join(this.path, '.filler'), { force: true });
  }

  remove() {
    if (this.mounted) spawnSync('umount', [this.path]);
  }
}

/** One odbrest instance: examples/cluster/server.mjs with the soak's environment, on a fixed port. */
export class Instance {
  constructor(name, script, port, env) {
    this.name = name;
    this.script = script;
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.env = env;
    this.pids = [];
  }

  async start() {
    this.proc = start(process.execPath, [this.script], { env: { ...process.env, ...this.env, ODBREST_PORT: String(this.port), ODBREST_HOSTNAME: '127.0.0.1' } });
    this.pid = this.proc.child.pid;
    this.pids.push(this.pid);
    const proc = this.proc;
    await until(`instance ${this.name}`, async () => {
      if (proc.child.exitCode !== null) throw new Error(`instance ${this.name} exited: ${proc.output}`);
      return proc.output.includes('listening on');
    }, 60_000).catch((error) => {
      throw new Error(`${error.message}\n${proc.output}`);
    });
  }

  get alive() {
    return this.proc !== undefined && this.proc.child.exitCode === null && this.proc.child.signalCode === null;
  }

  async kill() {
    await stopProcess(this.proc, 'SIGKILL');
  }

  async stop() {
    await stopProcess(this.proc, 'SIGTERM');
  }

  /** Resident memory (MiB) and open file descriptors of the running process, from /proc. */
  sample() {
    if (!this.alive) return undefined;
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
      return { pid: this.pid, rss: rssKiB / 1024, fds: readdirSync(`/proc/${this.pid}/fd`).length };
    } catch {
      return undefined;
    }
  }
}

export function removeFolder(path) {
  rmSync(path, { recursive: true, force: true });
}
