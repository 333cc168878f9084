/**
 * A PostgreSQL primary and a streaming replica of it, each a server of its own started from the
 * installed binaries (`PG_BIN`, default the Debian path of PostgreSQL 15) in a temporary folder, on
 * ports of its own: `initdb`, then `pg_basebackup -R` of the running primary. As root, the servers
 * run as the `postgres` user (PostgreSQL refuses root). `undefined` (with the reason printed) where the binaries are missing.
 *
 * For failover tests (`PairOptions`): synchronous replication, the replica's WAL stream through a
 * proxy the test can cut (so that the primary acknowledges writes the replica never receives), the
 * primary killed with SIGKILL and the replica promoted.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, chownSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { TcpProxy } from './outage.js';
import { freePort } from './processes.js';
import { requireOrSkip } from './servers.js';

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface ReplicaPair {
  primaryUrl: string;
  replicaUrl: string;
  /** Stops the replica's server (a failed replica), or starts it again. */
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  /** The ports of the two servers (a failover test points its endpoint at one or the other). */
  primaryPort: number;
  replicaPort: number;
  /** Kills the primary's postmaster with SIGKILL (its backends then exit), as a crash would. */
  killPrimary(): Promise<void>;
  /** `pg_promote()` on the replica: it leaves recovery and takes writes (waits until it has). */
  promoteReplica(): Promise<void>;
  /** With `replicationProxy`: ends the replica's WAL stream and refuses a new one, or lets it flow again. */
  cutReplication(): Promise<void>;
  restoreReplication(): Promise<void>;
  close(): Promise<void>;
}

export interface PairOptions {
  /** `synchronous_standby_names = '*'` on the primary (set after the base backup): a commit waits for the replica. */
  synchronous?: boolean;
  /** The replica streams WAL through a proxy the test controls (`cutReplication`). */
  replicationProxy?: boolean;
}

export function replicaBinariesMissing(): string | undefined {
  const missing = ['initdb', 'postgres', 'pg_basebackup'].filter((name) => !existsSync(join(PG_BIN, name)));
  return missing.length === 0 ? undefined : `${missing.join(', ')} not found in ${PG_BIN} (set PG_BIN)`;
}

/** Starts both servers, or answers `undefined` after saying why the suites are skipped. */
export async function startReplicaPair(suites: string, options: PairOptions = {}): Promise<ReplicaPair | undefined> {
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
  const link = options.replicationProxy ? new TcpProxy('127.0.0.1', primaryPort) : undefined;
  const start = async (name: string, dir: string, port: number) => {
    const args = ['-D', dir, '-p', String(port), '-k', folder, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'shared_buffers=16MB'];
    // the replica's WAL stream through the link (a command-line setting overrides what -R wrote)
    if (name === 'replica' && link) args.push('-c', `primary_conninfo=host=127.0.0.1 port=${link.port} user=postgres application_name=replica`);
    if (name === 'replica') args.push('-c', 'wal_receiver_timeout=5s', '-c', 'wal_retrieve_retry_interval=200ms');
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
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT'); // fast shutdown
    await exited;
  };
  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
  const replicaUrl = `postgres://postgres@127.0.0.1:${replicaPort}/postgres`;
  try {
    run('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await start('primary', primaryDir, primaryPort);
    await link?.start();
    run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '--no-sync']);
    await start('replica', replicaDir, replicaPort);
    if (options.synchronous) {
      await sql(primaryUrl, `ALTER SYSTEM SET synchronous_standby_names = '*'`);
      await sql(primaryUrl, 'SELECT pg_reload_conf()');
      await until(async () => (await sql(primaryUrl, `SELECT sync_state FROM pg_stat_replication`))[0]?.sync_state === 'sync');
    }
  } catch (error) {
    for (const name of [...servers.keys()]) await stop(name);
    await link?.cut();
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  return {
    primaryUrl,
    replicaUrl,
    primaryPort,
    replicaPort,
    stopReplica: () => stop('replica'),
    startReplica: () => start('replica', replicaDir, replicaPort),
    async killPrimary() {
      const child = servers.get('primary');
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    async promoteReplica() {
      await sql(replicaUrl, 'SELECT pg_promote(true, 60)');
    },
    cutReplication: async () => link?.cut(),
    restoreReplication: async () => link?.restore(),
    async close() {
      await stop('replica');
      await stop('primary');
      await link?.cut();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** One statement on a connection of its own. */
async function sql(url: string, text: string): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > end) throw new Error('the replica did not become synchronous');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function uid(user: string): number {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
}

function gid(user: string): number {
  return Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
}
