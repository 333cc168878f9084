// `npm run soak`: two odbrest instances (examples/cluster/server.mjs) on a PostgreSQL and a Redis of
// this script's own, under a mixed load of every login kind for SOAK_MINUTES, while PostgreSQL and
// Redis are restarted, an instance is killed with SIGKILL, the listening connections are ended from
// the server side and the blob folder's disk fills up (with --failover: the object storage the file
// bytes are in goes away and comes back). The load keeps a history of every
// acknowledged operation; afterwards it is checked (nothing lost, nothing stale, nothing duplicated,
// no events missed, only 503 with Retry-After during an outage, every fault recovered within the
// bound, memory and handles flat) and a table printed. Exit code 1 on any violation.
// See docs/operations.md, "Soak under faults".
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'odbrest/client';
import { buildIfStale } from './build-if-stale.mjs';
import { History } from './soak/history.mjs';
import { CLASS, Requests, Subscriber, TwoFactor, TwoFactorWorker, Worker } from './soak/load.mjs';
import { BlobDisk, freePort, Instance, PostgresServer, RedisServer, removeFolder, sleep } from './soak/servers.mjs';
import { RedisClusterServers, ReplicatedPostgres } from './soak/failover.mjs';
import { ObjectStorage } from './soak/object-storage.mjs';

const env = process.env;
const MINUTES = Number(env.SOAK_MINUTES ?? 5);
const WORKERS = Number(env.SOAK_WORKERS ?? 6);
/** Fault rounds (each injects every kind once); default: as many as fit, at least one. */
const ROUNDS = Number(env.SOAK_FAULT_ROUNDS ?? Math.max(1, Math.floor((MINUTES * 60 - 40) / 100)));
/** A fault must be recovered from (every instance answering, the faulty part working) within this. */
const RECOVERY_BOUND_MS = Number(env.SOAK_RECOVERY_BOUND_MS ?? 15_000);
/** Largest growth of an instance's resident memory per minute over the run's second half, and of its open handles. */
const RSS_SLOPE_BOUND = Number(env.SOAK_RSS_SLOPE_MIB ?? 4);
const HANDLES_BOUND = Number(env.SOAK_HANDLES_BOUND ?? 25);
const VERBOSE = env.SOAK_VERBOSE === '1';
/**
 * `--failover`: a primary and a synchronous replica behind an endpoint, and a Redis Cluster of three
 * masters with a replica each (scripts/soak/failover.mjs); the Redis restart becomes a master killed
 * and started again, and the primary's failover is one fault more. The file bytes are in S3 storage
 * (scripts/soak/object-storage.mjs), and the full blob disk becomes the object storage unavailable.
 */
const FAILOVER = process.argv.includes('--failover');
/** No request may wait longer than this for its answer. */
const HUNG_MS = 30_000;
const CONFIG = `# written by scripts/soak.mjs for its two instances
requestLog: false
access:
  ${CLASS}: { read: ['*'], create: ['*'], update: ['*'], delete: ['*'] }
  Customer: { read: ['*'], create: [sales], update: [sales], delete: [admins] }
  Document: { read: ['*'], create: ['*'], update: [admins], delete: [admins] }
twoFactor:
  policies: { hr: optional }
loginLimit: { perUser: 1000, perAddress: 100000 }
# events kept for Last-Event-ID: a minute (default five), so that the instances' memory is steady
# from the run's second half on (each kept event holds the object before and after)
events: { retainMinutes: 1 }
`;
/**
 * The backends that LISTEN (the object caches' and the event buses' connections, stores/pg-cache.ts
 * ChangeFeed): their last query is the LISTEN, or the round trip each sends every 5 s and for reads
 * that wait for the feed (its FEED_SQL, which names its column `feed_position`; the pools'
 * connections read the WAL position after a write without that name, and are left alone).
 */
