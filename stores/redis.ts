import { Cluster, Redis, ReplyError, type ClusterNode } from 'ioredis';
import { StorageUnavailableError, type KeyValueStore } from '../src/index.js';

export interface RedisKeyValueStoreOptions {
  /** `redis://` or `rediss://` URL. Default `redis://127.0.0.1:6379`. Ignored when `client` or `nodes` is given. */
  url?: string;
  /**
   * The nodes of a Redis Cluster, instead of `url` (any of them; the rest are discovered): the store
   * makes its own cluster client, with the same timeouts and no offline queue. Ignored when `client` is given.
   */
  nodes?: ClusterNode[];
  /**
   * A client of your own (a `Redis` or a `Cluster`); it is not closed by `close()`. Create it with
   * `enableOfflineQueue: false` and a `commandTimeout`, or an outage makes requests wait instead of
   * failing with `503`.
   */
  client?: Redis | Cluster;
  /** Put before every key, e.g. `myapp:`. May not contain `{` or `}` (they choose the cluster slot). */
  prefix?: string;
  /** Longest wait for a connection when a request arrives before the first one is made. Default 2000 ms. */
  connectTimeoutMs?: number;
  /** Longest wait for a command's answer. Default 2000 ms. */
  commandTimeoutMs?: number;
  /** Called with connection errors (the store keeps reconnecting by itself). Default: ignored. */
  onConnectionError?: (error: Error) => void;
}

/** Server replies that mean "not now" rather than "wrong command". */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|NOREPLICAS)\b/;

/** Compare-and-set: writes ARGV[2] with TTL ARGV[3] only if the value is ARGV[1]. */
const CAS = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0`;
/**
 * Increment by ARGV[2], whose TTL is set once, when the counter is created, and not renewed by later
 * increments; a negative step never creates a counter.
 */
const INCREMENT = `local by = tonumber(ARGV[2])
local existed = redis.call('EXISTS', KEYS[1])
if existed == 0 and by < 0 then return 0 end
local n = redis.call('INCRBY', KEYS[1], by)
if existed == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return n`;

/**
 * A line (`lineUp`): KEYS[1] holds the members by the order they came (a number one past the last
 * one's), KEYS[2] by the end of their time (Redis's own clock, so every instance agrees). Members whose
 * time passed leave first; the member joins at the end unless it stands in the line, gets ARGV[2] ms,
 * and the answer is how many stand ahead of it. Both keys live as long as the line's longest-lived member.
 */
const LINE_UP = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for i = 1, #gone, 1000 do redis.call('ZREM', KEYS[1], unpack(gone, i, math.min(i + 999, #gone))) end
if #gone > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now) end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  local place = 1
  if last[2] then place = tonumber(last[2]) + 1 end
  redis.call('ZADD', KEYS[1], place, ARGV[1])
end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
local longest = tonumber(redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2]) - now
redis.call('PEXPIRE', KEYS[1], longest)
redis.call('PEXPIRE', KEYS[2], longest)
return redis.call('ZRANK', KEYS[1], ARGV[1])`;
/** Leaving a line: the member goes from both keys, and when it stood in the line, ARGV[3] is published on channel ARGV[2]. */
const LEAVE_LINE = `local left = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if left == 1 then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
return left`;

type Client = (Redis | Cluster) & ScriptCommands;

interface ScriptCommands {
  odbrestCas(key: string, expected: string, value: string, ttlMs: number): Promise<number>;
  odbrestIncrement(key: string, ttlMs: number, by: number): Promise<number>;
  odbrestLineUp(order: string, expiry: string, member: string, ttlMs: number): Promise<number>;
  odbrestLeaveLine(order: string, expiry: string, member: string, channel: string, message: string): Promise<number>;
}

/**
 * KeyValueStore on Redis (6.2 or later, or Redis Cluster). Every operation touches one key (a line,
 * two keys in one slot), so every operation is atomic and stays within one cluster slot: compare-and-set and counters are Lua
 * scripts, one-time values use GETDEL, a read that renews the lifetime GETEX, and lifetimes are Redis's own TTLs (PX), so expiry needs no
 * clean-up. Session keys (`sess:{id}`) carry their id as a hash tag, so any later keys of a session
 * land in the same slot.
 *
 * Outages: commands are never queued while disconnected and in-flight commands are not resent, so an
 * unreachable server fails a request at once with `StorageUnavailableError` (answered `503`). The
 * client keeps reconnecting in the background; requests succeed again as soon as it is back.
 */
