/**
 * A Redis Cluster of three masters the test starts from `redis-server` on ports of its own, in a
 * temporary folder (never the shared server): `redis-cli --cluster create`, then waits until every
 * node answers `cluster_state:ok`. `undefined` (with the reason printed) where the binaries are missing.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.js';
import { requireOrSkip } from './servers.js';

export interface RedisCluster {
  nodes: Array<{ host: string; port: number }>;
  close(): Promise<void>;
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

export async function startRedisCluster(suites: string): Promise<RedisCluster | undefined> {
  const reason = missing();
  if (reason) return requireOrSkip(reason, suites) || undefined;
  const folder = mkdtempSync(join(tmpdir(), 'odbrest-redis-cluster-'));
  const servers: ChildProcess[] = [];
  const nodes: RedisCluster['nodes'] = [];
  const close = async () => {
    await Promise.all(
      servers.map((server) => {
        if (server.exitCode !== null) return undefined;
        const exited = new Promise((resolve) => server.once('exit', resolve));
        server.kill('SIGTERM');
        return exited;
      }),
    );
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const dir = join(folder, String(port));
      execFileSync('mkdir', ['-p', dir]);
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'), '--dir', dir, '--save', '', '--appendonly', 'no'];
      servers.push(spawn('redis-server', args, { stdio: 'ignore' }));
      nodes.push({ host: '127.0.0.1', port });
    }
    const cli = (port: number, ...args: string[]) => execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', stdio: 'pipe' });
    for (const node of nodes) await until(() => cli(node.port, 'PING').trim() === 'PONG');
    cli(nodes[0]!.port, '--cluster', 'create', ...nodes.map((node) => `127.0.0.1:${node.port}`), '--cluster-replicas', '0', '--cluster-yes');
    for (const node of nodes) await until(() => cli(node.port, 'CLUSTER', 'INFO').includes('cluster_state:ok'));
  } catch (error) {
    await close();
    throw error;
  }
  return { nodes, close };
}

async function until(check: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      if (check()) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the Redis cluster did not come up');
}