const LISTENING = `backend_type = 'client backend' AND state = 'idle' AND (query ILIKE 'LISTEN %' OR query LIKE '%AS feed_position%')`;
const ALL_FAULT_KINDS = FAILOVER ? ['postgres', 'pg-failover', 'redis-failover', 'kill', 'listen', 's3'] : ['postgres', 'redis', 'kill', 'listen', 'disk'];
/** `SOAK_FAULTS=kill,redis-failover`: only these kinds, in this order (to chase one fault's bug); default all. */
const FAULT_KINDS = env.SOAK_FAULTS ? env.SOAK_FAULTS.split(',').map((kind) => kind.trim()) : ALL_FAULT_KINDS;
const FAULT_NAMES = { postgres: 'PostgreSQL restarted', redis: 'Redis restarted', kill: 'instance SIGKILLed', listen: 'LISTEN connections ended', disk: 'blob disk full' };
FAULT_NAMES['pg-failover'] = 'PostgreSQL failed over';
FAULT_NAMES['redis-failover'] = 'Redis master failed over';
FAULT_NAMES.s3 = 'object storage unavailable';
/** The event channel of examples/cluster (its slot's master is the one killed). */
const EVENT_CHANNEL = 'odbrest-demo:events';

if (!(MINUTES > 0) || !(WORKERS >= 2) || !(ROUNDS >= 1)) {
  console.error('SOAK_MINUTES must be above 0, SOAK_WORKERS 2 or more, SOAK_FAULT_ROUNDS 1 or more');
  process.exit(2);
}
if (FAULT_KINDS.length === 0 || FAULT_KINDS.some((kind) => !ALL_FAULT_KINDS.includes(kind))) {
  console.error(`SOAK_FAULTS must list some of ${ALL_FAULT_KINDS.join(', ')}${FAILOVER ? '' : ' (the others come with --failover)'}`);
  process.exit(2);
}
const say = (line) => console.log(`[soak +${((Date.now() - faults.start) / 1000).toFixed(1).padStart(6)} s] ${line}`);

/** The faults injected: when each began, was repaired and was recovered from. */
const faults = {
  start: Date.now(),
  list: [],
  /** Whether a fault (of `kind`, or any) was under way between `t0` and `t1`, its recovery and a grace second included. */
  overlapped(kind, t0, t1) {
    return this.list.some((fault) => (!kind || fault.kind === kind) && fault.t0 - 100 <= t1 && (fault.t2 ?? fault.t1 ?? Infinity) + 1000 >= t0);
  },
};

buildIfStale({ say });
faults.start = Date.now(); // the run's times count from here, not from before a build
const root = mkdtempSync(join(tmpdir(), 'odbrest-soak-'));
const postgres = FAILOVER ? new ReplicatedPostgres(root, [await freePort(), await freePort()]) : new PostgresServer(root, await freePort());
const redis = FAILOVER ? new RedisClusterServers(root) : new RedisServer(await freePort());
// the file bytes: a small disk of their own, or (failover) S3 storage
const disk = FAILOVER ? undefined : new BlobDisk(root);
const storage = FAILOVER ? new ObjectStorage(root, await freePort()) : undefined;
const blobsWhere = FAILOVER ? storage.why : `blob folder on ${disk.why}`;
const instances = [];
let exitCode = 1;
const soak = {
  requests: new Requests(),
  history: new History(faults),
  faults,
  stopping: false,
  pauseMs: Number(env.SOAK_PAUSE_MS ?? 5),
  cluster: {
    /** The instances to try, in order: a random one first (a load balancer's choice), the other after. */
    order: () => (Math.random() < 0.5 ? [instances[0], instances[1]] : [instances[1], instances[0]]),
  },
};
soak.stopped = new Promise((resolve) => (soak.stop = resolve));
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`soak: ${signal}, stopping what it started`);
    void cleanUp().then(() => process.exit(130));
  });
}

