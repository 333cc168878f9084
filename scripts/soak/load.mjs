// The soak's load: clients of every login kind sending reads, listings with query text, conditional
// writes, bulk writes, uploads and downloads, locks and the recycle bin through odbrest/client, and
// event subscribers. Every request passes through one fetch that picks an instance (as a load
// balancer would) and records what came back; every operation's outcome goes into the history
// (history.mjs), which is checked after the run.
import { createHash, randomBytes } from 'node:crypto';
import { TOTP } from 'otpauth';
import { createClient, OdbRestError } from 'odbrest/client';
import { sleep } from './servers.mjs';

export const CLASS = 'SoakItem';
const APP_KEY = 'soak';

/** The kind of a request, from its method and path (the table's rows). */
function requestKind(method, path) {
  if (path === '/v1/login') return 'login (password)';
  if (path === '/v2/login') return 'login (token)';
  if (path.startsWith('/v2/login/secure')) return 'login (secure)';
  if (path.startsWith('/v1/2fa')) return 'two-factor set-up';
  if (path === '/v1/events') return 'event stream';
  if (path.startsWith('/v1/uploadFile')) return 'upload';
  if (path.startsWith('/v1/file/')) return 'download';
  if (path.startsWith('/v1/lock/')) return 'lock';
  if (path.startsWith('/v1/recycleBin') || /^\/v1\/object\/[^/]+$/.test(path) && method === 'DELETE') return 'recycle bin';
  if (path.startsWith('/v1/objects/')) return method === 'PATCH' ? 'bulk write' : 'listing';
  if (path.startsWith('/v1/object/')) return method === 'GET' ? 'read' : method === 'POST' ? 'create' : 'write';
  return path.replace(/^\/(v\d\/)?/, '').split('/')[0] || 'other';
}

/**
 * The requests of the run: each with its kind, instance, times and outcome (HTTP status, or the
 * network error), and what the checks count from them.
 */
export class Requests {
  constructor() {
    this.list = [];
  }

  /**
   * A fetch for odbrest/client that sends each request to one instance, the other when the first
   * refuses connections; `actor` names the client in each request's record (the report lists the last
   * requests of the client that found a violation).
   */
  fetchFor(cluster, onAnswer, actor) {
    return async (input, init = {}) => {
      const url = new URL(typeof input === 'string' ? input : input.url);
      const method = init.method ?? 'GET';
      const kind = requestKind(method, url.pathname);
      const order = cluster.order();
      for (let attempt = 0; ; attempt++) {
        const instance = order[attempt];
        const entry = { kind, actor, method, path: url.pathname, instance: instance.name, t0: Date.now(), t1: 0, status: 0, retryAfter: null, error: undefined };
        this.list.push(entry);
        try {
          const response = await fetch(instance.url + url.pathname + url.search, init);
          entry.t1 = Date.now();
          entry.status = response.status;
          entry.retryAfter = response.headers.get('retry-after');
          onAnswer?.(entry);
          return response;
        } catch (error) {
          entry.t1 = Date.now();
          entry.error = error.cause?.code ?? error.code ?? error.name;
          // a refused connection never reached the instance: the other one may take it (never a body stream)
          if (entry.error === 'ECONNREFUSED' && attempt + 1 < order.length && !(init.body instanceof ReadableStream)) continue;
          throw error;
        }
      }
    };
  }
}

/** What went wrong with an operation, as the history needs it. */
function outcomeOf(error) {
  // OdbRestError, and the secure transport's unsigned refusals (201, 503 when the session is out of reach)
  if (error instanceof OdbRestError || typeof error?.internalStatus === 'string') {
    const code = error.internalStatus;
    if (code === '503') return 'unavailable';
    if (code === '201' || code === '204' || code === '205') return 'session';
    if (code === '409') return 'conflict';
    if (code === '423') return 'locked';
    if (code === '404') return 'missing';
    return `error ${code}`;
  }
  if (error?.name === 'OdbRestNetworkError') return 'network';
  return `error ${error?.name ?? 'unknown'}: ${String(error?.message ?? error).slice(0, 200)}`;
}

