/**
 * The event bus of instances sharing Redis (PROTOCOL.md 8): PUBLISH on one channel, and a second
 * connection per instance that SUBSCRIBEs. Redis delivers a channel's messages in the order it took
 * them, and one connection sends this instance's in order, so each object's writes keep their order.
 */
import { Cluster, Redis, type ClusterNode } from 'ioredis';
import { decodeMessage, encodeMessage, type BusMessage, type EventBus, type GapMessage } from '../src/index.js';

export interface RedisEventBusOptions {
  /** `redis://` or `rediss://` URL. Default `redis://127.0.0.1:6379`. */
  url?: string;
  /**
   * The nodes of a Redis Cluster, instead of `url` (any of them; the rest are discovered). The bus
   * then uses sharded pub/sub (SPUBLISH, SSUBSCRIBE, Redis 7): the channel's messages are taken by
   * the master of its slot, in turn, and handed on from there (see `PUBLISH_ON_MASTER`), so the order
   * holds as on a single server.
   */
  nodes?: ClusterNode[];
  /** The channel. Default `odbrest:events`; every instance of one service uses the same. */
  channel?: string;
  /** Called with connection errors (both connections reconnect by themselves). */
  onConnectionError?: (error: Error) => void;
}

/** The stamp `publish` puts at the end of each payload. */
const STAMP = /,"~bus":"([0-9a-f-]{36}:\d+)"\}$/;
/** How many stamps are remembered. */
const HEARD = 10_000;

/**
 * SPUBLISH from a script that names the channel as its key, so that only the master of the
 * channel's slot runs it. A replica takes a plain SPUBLISH for its master's slot without a redirect
 * (it serves sharded pub/sub): it hands the message to its own subscribers at once, and to the
 * master's only through the cluster bus, a little later. A publisher whose client names a replica
 * for the slot (after a planned failover its map still names the old master, now a replica, which
 * never redirects it; while a master is down ioredis sends to a random node) therefore put its
 * messages behind those another instance published on the master meanwhile: an object's older
 * version came after its newer one, at every subscriber (test/redis-cluster-failover.test.ts). A
 * replica answers a script MOVED (without READONLY), so the client publishes on the master. While
 * the slot's master is down a replica also took a plain SPUBLISH as if delivered and the message
 * went nowhere; now the publish waits for the new master or fails, and a failed publish tells this
 * instance's streams `reset` (events/hub.ts).
 */
const PUBLISH_ON_MASTER = "return redis.call('SPUBLISH', KEYS[1], ARGV[1])";

/** The publishing cluster client, with the script above as a command. */
type ShardPublisher = Cluster & { publishOnMaster(channel: string, payload: string): Promise<number> };

export class RedisEventBus implements EventBus {
  readonly #publisher: Redis | Cluster;
  readonly #subscriber: Redis | Cluster;
  readonly #channel: string;
  /** On a cluster: sharded pub/sub. */
  readonly #sharded: boolean;
  readonly #listeners = new Set<(message: BusMessage | GapMessage) => void>();
  /** This bus's id and count of messages sent, stamped on each (`#heardBefore`). */
  readonly #id = globalThis.crypto.randomUUID();
  #sent = 0;
  /** The stamps of the last `HEARD` messages heard, oldest first. */
  readonly #heard = new Set<string>();
  /** Settles once the subscribing connection is subscribed (messages published before may be missed). */
  readonly ready: Promise<void>;