try {
  say(`PostgreSQL on ${postgres.port}, Redis on ${redis.port}, ${blobsWhere}`);
  postgres.init();
  await postgres.start();
  await redis.start();
  await storage?.start();
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
  writeFileSync(join(root, 'server-key.pem'), privateKey, { mode: 0o600 });
  soak.serverKey = publicKey;
  writeFileSync(join(root, 'api-config.yml'), CONFIG + (storage?.config ?? ''));
  const instanceEnv = {
    DATABASE_URL: postgres.url,
    ...(FAILOVER ? { REDIS_CLUSTER_NODES: redis.nodesEnv } : { REDIS_URL: redis.url }),
    ODBREST_JWT_SECRET: `soak-${Math.random().toString(36).slice(2)}-shared-by-both-instances`,
    ODBREST_SERVER_KEY_FILE: join(root, 'server-key.pem'),
    ODBREST_CONFIG: join(root, 'api-config.yml'),
    ...(FAILOVER ? storage.env : { ODBREST_BLOBS: `file:${disk.path}` }),
    ODBREST_2FA_KEY: 'soak two-factor key, 32 characters or more',
  };
  const script = new URL('../examples/cluster/server.mjs', import.meta.url).pathname;
  for (const name of ['A', 'B']) instances.push(new Instance(name, script, await freePort(), instanceEnv));
  await instances[0].start(); // the first seeds the demo database
  await instances[1].start();
  say(`instances A (${instances[0].url}) and B (${instances[1].url}) listening`);

  // the load: writers of every login kind, one that logs in with a second factor, two subscribers
  const kinds = ['password', 'token', 'secure', 'hybrid', 'password', 'token'];
  const users = [['alice', 'alice-secret'], ['bob', 'bob-secret'], ['extern', 'extern-secret']];
  const workers = Array.from({ length: WORKERS }, (_, i) => {
    const [user, password] = users[i % users.length];
    return new Worker(soak, `w${i + 1}`, { user, password, appNames: ['crm'], kind: kinds[i % kinds.length] });
  });
  soak.workerNames = workers.map((worker) => worker.name);
  soak.prober = new Worker(soak, 'prober', { user: 'extern', password: 'extern-secret', appNames: ['crm'], kind: 'password' });
  soak.twoFactor = new TwoFactor();
  const twoFactorUser = new TwoFactorWorker(soak, '2fa', { user: 'bob', password: 'bob-secret', appNames: ['crm', 'hr'], kind: 'two-factor' });
  const enrolling = new Worker(soak, 'enrol', { user: 'bob', password: 'bob-secret', appNames: ['crm'], kind: 'password' });
  await enrolling.login();
  await soak.twoFactor.enrol(enrolling, 'hr');
  const subscribers = [
    new Subscriber(soak, 'sub-all', { user: 'alice', password: 'alice-secret', appNames: ['crm'], kind: 'token' }, [{ className: CLASS }], () => true),
    new Subscriber(soak, 'sub-w1', { user: 'bob', password: 'bob-secret', appNames: ['crm'], kind: 'secure' }, [{ className: CLASS, query: 'Owner = "w1"' }], (entry) => entry.owner === 'w1'),
  ];
  const samples = { A: [], B: [] };
  const sampler = setInterval(() => {
    for (const instance of instances) {
      const sample = instance.sample();
      if (sample) samples[instance.name].push({ t: Date.now(), ...sample });
    }
  }, 1000);

  const running = [...subscribers.map((subscriber) => subscriber.run()), ...workers.map((worker) => worker.run()), twoFactorUser.run()];
  const loadStart = Date.now();
  const loadEnd = loadStart + MINUTES * 60_000;
  say(`load running: ${WORKERS} workers (${kinds.slice(0, WORKERS).join(', ')}), a two-factor login, 2 subscribers; ${ROUNDS} round(s) of ${FAULT_KINDS.length} faults`);

  // the faults, evenly over the run after a warm-up, the last one done before the final quarter-minute
  const warmUp = Math.min(20_000, MINUTES * 60_000 * 0.15);
  const slot = (MINUTES * 60_000 - warmUp - Math.min(30_000, MINUTES * 60_000 * 0.15)) / (ROUNDS * FAULT_KINDS.length);
  await sleep(warmUp);
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of FAULT_KINDS) {
      const slotEnd = Date.now() + slot;
      if (kind === 'disk' && !disk.mounted) continue;
      await inject(kind, round);
      await sleep(Math.max(0, slotEnd - Date.now()));
    }
  }
  await sleep(Math.max(0, loadEnd - Date.now()));

  // stop the load, let the last events arrive, then read the end state through a fresh session
  soak.stopping = true;
  const until = Date.now();
  say('load stopped; waiting for the last events');
  await sleep(3000);
  soak.stop();
  await Promise.all(running);
  clearInterval(sampler);
  const end = await readEnd();
  soak.history.checkEnd(end);
  const expectedEvents = subscribers.map((subscriber) => soak.history.checkEvents(subscriber, until));
  exitCode = report({ subscribers, samples, expectedEvents, loadStart });
} catch (error) {
  console.error('soak failed to run:', error);
  exitCode = 1;
} finally {
  await cleanUp();
}
process.exit(exitCode);

