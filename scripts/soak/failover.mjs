// The topology of `npm run soak -- --failover` (issue 45): a PostgreSQL primary and a synchronous
// streaming replica behind an endpoint (a TCP proxy of this script's, what a virtual IP, DNS or
// PgBouncer is in production), and a Redis Cluster of three masters with a replica each. Its faults:
// the primary killed with SIGKILL, the replica promoted (`pg_promote()`) and the endpoint switched,
// then a new synchronous replica made from the new primary; a Redis master killed with SIGKILL until
// the cluster has promoted its replica, then started again (it comes back as a replica). Only
// processes started here are ever signalled, by their own pid.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { freePort, PostgresServer, sleep, start, stopProcess, until } from './servers.mjs';

const PG_BIN = process.env.SOAK_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Forwards 127.0.0.1:port to a target port; `switchTo` sends new connections elsewhere and resets the open ones. */
class Endpoint {
  #server;
  #sockets = new Set();

  constructor(targetPort) {
    this.targetPort = targetPort;
  }

  async start() {
    this.#server = createServer((client) => {
      const upstream = createConnection({ host: '127.0.0.1', port: this.targetPort });
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = this.#server.address().port;
  }

  switchTo(targetPort) {
    this.targetPort = targetPort;
    for (const socket of this.#sockets) socket.resetAndDestroy();
  }

  async stop() {
    for (const socket of this.#sockets) socket.resetAndDestroy();
    await new Promise((resolve) => this.#server?.close(resolve) ?? resolve());
  }
}

/** A PostgreSQL server that may also start as a streaming replica of another (`pg_basebackup -R`). */
class Node extends PostgresServer {
  constructor(root, name, port) {
    // the postgres user (as root) passes through the soak's folder to its own
    mkdirSync(join(root, name), { mode: 0o711 });
    if (process.getuid?.() === 0) chmodSync(root, 0o711);
    super(join(root, name), port);
  }

  /**
   * A fresh data folder copied from the running `primary`, which then streams to it. Not spawnSync:
   * the copy takes seconds, and the endpoint and the load run in this process.
   */
  async backupFrom(primary) {
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { mode: 0o700 });
    if (this.user.uid !== undefined) chownSync(this.dir, this.user.uid, this.user.gid);
    const args = ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', join(this.dir, 'data'), '-R', '-X', 'stream', '--no-sync', '--checkpoint=fast'];
    const copy = start(join(PG_BIN, 'pg_basebackup'), args, this.user);
    const code = await copy.exited;
    if (code !== 0) throw new Error(`pg_basebackup failed (${code}): ${copy.output}`);
  }

  kill() {
    return stopProcess(this.proc, 'SIGKILL').then(() => void (this.proc = undefined));
  }
}

/**
 * A primary and a synchronous replica behind an endpoint; `url`, `port`, `query` and `stop`/`start`
 * (a restart fault) concern the current primary, as `PostgresServer`'s do for the single server.
 */
export class ReplicatedPostgres {
  constructor(root, ports) {
    this.nodes = [new Node(root, 'pg-1', ports[0]), new Node(root, 'pg-2', ports[1])];
    this.primary = this.nodes[0];
    this.endpoint = new Endpoint(ports[0]);
  }

  get standby() {
    return this.nodes.find((node) => node !== this.primary);
  }

  get port() {
    return this.endpoint.port;
  }

  get url() {
    return `postgres://postgres@127.0.0.1:${this.endpoint.port}/postgres`;
  }

  init() {
    this.primary.init();
  }

  /** First: the primary, its replica made synchronous, the endpoint. Later: restarts the primary (a restart fault). */
  async start() {
    if (this.endpoint.port === undefined) {
      await this.primary.start();
      await this.#attachStandby();
      await this.endpoint.start();
      return;
    }
    await this.primary.start();
  }

  stop(mode) {
    return this.primary.stop(mode);
  }

  query(text, values) {
    return this.primary.query(text, values);
  }

  /** Kills the primary, promotes the replica, switches the endpoint; answers when the endpoint leads to the new primary. */
  async failover() {
    const [old, next] = [this.primary, this.standby];
    await old.kill();
    await next.query('SELECT pg_promote(true, 60)');
    // no standby until a new one is made: a new primary that waited for one would take no write
    await next.query(`ALTER SYSTEM RESET synchronous_standby_names`);
    await next.query('SELECT pg_reload_conf()');
    this.primary = next;
    this.endpoint.switchTo(next.port);
  }

  /** After a failover: the dead primary's folder made again as a replica of the new primary, then synchronous. */
  async rebuildStandby() {
    await this.#attachStandby();
  }

  async #attachStandby() {
    const standby = this.standby;
    await standby.backupFrom(this.primary);
    await standby.start();
    await this.primary.query(`ALTER SYSTEM SET synchronous_standby_names = '*'`);
    await this.primary.query('SELECT pg_reload_conf()');
    await until('a synchronous replica', async () => (await this.primary.query(`SELECT sync_state FROM pg_stat_replication`))[0]?.sync_state === 'sync', 30_000);
  }

  async stopAll() {
    await this.endpoint.stop();
    for (const node of this.nodes) await node.stop('fast').catch(() => undefined);
  }
}

/** Three masters with a replica each (`cluster-node-timeout` 1 s); `failover` kills a master until its replica took over. */
export class RedisClusterServers {
  constructor(root) {
    this.root = root;
    this.servers = [];
  }