  constructor(options: RedisEventBusOptions = {}) {
    const url = options.url ?? 'redis://127.0.0.1:6379';
    this.#channel = options.channel ?? 'odbrest:events';
    const report = (error: Error) => options.onConnectionError?.(error);
    const retryStrategy = (attempt: number) => Math.min(50 * attempt, 1000);
    if (options.nodes) {
      this.#publisher = new Cluster(options.nodes, { clusterRetryStrategy: retryStrategy, redisOptions: { maxRetriesPerRequest: 1 } });
      this.#publisher.defineCommand('publishOnMaster', { numberOfKeys: 1, lua: PUBLISH_ON_MASTER });
      this.#subscriber = new Cluster(options.nodes, { clusterRetryStrategy: retryStrategy, shardedSubscribers: true });
    } else {
      this.#publisher = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy });
      this.#subscriber = new Redis(url, { retryStrategy });
    }
    this.#publisher.on('error', report);
    this.#subscriber.on('error', report);
    this.#sharded = options.nodes !== undefined;
    this.#subscriber.on(this.#sharded ? 'smessage' : 'message', (channel: string, payload: string) => {
      if (channel !== this.#channel || this.#heardBefore(payload)) return;
      const message = decodeMessage(payload);
      if (message) for (const listener of this.#listeners) listener(message);
    });
    this.ready = (this.#sharded ? this.#subscriber.ssubscribe(this.#channel) : this.#subscriber.subscribe(this.#channel)).then(() => undefined);
    // ioredis subscribes again after a lost connection; what was published meanwhile never came
    let connected = false;
    this.#subscriber.on('ready', () => {
      if (connected) this.#gap();
      connected = true;
    });
    // On a cluster, the channel's master may fail while the cluster client stays ready: ioredis drops
    // that sharded subscriber ('-subscriber') and, once it knows the slot's new master, subscribes
    // there ('subscribersReady'). Messages published in between are lost: a gap, told once the
    // subscription is confirmed (a repeated SSUBSCRIBE answers once it took effect). While the
    // master is down ioredis drops and makes its subscriber again many times a second, each time
    // ready again: one confirmation at a time, and one gap for all the losses it covers (one
    // SSUBSCRIBE per 'subscribersReady' told as many gaps, dozens per failover, each a `reset`).
    if (this.#sharded) {
      const cluster = this.#subscriber as Cluster;
      let losses = 0;
      let confirming = false;
      const confirm = () => {
        if (losses === 0 || confirming) return;
        confirming = true;
        const covered = losses;
        cluster.ssubscribe(this.#channel).then(
          () => {
            confirming = false;
            if (losses !== covered) return confirm(); // dropped again meanwhile: confirm again
            losses = 0;
            this.#gap();
          },
          () => void (confirming = false), // still failing over: the next 'subscribersReady' tries again
        );
      };
      cluster.on('-subscriber', () => void losses++);
      cluster.on('subscribersReady', confirm);
    }
  }

  #gap(): void {
    for (const listener of this.#listeners) listener({ kind: 'gap' });
  }

  /**
   * Whether this payload's stamp was heard already. After a failover of the channel's master a
   * cluster subscriber can end up subscribed twice in the shard (on the new master, and on the old one
   * come back as its replica, which relays the shard's messages too): every message then came twice,
   * the second copy late, so an object's older version followed its newer one (the failover soak saw
   * `v=45` after `v=46` on one stream). Each message is stamped by its bus (an id and a count) and
   * passed on once; unstamped payloads (an older instance's) pass as they are.
   */
  #heardBefore(payload: string): boolean {
    const stamp = STAMP.exec(payload)?.[1];
    if (stamp === undefined) return false;
    if (this.#heard.has(stamp)) return true;
    this.#heard.add(stamp);
    // the oldest forgotten: a duplicate comes within moments, not thousands of messages later
    if (this.#heard.size > HEARD) this.#heard.delete(this.#heard.values().next().value!);
    return false;
  }

  async publish(message: BusMessage): Promise<void> {
    // the stamp last, where decodeMessage ignores it (an older instance reads the message as before)
    const payload = `${encodeMessage(message).slice(0, -1)},"~bus":"${this.#id}:${++this.#sent}"}`;
    await (this.#sharded ? (this.#publisher as ShardPublisher).publishOnMaster(this.#channel, payload) : this.#publisher.publish(this.#channel, payload));
  }

  subscribe(listener: (message: BusMessage | GapMessage) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#subscriber.disconnect();
    await this.#publisher.quit().catch(() => undefined);
  }
}