export class RedisKeyValueStore implements KeyValueStore {
  readonly systemName = 'redis';
  readonly #client: Client;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #connectTimeoutMs: number;
  readonly #onConnectionError: ((error: Error) => void) | undefined;
  #connecting: Promise<void> | undefined;
  /** This store's mark on the notices of its own `leaveLine`s (its watchers heard them at once). */
  readonly #id = globalThis.crypto.randomUUID();
  readonly #lineWatchers = new Set<(key: string) => void>();
  /** The connection that receives other instances' notices, made by the first `watchLines`. */
  #subscribed: Promise<void> | undefined;
  #subscriber: Redis | Cluster | undefined;

  constructor(options: RedisKeyValueStoreOptions = {}) {
    const prefix = options.prefix ?? '';
    if (/[{}]/.test(prefix)) throw new Error('RedisKeyValueStore: prefix may not contain { or } (they choose the cluster slot)');
    this.#prefix = prefix;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 2000;
    const retryStrategy = (attempt: number) => Math.min(50 * attempt, 1000);
    const connection = {
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      connectTimeout: this.#connectTimeoutMs,
      commandTimeout: options.commandTimeoutMs ?? 2000,
    };
    const client =
      options.client ??
      (options.nodes
        ? new Cluster(options.nodes, { enableOfflineQueue: false, clusterRetryStrategy: retryStrategy, redisOptions: connection })
        : new Redis(options.url ?? 'redis://127.0.0.1:6379', { ...connection, retryStrategy }));
    this.#ownsClient = options.client === undefined;
    // Without a listener, ioredis reports each failed reconnect on the console.
    this.#onConnectionError = options.onConnectionError;
    client.on('error', (error: Error) => options.onConnectionError?.(error));
    client.defineCommand('odbrestCas', { numberOfKeys: 1, lua: CAS });
    client.defineCommand('odbrestIncrement', { numberOfKeys: 1, lua: INCREMENT });
    client.defineCommand('odbrestLineUp', { numberOfKeys: 2, lua: LINE_UP });
    client.defineCommand('odbrestLeaveLine', { numberOfKeys: 2, lua: LEAVE_LINE });
    this.#client = client as Client;
  }

  get(key: string): Promise<string | undefined> {
    return this.#run(async (client) => (await client.get(this.#key(key))) ?? undefined);
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    return this.#run(async (client) => void (await client.set(this.#key(key), value, 'PX', toTtl(ttlMs))));
  }