/** Outcomes after which a write may or may not have taken effect. */
const IN_DOUBT = new Set(['unavailable', 'network']);
const pick = (list) => list[Math.floor(Math.random() * list.length)];
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/** One logged-in client: its login kind, its current session's number, and its reads' floor per object. */
class Actor {
  constructor(soak, name, login) {
    this.soak = soak;
    this.name = name;
    this.loginSpec = login;
    this.session = 0;
    this.floor = new Map();
    this.client = createClient({ baseUrl: 'http://odbrest.soak', appKey: APP_KEY, fetch: soak.requests.fetchFor(soak.cluster, undefined, name), serverKey: soak.serverKey });
  }

  /** Runs one operation, counted by kind; answers `{ok, value}` or `{ok: false, outcome}`. */
  async op(kind, run) {
    const t0 = Date.now();
    try {
      const value = await run();
      this.soak.history.operation(kind, 'ok', t0, Date.now());
      return { ok: true, value };
    } catch (error) {
      const outcome = outcomeOf(error);
      this.soak.history.operation(kind, outcome, t0, Date.now(), `${this.name}: ${error?.message ?? error}`);
      if (outcome === 'session') this.loggedIn = false;
      return { ok: false, outcome, error };
    }
  }

  /** Logs in (again) until it works; a new session starts with no floor. */
  async login() {
    const { user, password, appNames, kind } = this.loginSpec;
    for (;;) {
      if (this.soak.stopping) return false;
      const credentials = { user, password, appNames };
      if (kind === 'two-factor') credentials.twoFactorToken = await this.soak.twoFactor.code(this.soak);
      const method = { password: 'login', token: 'loginToken', secure: 'loginSecure', hybrid: 'loginHybrid', 'two-factor': 'login' }[kind];
      const result = await this.op(`login (${kind})`, () => this.client[method](credentials));
      if (result.ok) {
        this.session++;
        this.floor = new Map();
        this.loggedIn = true;
        return true;
      }
      await sleep(result.error?.retryAfter ? result.error.retryAfter * 1000 : 200);
    }
  }

  /** Checks an object read in this session against the history and this session's floor. */
  observe(object, how) {
    const id = object['~ObjectID'];
    this.soak.history.observed(id, object, how, this);
    const v = object.v;
    if (typeof v !== 'number') return;
    const floor = this.floor.get(id) ?? -1;
    if (v < floor) this.soak.history.stale(id, `${this.name} session ${this.session} ${how}: v=${v} after it had ${floor}`);
    else this.floor.set(id, v);
  }

  raiseFloor(id, v) {
    if (v > (this.floor.get(id) ?? -1)) this.floor.set(id, v);
  }
}

/** A client that owns objects of its own and runs the mixed load on them and on the others'. */
export class Worker extends Actor {
  constructor(soak, name, login) {
    super(soak, name, login);
    this.items = [];
    this.writes = 0;
    this.bulks = 0;
    this.notes = 0;
  }

  async run() {
    await this.login();
    while (!this.soak.stopping) {
      if (!this.loggedIn && !(await this.login())) break;
      const live = this.items.filter((item) => item.state === 'live');
      const steps = [
        [live.length < 3 || (live.length < 6 && Math.random() < 0.3) ? 8 : 0, () => this.create()],
        [20, () => live.length && this.readOwn(pick(live))],
        [12, () => this.readOther()],
        [12, () => this.list()],
        [25, () => live.length && this.update(pick(live))],
        [4, () => live.length && this.bulk()],
        [4, () => this.upload()],
        [5, () => this.download()],
        [3, () => live.length && this.lock(pick(live))],
        [3, () => live.length > 1 && this.recycle(pick(live))],
      ];
      let roll = Math.random() * steps.reduce((sum, [weight]) => sum + weight, 0);
      const [, step] = steps.find(([weight]) => (roll -= weight) < 0) ?? steps[1];
      await step();
      await sleep(this.soak.pauseMs);
    }
  }