/** Stops everything this script started and removes its folder (once, also on Ctrl-C or SIGTERM). */
async function cleanUp() {
  if (soak.cleaning) return soak.cleaning;
  soak.cleaning = (async () => {
    soak.stopping = true;
    soak.stop?.();
    for (const instance of instances) await instance.stop().catch(() => undefined);
    if (VERBOSE) for (const instance of instances) console.log(`\n--- instance ${instance.name}: last output\n${instance.proc?.output ?? ''}`);
    await redis.stop().catch(() => undefined);
    await postgres.stop('fast').catch(() => undefined);
    if (FAILOVER) await postgres.stopAll().catch(() => undefined);
    await storage?.stop().catch(() => undefined);
    disk?.remove();
    removeFolder(root);
  })();
  return soak.cleaning;
}

/** Injects one fault, repairs it, and measures how long until everything works again. */
async function inject(kind, round) {
  const fault = { kind, t0: Date.now(), t1: undefined, t2: undefined };
  faults.list.push(fault);
  if (VERBOSE) say(`${FAULT_NAMES[kind]}: injecting`);
  let listeners = 0;
  let outage;
  if (kind === 'postgres') {
    await postgres.stop(round % 2 === 0 ? 'immediate' : 'fast');
    await sleep(1500);
    fault.t1 = Date.now();
    await postgres.start();
  } else if (kind === 'redis') {
    await redis.stop();
    await sleep(1500);
    fault.t1 = Date.now();
    await redis.start();
  } else if (kind === 'kill') {
    await instances[1].kill();
    await sleep(1000);
    fault.t1 = Date.now();
    await instances[1].start();
  } else if (kind === 'listen') {
    // a connection between two queries, or still connecting after an earlier fault, is tried again
    for (let tries = 0; listeners === 0 && tries < 50; tries++) {
      listeners = await endListening();
      if (listeners === 0) await sleep(100);
    }
    fault.t1 = Date.now();
    // a fault that ended nothing tested nothing: it counts against the run
    if (listeners === 0) fault.notInjected = 'no listening connection found to end';
  } else if (kind === 'pg-failover') {
    await postgres.failover();
    fault.t1 = Date.now();
  } else if (kind === 'redis-failover') {
    await redis.failover(EVENT_CHANNEL);
    fault.t1 = Date.now();
  } else if (kind === 'disk') {
    disk.fill();
    await sleep(2000);
    fault.t1 = Date.now();
    disk.free();
  } else if (kind === 's3') {
    outage = await storage.cut({ instance: instances[0], history: soak.history });
    await sleep(1500);
    fault.t1 = Date.now();
    await storage.start();
  }
  const recovered = await recovery(kind, listeners, fault.t1 + RECOVERY_BOUND_MS * 2);
  fault.t2 = recovered ? Date.now() : undefined;
  fault.recoveryMs = recovered ? fault.t2 - fault.t1 : undefined;
  // the outage's checks, once recovered: nothing half-written visible, nothing acknowledged lost
  const checked = outage ? `; the cut upload answered ${outage.refused.status} (Retry-After ${outage.refused.retryAfter}), ${await storage.check(outage)} files acknowledged before read back` : '';
  say(`${FAULT_NAMES[kind]}: ${fault.notInjected ? `NOT INJECTED (${fault.notInjected}); ` : ''}${recovered ? `recovered ${(fault.recoveryMs / 1000).toFixed(1)} s after the repair` : 'NOT recovered'}${kind === 'listen' ? ` (${listeners} listening connections ended)` : ''}${checked}`);
  // the topology made whole again for the next fault (inside this fault's window): a new synchronous
  // replica from the new primary, the killed Redis master back (as a replica)
  if (kind === 'pg-failover') await postgres.rebuildStandby();
  if (kind === 'redis-failover') await redis.start();
  if (VERBOSE && FAILOVER) say(`${FAULT_NAMES[kind]}: topology whole again`);
}

/** Ends the backends that LISTEN (see LISTENING); answers how many it ended. */
async function endListening() {
  const rows = await postgres.query(`SELECT count(*) AS n FROM (SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE ${LISTENING}) t WHERE ended`).catch(() => [{ n: 0 }]);
  return Number(rows[0]?.n ?? 0);
}

/** The backends that LISTEN (see LISTENING). */
async function listening() {
  return postgres.query(`SELECT pid FROM pg_stat_activity WHERE ${LISTENING}`).catch(() => []);
}