  compareAndSet(key: string, expected: string | undefined, value: string, ttlMs: number): Promise<boolean> {
    return this.#run(async (client) => {
      if (expected === undefined) return (await client.set(this.#key(key), value, 'PX', toTtl(ttlMs), 'NX')) === 'OK';
      return (await client.odbrestCas(this.#key(key), expected, value, toTtl(ttlMs))) === 1;
    });
  }

  take(key: string): Promise<string | undefined> {
    return this.#run(async (client) => (await client.getdel(this.#key(key))) ?? undefined);
  }

  delete(key: string): Promise<boolean> {
    return this.#run(async (client) => (await client.del(this.#key(key))) === 1);
  }

  increment(key: string, ttlMs: number, by = 1): Promise<number> {
    if (!Number.isSafeInteger(by)) return Promise.reject(new RangeError('increment: by must be an integer'));
    return this.#run((client) => client.odbrestIncrement(this.#key(key), toTtl(ttlMs), by));
  }

  ttl(key: string): Promise<number> {
    return this.#run(async (client) => {
      const left = await client.pttl(this.#key(key));
      if (left === -1) return Number.MAX_SAFE_INTEGER; // no lifetime: set by someone else than this store
      return Math.max(0, left);
    });
  }

  expire(key: string, ttlMs: number): Promise<boolean> {
    return this.#run(async (client) => (await client.pexpire(this.#key(key), toTtl(ttlMs))) === 1);
  }

  getAndExpire(key: string, ttlMs: number): Promise<string | undefined> {
    return this.#run(async (client) => (await client.getex(this.#key(key), 'PX', toTtl(ttlMs))) ?? undefined);
  }

  lineUp(key: string, member: string, ttlMs: number): Promise<number> {
    return this.#run((client) => client.odbrestLineUp(...this.#lineKeys(key), member, toTtl(ttlMs)));
  }

  async leaveLine(key: string, member: string): Promise<void> {
    const left = await this.#run((client) => client.odbrestLeaveLine(...this.#lineKeys(key), member, this.#channel(), `${this.#id}\n${key}`));
    if (left === 1) for (const listener of this.#lineWatchers) listener(key);
  }

  async watchLines(listener: (key: string) => void): Promise<() => void> {
    const watcher = (key: string) => listener(key);
    this.#lineWatchers.add(watcher);
    try {
      await (this.#subscribed ??= this.#subscribe());
    } catch (error) {
      this.#lineWatchers.delete(watcher);
      throw new StorageUnavailableError('Redis is unavailable', { cause: error });
    }
    return () => void this.#lineWatchers.delete(watcher);
  }

  async close(): Promise<void> {
    this.#subscriber?.disconnect();
    if (!this.#ownsClient) return;
    if (this.#client.status === 'ready') await this.#client.quit().catch(() => undefined);
    this.#client.disconnect();
  }

  #key(key: string): string {
    return this.#prefix + key;
  }

  /** A line's two keys, in one cluster slot: the hash tag (between the braces) is the same in both, and never empty. */
  #lineKeys(key: string): [order: string, expiry: string] {
    const base = `${this.#prefix}line:{=${key}}`;
    return [`${base}:order`, `${base}:expiry`];
  }

  #channel(): string {
    return `${this.#prefix}odbrest:lines`;
  }

  /**
   * A second connection, subscribed to the lines' channel: the notices of other instances' `leaveLine`
   * reach this one's watchers. It waits for the server when there is none yet (ioredis subscribes
   * again after a lost connection; notices sent meanwhile are lost, and watchers look again anyway).
   */
  #subscribe(): Promise<void> {
    const client = this.#client;
    const subscriber = client instanceof Cluster ? client.duplicate(undefined, { enableOfflineQueue: true }) : client.duplicate({ enableOfflineQueue: true });
    this.#subscriber = subscriber;
    subscriber.on('error', (error: Error) => this.#onConnectionError?.(error));
    subscriber.on('message', (channel: string, message: string) => {
      const split = message.indexOf('\n');
      if (channel !== this.#channel() || split < 0 || message.slice(0, split) === this.#id) return;
      const key = message.slice(split + 1);
      for (const listener of this.#lineWatchers) listener(key);
    });
    return subscriber.subscribe(this.#channel()).then(
      () => undefined,
      (error: unknown) => {
        this.#subscribed = undefined;
        this.#subscriber = undefined;
        subscriber.disconnect();
        throw error;
      },
    );
  }

  /** Runs one command; connection trouble becomes `StorageUnavailableError`. */
  async #run<T>(command: (client: Client) => Promise<T>): Promise<T> {
    try {
      await this.#connected();
      return await command(this.#client);
    } catch (error) {
      if (error instanceof StorageUnavailableError) throw error;
      if (error instanceof ReplyError && !TRANSIENT_REPLY.test((error as Error).message)) throw error;
      throw new StorageUnavailableError('Redis is unavailable', { cause: error });
    }
  }

  /**
   * Ready at once in the normal case. While the first connection is being made, waits for it (at most
   * `connectTimeoutMs`, one shared wait for all requests); while reconnecting after a loss, fails at
   * once instead of piling up requests.
   */
  #connected(): Promise<void> | void {
    const client = this.#client;
    switch (client.status) {
      case 'ready':
        return;
      case 'wait':
        client.connect().catch(() => undefined);
        break;
      case 'connecting':
      case 'connect':
        break;
      default:
        throw new StorageUnavailableError(`Redis is unavailable (${client.status})`);
    }
    this.#connecting ??= new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        clearTimeout(timer);
        client.off('ready', onReady);
        client.off('error', done);
        client.off('close', onClose);
        this.#connecting = undefined;
        if (error) reject(new StorageUnavailableError('Redis is unavailable', { cause: error }));
        else resolve();
      };
      const onReady = () => done();
      const onClose = () => done(new Error('connection closed'));
      const timer = setTimeout(() => done(new Error(`no connection within ${this.#connectTimeoutMs} ms`)), this.#connectTimeoutMs);
      client.once('ready', onReady);
      client.once('error', done);
      client.once('close', onClose);
    });
    return this.#connecting;
  }
}

/** Redis wants a whole number of milliseconds, at least 1. */
function toTtl(ttlMs: number): number {
  return Math.max(1, Math.ceil(ttlMs));
}
export { RedisEventBus, type RedisEventBusOptions } from './redis-events.js';
