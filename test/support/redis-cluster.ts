/**
 * A Redis Cluster of three masters the test starts from `redis-server` on ports of its own, in a
 * temporary folder (never the shared server): `redis-cli --cluster create`, then waits until every
 * node answers `cluster_state:ok`. `undefined` (with the reason printed) where the binaries are missing.
 * With `replicas: 1` each master gets a replica, and `killMaster` kills a master with SIGKILL and waits
 * until the cluster has promoted its replica (`nodeTimeoutMs`, default 1 s, bounds how soon it does);
 * `failover` swaps a master and its replica the planned way (CLUSTER FAILOVER), both staying up.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.js';
import { requireOrSkip } from './servers.js';

export interface RedisCluster {
  nodes: Array<{ host: string; port: number }>;
  /** The port of the master that serves `key`'s slot now. */
  masterOf(key: string): number;
  /** Kills the master at `port` with SIGKILL and waits until its slots have a new master and the cluster is ok. */
  killMaster(port: number): Promise<void>;
  /** Starts a killed node again; answers once it answers (it then learns it is a replica of its slots' new master). */
  restart(port: number): Promise<void>;
  /**
   * A planned failover of the master at `port` (CLUSTER FAILOVER on its replica, no write lost): answers
   * the replica's port once every node names it as the slots' master and the old master replicates from it.
   */
  failover(port: number): Promise<number>;
  close(): Promise<void>;
}

export interface ClusterOptions {
  /** Replicas per master (0 or 1). Default 0. */
  replicas?: number;
  /** `cluster-node-timeout` with replicas: how long a master may be unreachable before its replica takes over. Default 1000 ms. */
  nodeTimeoutMs?: number;
}

function missing(): string | undefined {
  for (const binary of ['redis-server', 'redis-cli']) {
    try {
      execFileSync(binary, ['--version'], { stdio: 'pipe' });
    } catch {
      return `${binary} not found on PATH`;
    }
  }
  return undefined;
}

export async function startRedisCluster(suites: string, options: ClusterOptions = {}): Promise<RedisCluster | undefined> {
  const reason = missing();
  if (reason) return requireOrSkip(reason, suites) || undefined;
  const folder = mkdtempSync(join(tmpdir(), 'odbrest-redis-cluster-'));
  const servers: ChildProcess[] = [];
  const replicas = options.replicas ?? 0;
  const startNode = (port: number) => {
    const dir = join(folder, String(port));
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'), '--dir', dir, '--save', '', '--appendonly', 'no'];
    // a short node timeout only where a replica is to take over (elsewhere Redis's default, 15 s)
    if (replicas > 0) args.push('--cluster-node-timeout', String(options.nodeTimeoutMs ?? 1000));
    return spawn('redis-server', args, { stdio: 'ignore' });
  };
  const nodes: RedisCluster['nodes'] = [];
  const cli = (port: number, ...args: string[]) => execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', stdio: 'pipe' });
  const close = async () => {
    await Promise.all(
      servers.map((server) => {
        if (server.exitCode !== null || server.signalCode !== null) return undefined;
        const exited = new Promise((resolve) => server.once('exit', resolve));
        server.kill('SIGTERM');
        return exited;
      }),
    );
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3 * (1 + replicas); i++) {
      const port = await freePort();
      execFileSync('mkdir', ['-p', join(folder, String(port))]);
      servers.push(startNode(port));
      nodes.push({ host: '127.0.0.1', port });
    }
    for (const node of nodes) await until(() => cli(node.port, 'PING').trim() === 'PONG');
    cli(nodes[0]!.port, '--cluster', 'create', ...nodes.map((node) => `127.0.0.1:${node.port}`), '--cluster-replicas', String(replicas), '--cluster-yes');
    for (const node of nodes) await until(() => cli(node.port, 'CLUSTER', 'INFO').includes('cluster_state:ok'));
    // every replica attached and in sync with its master
    if (replicas > 0) await until(() => nodes.every((node) => !/role:slave/.test(cli(node.port, 'INFO', 'replication')) || /master_link_status:up/.test(cli(node.port, 'INFO', 'replication'))));
  } catch (error) {
    await close();
    throw error;
  }
  const living = () => nodes.filter((_, i) => servers[i]!.exitCode === null && servers[i]!.signalCode === null);
  const masterOf = (key: string) => {
    const slot = Number(cli(living()[0]!.port, 'CLUSTER', 'KEYSLOT', key).trim());
    // CLUSTER SHARDS would be simpler, but CLUSTER SLOTS is there in every Redis 7
    const raw = cli(living()[0]!.port, '--json', 'CLUSTER', 'SLOTS');
    const ranges = JSON.parse(raw) as Array<[number, number, [string, number, ...unknown[]]]>;
    const range = ranges.find(([first, last]) => first <= slot && slot <= last);
    if (!range) throw new Error(`no master serves slot ${slot}`);
    return range[2][1];
  };
  return {
    nodes,
    masterOf,
    async killMaster(port: number) {
      const index = nodes.findIndex((node) => node.port === port);
      const server = servers[index]!;
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGKILL');
      await exited;
      await until(() => {
        const rest = living();
        const [first] = rest;
        if (!first || !rest.every((node) => cli(node.port, 'CLUSTER', 'INFO').includes('cluster_state:ok'))) return false;
        const ranges = JSON.parse(cli(first.port, '--json', 'CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
        return ranges.every((range) => range[2][1] !== port);
      }, 30_000);
    },
    async restart(port: number) {
      const index = nodes.findIndex((node) => node.port === port);
      servers[index] = startNode(port);
      await until(() => cli(port, 'PING').trim() === 'PONG');
    },
    async failover(port: number) {
      const replica = living().find((node) => {
        const replication = cli(node.port, 'INFO', 'replication');
        return /role:slave/.test(replication) && replication.includes(`master_port:${port}`);
      });
      if (!replica) throw new Error(`the master at ${port} has no replica`);
      // a replica still syncing (a node just restarted) would let the failover time out
      await until(() => /master_link_status:up/.test(cli(replica.port, 'INFO', 'replication')), 30_000);
      cli(replica.port, 'CLUSTER', 'FAILOVER');
      await until(() => {
        if (!/master_link_status:up/.test(cli(port, 'INFO', 'replication'))) return false;
        return living().every((node) => {
          const ranges = JSON.parse(cli(node.port, '--json', 'CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
          return ranges.every((range) => range[2][1] !== port) && ranges.some((range) => range[2][1] === replica.port);
        });
      }, 30_000);
      return replica.port;
    },
    close,
  };
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  for (let attempt = 0; attempt < timeoutMs / 50; attempt++) {
    try {
      if (check()) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the Redis cluster did not come up');
}