/** Polls until both instances answer `_CheckService` and the faulty part works again; false at `deadline`. */
async function recovery(kind, listeners, deadline) {
  const probe = createClient({ baseUrl: 'http://odbrest.soak', appKey: 'soak', fetch: soak.requests.fetchFor({ order: () => instances }) });
  while (Date.now() < deadline) {
    const checks = await Promise.all(
      instances.map((instance) => fetch(`${instance.url}/_CheckService`).then((answer) => answer.status === 200, () => false)),
    );
    let ok = checks.every(Boolean);
    if (ok && kind === 'listen') ok = (await listening()).length >= listeners;
    if (ok && (kind === 'disk' || kind === 's3')) {
      ok = await probe
        .login({ user: 'alice', password: 'alice-secret', appNames: ['crm'] })
        .then(() => probe.uploadFile(new Uint8Array(64), { name: 'probe.bin' }))
        .then((file) => probe.deleteObject(file['~ObjectID']), () => false)
        .then((result) => result !== false, () => false);
    }
    if (ok) return true;
    await sleep(100);
  }
  return false;
}

/** The end state: every SoakItem, every user's recycle bin, every uploaded file's bytes. */
async function readEnd() {
  const order = () => instances;
  const reader = createClient({ baseUrl: 'http://odbrest.soak', appKey: 'soak', fetch: soak.requests.fetchFor({ order }) });
  await reader.login({ user: 'alice', password: 'alice-secret', appNames: ['crm'] });
  const live = new Map();
  for (let page = 0; ; page++) {
    const set = await reader.listObjects(CLASS, { perPage: 1000, page });
    for (const object of set['~Elements']) live.set(object['~ObjectID'], object);
    if (set['~Elements'].length < 1000) break;
  }
  const binned = new Set();
  for (const [user, password] of [['alice', 'alice-secret'], ['bob', 'bob-secret'], ['extern', 'extern-secret']]) {
    const client = createClient({ baseUrl: 'http://odbrest.soak', appKey: 'soak', fetch: soak.requests.fetchFor({ order }) });
    await client.login({ user, password, appNames: ['crm'] });
    for (const object of (await client.recycleBin())['~Elements']) binned.add(object['~ObjectID']);
  }
  const files = new Map();
  for (const file of soak.history.files) {
    try {
      const answer = await reader.downloadFile(file.id);
      files.set(file.id, createHash('sha256').update(Buffer.from(await new Response(answer.stream).arrayBuffer())).digest('hex'));
    } catch {
      // missing: reported as lost
    }
  }
  return { live, binned, files };
}

/** Least-squares slope of `y` over `t` (per minute). */
function slopePerMinute(points) {
  if (points.length < 3) return 0;
  const n = points.length;
  const mt = points.reduce((sum, p) => sum + p.t, 0) / n;
  const my = points.reduce((sum, p) => sum + p.y, 0) / n;
  const num = points.reduce((sum, p) => sum + (p.t - mt) * (p.y - my), 0);
  const den = points.reduce((sum, p) => sum + (p.t - mt) ** 2, 0);
  return den === 0 ? 0 : (num / den) * 60_000;
}

function median(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
}