  /** `REDIS_CLUSTER_NODES` of the instances. */
  get nodesEnv() {
    return this.servers.map((server) => `127.0.0.1:${server.port}`).join(',');
  }

  get port() {
    return this.servers.map((server) => server.port).join(',');
  }

  async start() {
    if (this.servers.length === 0) {
      for (let i = 0; i < 6; i++) this.servers.push({ port: await freePort(), dir: join(this.root, `redis-${i}`) });
      for (const server of this.servers) mkdirSync(server.dir);
      for (const server of this.servers) await this.#startServer(server);
      this.#cli(this.servers[0].port, '--cluster', 'create', ...this.servers.map((server) => `127.0.0.1:${server.port}`), '--cluster-replicas', '1', '--cluster-yes');
    } else {
      for (const server of this.servers) if (!server.proc) await this.#startServer(server);
    }
    await this.#healthy();
  }

  /** Kills the master of `key`'s slot (the event channel's: the subscriptions must follow it) and waits until the cluster promoted its replica. */
  async failover(key) {
    const port = this.#masterOf(key);
    const server = this.servers.find((candidate) => candidate.port === port);
    await stopProcess(server.proc, 'SIGKILL');
    server.proc = undefined;
    await until('the Redis replica promoted', async () => this.#slots().every((range) => range[2][1] !== port) && this.#up().every((other) => this.#cli(other.port, 'CLUSTER', 'INFO').includes('cluster_state:ok')), 30_000);
    return port;
  }

  async stop() {
    for (const server of this.servers) {
      await stopProcess(server.proc, 'SIGTERM');
      server.proc = undefined;
    }
  }

  async #startServer(server) {
    const args = ['--port', String(server.port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(server.dir, 'nodes.conf'), '--dir', server.dir];
    args.push('--cluster-node-timeout', '1000', '--save', '', '--appendonly', 'no', '--daemonize', 'no');
    server.proc = start('redis-server', args);
    await until('Redis', async () => server.proc.output.includes('Ready to accept connections'), 15_000);
  }

  /** Every node up, the cluster ok on each, every replica's link to its master up. */
  async #healthy() {
    await until(
      'the Redis Cluster',
      async () =>
        this.servers.every((server) => {
          if (!this.#cli(server.port, 'CLUSTER', 'INFO').includes('cluster_state:ok')) return false;
          const replication = this.#cli(server.port, 'INFO', 'replication');
          return !replication.includes('role:slave') || replication.includes('master_link_status:up');
        }),
      30_000,
    );
  }

  #up() {
    return this.servers.filter((server) => server.proc);
  }

  #slots() {
    return JSON.parse(this.#cli(this.#up()[0].port, '--json', 'CLUSTER', 'SLOTS'));
  }

  #masterOf(key) {
    const slot = Number(this.#cli(this.#up()[0].port, 'CLUSTER', 'KEYSLOT', key).trim());
    return this.#slots().find(([first, last]) => first <= slot && slot <= last)[2][1];
  }

  #cli(port, ...args) {
    return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', stdio: 'pipe' });
  }
}

export { sleep };