  async create() {
    const tag = `${this.name}-${randomBytes(6).toString('hex')}`;
    const fields = { Owner: this.name, Tag: tag, v: 0, Bulk: 0, Note: '' };
    this.soak.history.attemptCreate(tag, fields);
    const result = await this.op('create', () => this.client.createObject(CLASS, fields));
    if (result.ok) {
      const object = result.value;
      this.soak.history.created(tag, object, this.name);
      this.items.push({ id: object['~ObjectID'], tag, v: 0, storeTime: object['~StoreTime'], state: 'live', doubt: false });
      this.raiseFloor(object['~ObjectID'], 0);
    } else if (IN_DOUBT.has(result.outcome)) this.soak.history.createInDoubt(tag);
  }

  /** Reads an own object; after a write in doubt, takes what it finds as the object's state. */
  async readOwn(item) {
    const result = await this.op('read', () => this.client.getObject(item.id));
    if (result.ok) {
      this.observe(result.value, 'read');
      if (item.doubt) {
        item.v = Math.max(item.v, result.value.v);
        item.doubt = false;
      }
      item.storeTime = result.value['~StoreTime'];
    } else if (result.outcome === 'missing') {
      if (item.doubt) item.state = 'recycled?';
      else this.soak.history.lost(item.id, `${this.name}: its live object answered 404`);
    }
    return result;
  }

  async readOther() {
    const id = this.soak.history.randomObjectId();
    if (!id) return;
    const result = await this.op('read', () => this.client.getObject(id));
    if (result.ok) this.observe(result.value, 'read');
  }

  async list() {
    const owner = pick(this.soak.workerNames);
    const result = await this.op('listing', () =>
      this.client.listObjects(CLASS, { queryText: `query Owner = "${owner}" and (v >= 0 or Note like "probe*");`, perPage: 100 }),
    );
    if (!result.ok) return;
    for (const object of result.value['~Elements']) this.observe(object, 'listing');
  }

  async update(item) {
    if (item.doubt && !(await this.readOwn(item)).ok) return;
    const v = item.v + 1;
    this.soak.history.attempt(item.id, 'v', v);
    const result = await this.op('write', () => this.client.updateObject(item.id, { v }, { storeTime: item.storeTime }));
    if (result.ok) {
      item.v = v;
      item.storeTime = result.value['~StoreTime'];
      this.soak.history.acked(item.id, 'v', v);
      this.raiseFloor(item.id, v);
      this.observe(result.value, 'write answer');
    } else if (IN_DOUBT.has(result.outcome)) {
      this.soak.history.inDoubt(item.id, 'v', v);
      item.v = v; // the next write uses a value above it either way
      item.doubt = true;
    } else if (result.outcome === 'conflict') {
      // only a write in doubt or a lock probe that was let through may have changed it
      if (!this.soak.history.mayHaveChanged(item.id)) this.soak.history.phantom(item.id, `${this.name}: 409 on a conditional write no one else could have caused`);
      item.doubt = true;
    } else if (result.outcome === 'missing') this.soak.history.lost(item.id, `${this.name}: write to its live object answered 404`);
  }

  async bulk() {
    const value = ++this.bulks;
    const live = this.items.filter((item) => item.state === 'live');
    // an object whose restore was in doubt may be live again: the bulk write reaches it when it is
    const maybe = this.items.filter((item) => item.state === 'recycled?');
    for (const item of [...live, ...maybe]) this.soak.history.attempt(item.id, 'Bulk', value);
    this.soak.history.bulk(this.name, value, 'attempt');
    const result = await this.op('bulk write', () =>
      this.client.updateObjects(CLASS, { Bulk: value }, { query: { queryString: `Owner = "${this.name}"` } }),
    );
    this.soak.history.bulk(this.name, value, result.ok ? 'acked' : IN_DOUBT.has(result.outcome) ? 'doubt' : 'failed');
    if (result.ok) {
      const changed = new Map(result.value['~Elements'].map((object) => [object['~ObjectID'], object]));
      for (const item of live) {
        const object = changed.get(item.id);
        if (object) {
          this.soak.history.acked(item.id, 'Bulk', value);
          item.storeTime = object['~StoreTime'];
        } else if (!item.doubt) this.soak.history.lost(item.id, `${this.name}: bulk write left out its live object`);
      }
      for (const item of maybe) {
        const object = changed.get(item.id);
        if (!object) continue; // still in the recycle bin: the attempt was never applied
        this.soak.history.acked(item.id, 'Bulk', value);
        Object.assign(item, { state: 'live', doubt: true, storeTime: object['~StoreTime'] });
      }
    } else {
      for (const item of [...live, ...maybe]) {
        if (IN_DOUBT.has(result.outcome)) {
          this.soak.history.inDoubt(item.id, 'Bulk', value);
          item.doubt = true;
        }
      }
    }
  }