/** Prints the table; answers the exit code. */
function report({ subscribers, samples, expectedEvents, loadStart }) {
  const history = soak.history;
  const found = history.found;
  const outage = (t0, t1, kind) => faults.overlapped(kind, t0, t1);
  // requests: 5xx other than 503, 503 without Retry-After, 503s and unanswered requests outside an outage
  const requests = soak.requests.list;
  const fiveHundreds = requests.filter((r) => r.status >= 500 && r.status !== 503);
  const bare503 = requests.filter((r) => r.status === 503 && !r.retryAfter);
  const outside503 = requests.filter((r) => r.status === 503 && !outage(r.t0, r.t1));
  const outsideNet = requests.filter((r) => r.error && !r.kind.startsWith('event') && !outage(r.t0, r.t1, 'kill') && r.t0 < loadStart + MINUTES * 60_000);
  const sessionsLost = history.failures.filter((f) => f.outcome === 'session' && !faults.list.some((fault) => fault.kind === 'redis' && fault.t0 <= f.t1));
  const otherErrors = history.failures.filter((f) => !['unavailable', 'network', 'session', 'conflict', 'locked', 'missing'].includes(f.outcome));
  const unrecovered = faults.list.filter((fault) => fault.recoveryMs === undefined || fault.recoveryMs > RECOVERY_BOUND_MS);
  const notInjected = faults.list.filter((fault) => fault.notInjected);
  // answered after more than HUNG_MS, or never (still waiting when the run ended)
  const hung = requests.filter((r) => (r.t1 || Date.now()) - r.t0 > HUNG_MS);

  const lines = [];
  const row = (cells, widths) => lines.push(cells.map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join('  '));
  lines.push('', `odbrest soak: ${MINUTES} min, instances A and B (examples/cluster), PostgreSQL 15 and Redis of its own, ${blobsWhere}`);
  if (FAILOVER) lines.push('failover topology: a PostgreSQL primary and a synchronous replica behind an endpoint, a Redis Cluster of 3 masters with a replica each');
  lines.push('', 'operations by kind');
  const opWidths = [22, 7, 7, 6, 6, 8, 6];
  row(['kind', 'total', 'ok', '503', 'net', 'session', 'refused'], opWidths);
  for (const [kind, ops] of [...history.ops].sort(([a], [b]) => a.localeCompare(b))) row([kind, ops.total, ops.ok, ops.unavailable, ops.network, ops.session, ops.other], opWidths);
  const byStatus = new Map();
  for (const r of requests) byStatus.set(r.error ? 'no answer' : r.status, (byStatus.get(r.error ? 'no answer' : r.status) ?? 0) + 1);
  lines.push(`requests: ${requests.length} (${[...byStatus].sort().map(([status, count]) => `${status}: ${count}`).join(', ')})`);
  lines.push('', `faults (fault to repair: the outage or the platform's failover; recovery bound ${RECOVERY_BOUND_MS / 1000} s, measured from the repair)`);
  const faultWidths = [26, 9, 18, 18];
  const seconds = (list, ms) => list.map((fault) => (ms(fault) === undefined ? 'never' : (ms(fault) / 1000).toFixed(1))).join(', ') || '-';
  row(['fault', 'injected', 'to repair (s)', 'recovery (s)'], faultWidths);
  for (const kind of FAULT_KINDS) {
    const list = faults.list.filter((fault) => fault.kind === kind && !fault.notInjected);
    row([FAULT_NAMES[kind], list.length, seconds(list, (fault) => fault.t1 - fault.t0), seconds(list, (fault) => fault.recoveryMs)], faultWidths);
  }
  lines.push('', 'checks');
  const events = subscribers.map((subscriber, i) => `${subscriber.name}: ${subscriber.events.length} events, ${subscriber.resets.length} resets, ${expectedEvents[i]} changes expected`).join('; ');
  const checks = [
    ['lost', found.lost.length, 'acknowledged writes or files missing or older at the end'],
    ['stale', found.stale.length, 'reads older than the session wrote or read before'],
    ['duplicated', found.duplicated.length, 'ids given twice, creates applied twice'],
    ['phantom', found.phantom.length, 'values or objects no one wrote'],
    ['events missed', found.events.length, events],
    ['events out of order', found.order.length, 'per object, per subscriber'],
    ['5xx', fiveHundreds.length, 'answers 500-599 other than 503'],
    ['503 without Retry-After', bare503.length, ''],
    ['503 outside an outage', outside503.length, `${requests.filter((r) => r.status === 503).length} answered 503 in all`],
    ['unanswered outside a kill', outsideNet.length, 'requests with no answer while both instances ran'],
    ['sessions lost', sessionsLost.length, 'a 201 with no Redis restart since the login'],
    ['other errors', otherErrors.length, 'answers the load did not expect'],
    ['faults not recovered', unrecovered.length, `within ${RECOVERY_BOUND_MS / 1000} s`],
    ['faults not injected', notInjected.length, 'a fault that found nothing to break (no listening connection)'],
    ['hung', hung.length, `requests answered after more than ${HUNG_MS / 1000} s, or never`],
    ['other violations', found.other.length, FAILOVER ? 'locks, the upload the storage outage cut' : 'locks'],
  ];
  for (const [name, count, note] of checks) lines.push(`${name.padEnd(26)} ${String(count).padStart(5)}   ${note}`);

  lines.push('', 'instances (second half of the run for the slopes)');
  const memWidths = [10, 14, 12, 14, 16, 10];
  row(['instance', 'RSS start MiB', 'RSS end MiB', 'RSS MiB/min', 'handles start', 'handles end'], memWidths);
  let memoryViolations = 0;
  for (const name of ['A', 'B']) {
    // the longest stretch of one process (B is killed and started again)
    const byPid = new Map();
    for (const sample of samples[name]) (byPid.get(sample.pid) ?? byPid.set(sample.pid, []).get(sample.pid)).push(sample);
    const longest = [...byPid.values()].sort((a, b) => b.length - a.length)[0] ?? [];
    const half = longest.slice(Math.floor(longest.length / 2));
    const slope = slopePerMinute(half.map((s) => ({ t: s.t, y: s.rss })));
    const third = Math.max(1, Math.floor(half.length / 3));
    const handlesStart = median(half.slice(0, third).map((s) => s.fds));
    const handlesEnd = median(half.slice(-third).map((s) => s.fds));
    const spanMin = half.length > 1 ? (half.at(-1).t - half[0].t) / 60_000 : 0;
    const judged = spanMin >= 1.5; // a slope over less than a minute and a half is noise
    if (judged && (slope > RSS_SLOPE_BOUND || handlesEnd - handlesStart > HANDLES_BOUND)) memoryViolations++;
    row([`${name}${byPid.size > 1 ? ` (${byPid.size} runs)` : ''}`, (longest[0]?.rss ?? 0).toFixed(1), (longest.at(-1)?.rss ?? 0).toFixed(1), `${slope.toFixed(2)}${judged ? '' : ' (n/a)'}`, handlesStart, handlesEnd], memWidths);
  }
  lines.push(`memory growth              ${String(memoryViolations).padStart(5)}   instances over ${RSS_SLOPE_BOUND} MiB/min or ${HANDLES_BOUND} more handles (judged over 1.5 min or more)`);

  const total =
    found.lost.length + found.stale.length + found.duplicated.length + found.phantom.length + found.events.length + found.order.length +
    fiveHundreds.length + bare503.length + outside503.length + outsideNet.length + sessionsLost.length + otherErrors.length + unrecovered.length + notInjected.length + found.other.length + memoryViolations +
    hung.length;
  lines.push('', `violations: ${total}`);
  console.log(lines.join('\n'));
  const details = [
    ...Object.entries(found).flatMap(([name, list]) => list.map((line) => `${name}: ${line}`)),
    ...fiveHundreds.map((r) => `5xx: ${r.status} ${r.method} ${r.path} on ${r.instance}`),
    ...bare503.map((r) => `503 without Retry-After: ${r.method} ${r.path}`),
    ...outside503.map((r) => `503 outside an outage: ${r.method} ${r.path} on ${r.instance} at +${((r.t0 - faults.start) / 1000).toFixed(1)} s`),
    ...outsideNet.map((r) => `no answer outside a kill: ${r.method} ${r.path} on ${r.instance} (${r.error}) at +${((r.t0 - faults.start) / 1000).toFixed(1)} s`),
    ...sessionsLost.map((f) => `session lost: ${f.kind} ${f.message}`),
    ...otherErrors.map((f) => `other error: ${f.kind} ${f.outcome} ${f.message}`),
    ...notInjected.map((fault) => `fault not injected: ${FAULT_NAMES[fault.kind]} at +${((fault.t0 - faults.start) / 1000).toFixed(1)} s (${fault.notInjected})`),
    ...hung.map((r) => `hung: ${r.method} ${r.path} on ${r.instance} at +${((r.t0 - faults.start) / 1000).toFixed(1)} s, ${r.t1 ? `answered after ${((r.t1 - r.t0) / 1000).toFixed(1)} s` : 'never answered'}`),
  ];
  if (details.length > 0) {
    console.log(`\nfirst violations (of ${details.length}):`);
    for (const line of details.slice(0, VERBOSE ? details.length : 40)) console.log(`  ${line}`);
  }
  // for each stale read and phantom (the first five): its actor's last fifteen requests before it was found
  for (const line of [...found.stale, ...found.phantom].slice(0, 5)) {
    const [, id, actor] = /^(\S+): (\w+)/.exec(line) ?? [];
    const at = /\(at \+([\d.]+) s\)$/.exec(line)?.[1];
    const until = at === undefined ? Infinity : faults.start + Number(at) * 1000 + 100;
    const theirs = requests.filter((r) => r.actor === actor && r.t0 <= until).slice(-15);
    if (theirs.length === 0) continue; // found at the end, by no client
    console.log(`\n${actor}'s last requests before ${id}'s violation:`);
    for (const r of theirs) console.log(`  ${r.method} ${r.path} on ${r.instance} at +${((r.t0 - faults.start) / 1000).toFixed(3)}-${((r.t1 - faults.start) / 1000).toFixed(3)} s: ${r.error ?? r.status}`);
  }
  return total === 0 ? 0 : 1;
}
