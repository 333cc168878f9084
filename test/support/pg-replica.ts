/**
 * A PostgreSQL primary and a streaming replica of it, each a server of its own started from the
 * installed binaries (`PG_BIN`, default the Debian path of PostgreSQL 15) in a temporary folder, on
 * ports of its own: `initdb`, then `pg_basebackup -R` of the running primary. As root, the servers
 * run as the `postgres` user (PostgreSQL refuses root). `undefined` (with the reason printed) where the binaries are missing.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, chownSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './processes.js';
import { requireOrSkip } from './servers.js';

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface ReplicaPair {
  primaryUrl: string;
  replicaUrl: string;
  /** Stops the replica's server (a failed replica), or starts it again. */
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  close(): Promise<void>;
}

export function replicaBinariesMissing(): string | undefined {
  const missing = ['initdb', 'postgres', 'pg_basebackup'].filter((name) => !existsSync(join(PG_BIN, name)));
  return missing.length === 0 ? undefined : `${missing.join(', ')} not found in ${PG_BIN} (set PG_BIN)`;
}

/** Starts both servers, or answers `undefined` after saying why the suites are skipped. */
export async function startReplicaPair(suites: string): Promise<ReplicaPair | undefined> {
  const missing = replicaBinariesMissing();
  if (missing) return requireOrSkip(missing, suites) || undefined;
  const root = process.getuid?.() === 0;
  const folder = mkdtempSync(join(tmpdir(), 'odbrest-replica-'));
  if (root) chownSync(folder, uid('postgres'), gid('postgres'));
  const as = root ? { uid: uid('postgres'), gid: gid('postgres') } : {};
  const run = (command: string, args: string[]) => execFileSync(join(PG_BIN, command), args, { stdio: 'pipe', ...as });
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const primaryDir = join(folder, 'primary');
  const replicaDir = join(folder, 'replica');
  const servers = new Map<string, ChildProcess>();
  const start = async (name: string, dir: string, port: number) => {
    const args = ['-D', dir, '-p', String(port), '-k', folder, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'shared_buffers=16MB'];
    const child = spawn(join(PG_BIN, 'postgres'), args, { stdio: 'ignore', ...as });
    servers.set(name, child);
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    for (let attempt = 0; ; attempt++) {
      const client = new pg.Client({ connectionString: url });
      try {
        await client.connect();
        await client.end();
        return;
      } catch (error) {
        await client.end().catch(() => undefined);
        if (attempt > 200 || child.exitCode !== null) throw new Error(`PostgreSQL ${name} did not start: ${String(error)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  const stop = async (name: string) => {
    const child = servers.get(name);
    servers.delete(name);
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT'); // fast shutdown
    await exited;
  };
  try {
    run('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await start('primary', primaryDir, primaryPort);
    run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '--no-sync']);
    await start('replica', replicaDir, replicaPort);
  } catch (error) {
    for (const name of [...servers.keys()]) await stop(name);
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  return {
    primaryUrl: `postgres://postgres@127.0.0.1:${primaryPort}/postgres`,
    replicaUrl: `postgres://postgres@127.0.0.1:${replicaPort}/postgres`,
    stopReplica: () => stop('replica'),
    startReplica: () => start('replica', replicaDir, replicaPort),
    async close() {
      await stop('replica');
      await stop('primary');
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

function uid(user: string): number {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
}

function gid(user: string): number {
  return Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
}