  async upload() {
    const bytes = randomBytes(1024 + Math.floor(Math.random() * 24 * 1024));
    const result = await this.op('upload', () => this.client.uploadFile(new Uint8Array(bytes), { name: `${this.name}.bin`, contentType: 'application/octet-stream' }));
    if (result.ok) this.soak.history.uploaded(result.value['~ObjectID'], sha256(bytes), bytes.length);
  }

  async download() {
    const file = this.soak.history.randomFile();
    if (!file) return;
    const result = await this.op('download', async () => {
      const answer = await this.client.downloadFile(file.id);
      return Buffer.from(await new Response(answer.stream).arrayBuffer());
    });
    if (result.ok && sha256(result.value) !== file.sha256) this.soak.history.lost(file.id, `${this.name}: file bytes differ from those uploaded`);
    if (!result.ok && result.outcome === 'missing') this.soak.history.lost(file.id, `${this.name}: an uploaded file answered 404`);
  }

  /** Locks an own object; another session's write must then be refused with 423; unlocks. */
  async lock(item) {
    const taken = await this.op('lock', () => this.client.lockObject(item.id, 1));
    if (!taken.ok) return;
    const since = Date.now();
    const probe = this.soak.prober;
    if (probe.loggedIn || (await probe.login())) {
      const note = `probe-${this.name}-${++this.notes}`;
      this.soak.history.attempt(item.id, 'Note', note);
      const result = await probe.op('write', () => probe.client.updateObject(item.id, { Note: note }));
      if (result.ok) {
        this.soak.history.acked(item.id, 'Note', note, { foreign: true });
        item.doubt = true;
        if (!this.soak.faults.overlapped('redis', since, Date.now())) this.soak.history.violation('lock', `${item.id}: locked by ${this.name}, yet another session wrote it`);
      } else if (IN_DOUBT.has(result.outcome)) {
        this.soak.history.inDoubt(item.id, 'Note', note);
        item.doubt = true;
      }
    }
    await this.op('lock', () => this.client.unlockObject(item.id));
  }

  /** Moves an own object to the recycle bin, checks it is gone and in the bin, and restores it. */
  async recycle(item) {
    this.soak.history.attemptState(item.id, 'recycled');
    const deleted = await this.op('recycle bin', () => this.client.deleteObject(item.id, { moveToRecycler: true }));
    if (!deleted.ok) {
      if (IN_DOUBT.has(deleted.outcome)) this.soak.history.stateInDoubt(item.id, 'recycled');
      item.doubt = true;
      return;
    }
    this.soak.history.ackedState(item.id, 'recycled');
    item.state = 'recycled';
    const gone = await this.op('read', () => this.client.getObject(item.id));
    if (gone.ok) this.soak.history.stale(item.id, `${this.name}: read its object after moving it to the recycle bin`);
    const bin = await this.op('recycle bin', () => this.client.recycleBin());
    if (bin.ok && !bin.value['~Elements'].some((object) => object['~ObjectID'] === item.id)) this.soak.history.lost(item.id, `${this.name}: recycled object not in the recycle bin`);
    this.soak.history.attemptState(item.id, 'live');
    const restored = await this.op('recycle bin', () => this.client.restoreObject(item.id));
    if (restored.ok) {
      this.soak.history.ackedState(item.id, 'live');
      item.state = 'live';
      item.storeTime = restored.value['~StoreTime'];
      this.observe(restored.value, 'restore answer');
    } else if (IN_DOUBT.has(restored.outcome)) {
      this.soak.history.stateInDoubt(item.id, 'live');
      item.state = 'recycled?';
    }
  }
}

/** Logs in with a second factor (TOTP, each code once) now and then, and reads a little in each session. */
export class TwoFactorWorker extends Actor {
  async run() {
    while (!this.soak.stopping) {
      if (!(await this.login())) break;
      for (let i = 0; i < 5 && !this.soak.stopping && this.loggedIn; i++) {
        const id = this.soak.history.randomObjectId();
        if (id) {
          const result = await this.op('read', () => this.client.getObject(id));
          if (result.ok) this.observe(result.value, 'read');
        }
        await sleep(500);
      }
      await this.op('logout', () => this.client.logout());
      await this.soak.twoFactor.nextStep(this.soak);
    }
  }
}

/** The second factor of one user: its secret and the TOTP steps already used (each code is accepted once). */
export class TwoFactor {
  constructor() {
    this.lastStep = -Infinity;
  }

  async enrol(actor, app) {
    const { secret } = await actor.client.twoFactor.enrol(app);
    this.totp = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 });
    const step = Math.floor(Date.now() / 30_000);
    await actor.client.twoFactor.confirm(app, this.totp.generate({ timestamp: step * 30_000 }));
    this.lastStep = step;
  }

  /**
   * A code of a step not used yet: the current one or the next (the service accepts one step of drift
   * either way; the previous step could have passed by the time the login arrives). Waits while both
   * are spent. A step whose login got no answer counts as spent: the service may have taken its code.
   */
  async code(soak) {
    await this.nextStep(soak);
    const step = Math.max(this.lastStep + 1, Math.floor(Date.now() / 30_000));
    this.lastStep = step;
    return this.totp.generate({ timestamp: step * 30_000 });
  }

  /** Waits until a code is left. */
  async nextStep(soak) {
    while (!soak.stopping && this.lastStep + 1 > Math.floor(Date.now() / 30_000) + 1) await sleep(250);
  }
}

/** An event subscriber: every event it got (with its arrival time), the resets, and when its stream first opened. */
export class Subscriber extends Actor {
  constructor(soak, name, login, subscriptions, concerns) {
    super(soak, name, login);
    this.subscriptions = subscriptions;
    this.concerns = concerns;
    this.events = [];
    this.resets = [];
    this.ends = 0;
    this.openedAt = undefined;
    this.client = createClient({
      baseUrl: 'http://odbrest.soak',
      appKey: APP_KEY,
      serverKey: soak.serverKey,
      relogin: true,
      fetch: soak.requests.fetchFor(soak.cluster, (entry) => {
        if (entry.path !== '/v1/events' || entry.status !== 200) return;
        this.openedAt ??= entry.t1;
        this.on = entry.instance; // the instance the stream is open on
      }),
    });
  }

  async run() {
    await this.login();
    let lastEventId;
    while (!this.soak.stopping) {
      const ended = new Promise((resolve) => {
        this.handle = this.client.subscribe(this.subscriptions, {
          lastEventId,
          minDelayMs: 100,
          maxDelayMs: 1000,
          onEvent: (event) => {
            if (event.type === 'reset') this.resets.push(Date.now());
            else if (event.type === 'end') {
              this.ends++;
              resolve('end');
            } else this.events.push({ at: Date.now(), on: this.on, type: event.type, id: event.objectId, object: event.object });
          },
          onError: (error) => resolve(error),
        });
      });
      const why = await Promise.race([ended, this.soak.stopped]);
      lastEventId = this.handle.lastEventId;
      this.handle.close();
      if (why instanceof Error) {
        const outcome = outcomeOf(why);
        this.soak.history.operation('event stream', outcome, Date.now(), Date.now(), `${this.name}: ${why.message}`);
        if (outcome === 'session' && !this.soak.stopping) await this.login();
        else await sleep(500);
      }
      // `end`: the session ended (a lost Redis, a logout); log in again and resume
      if (why === 'end' && !this.soak.stopping) await this.login();
    }
  }
}
