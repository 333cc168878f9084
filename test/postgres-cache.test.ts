/**
 * The PostgreSQL store's object cache stays exact across instances: two stores, each with its own pool
 * (whose statements are counted, and whose reads by id can be held back), on one table of this run.
 * Waits are on the stores' cache events, never on sleeps.
 */
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { demoAccess } from '../examples/demo-access.mjs';
import { createService, importObjects } from '../src/index.js';
import { PostgresObjectStore, type PostgresCacheEvent, type PostgresCacheOptions } from '../stores/postgres.js';
import { RedisKeyValueStore } from '../stores/redis.js';
import { positionOf } from '../stores/session-scope.js';
import { call, demoData, login } from './helpers.js';
import { DATABASE_URL, deleteKeys, dropSchema, REDIS_URL, RUN_ID, serverAvailable } from './support/servers.js';

const available = await serverAvailable('PostgreSQL', 'the PostgreSQL object cache test');
const schema = `odbrest_cache_${RUN_ID}`;
let tables = 0;
let instances = 0;

/** A store on its own pool: counts the statements it sends, and can hold back the answer of its next read by id. */
const listening = (event: PostgresCacheEvent) => event.kind === 'listening';

function instance(table: string, consistency?: PostgresCacheOptions['consistency']) {
  const statements = { count: 0 };
  let hold: { released: Promise<void>; fetched: () => void } | undefined;
  const url = new URL(DATABASE_URL);
  url.searchParams.set('application_name', `odbrest_cache_${RUN_ID}_${++instances}`); // the listening connection has it too
  const name = url.searchParams.get('application_name')!;
  const pool = new pg.Pool({ connectionString: url.href, max: 4 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
      statements.count++;
      const answer = query(...args);
      const name = (args[0] as { name?: string } | undefined)?.name ?? '';
      const held = hold;
      if (!held || !/_get(_many)?$/.test(name)) return answer;
      hold = undefined;
      return answer.then(async (result) => {
        held.fetched();
        await held.released;
        return result;
      });
    };
  });
  const events: PostgresCacheEvent[] = [];
  const waiting = new Set<{ match: (event: PostgresCacheEvent) => boolean; resolve: () => void }>();
  const store = new PostgresObjectStore({
    pool,
    schema,
    table,
    cache: {
      consistency,
      onEvent: (event) => {
        events.push(event);
        for (const waiter of waiting) if (waiter.match(event)) (waiting.delete(waiter), waiter.resolve());
      },
    },
  });
  return {
    store,
    name,
    statements,
    events,
    /** Resolves at the next event that matches (the test's timeout bounds the wait). */
    next: (match: (event: PostgresCacheEvent) => boolean) => new Promise<void>((resolve) => waiting.add({ match, resolve })),
    /** Starts listening (the first read does) and waits until it listens. */
    async listen() {
      const started = this.next(listening);
      await store.get('NOSUCHID');
      if (!events.some(listening)) await started;
    },
    /** Holds the answer of the next read by id until `release`; `fetched` resolves once PostgreSQL answered it. */
    holdNextRead() {
      let release!: () => void;
      let fetched!: () => void;
      const done = { released: new Promise<void>((resolve) => (release = resolve)), fetched: new Promise<void>((resolve) => (fetched = resolve)) };
      hold = { released: done.released, fetched };
      return { release, fetched: done.fetched };
    },
    async close() {
      await store.close();
      await pool.end();
    },
  };
}
type Instance = ReturnType<typeof instance>;

const changed = (id: string) => (event: PostgresCacheEvent) => event.kind === 'changed' && event.id === id;

/** Two instances on a fresh table, both listening, with one object read once by B (so B holds it). */
async function pair(opened: Instance[]) {
  const table = `objects_${tables++}`;
  const [a, b] = [instance(table), instance(table)];
  opened.push(a, b);
  const object = await a.store.put({ className: 'Doc', fields: { v: 1 } });
  for (const side of [a, b]) await side.listen();
  expect((await b.store.get(object.id))?.fields).toEqual({ v: 1 });
  const before = b.statements.count;
  expect((await b.store.get(object.id))?.fields).toEqual({ v: 1 });
  expect(b.statements.count).toBe(before); // answered from B's cache
  return { a, b, id: object.id };
}

describe.runIf(available)('PostgreSQL object cache across instances', () => {
  const opened: Instance[] = [];
  afterEach(async () => {
    for (const side of opened.splice(0)) await side.close();
  });
  afterAll(async () => dropSchema(schema));

  it('a write on A is read by B once its notification arrived; reads by id and by many are copies', async () => {
    const { a, b, id } = await pair(opened);
    const noticed = b.next(changed(id));
    await a.store.put({ id, className: 'Doc', fields: { v: 2 } });
    await noticed;
    expect((await b.store.get(id))?.fields).toEqual({ v: 2 });
    expect((await b.store.getMany([id, 'NOSUCHID', id])).map((object) => object.fields)).toEqual([{ v: 2 }, { v: 2 }]);
    // a cached object handed out and changed by the caller does not change the cache
    const before = b.statements.count;
    const copy = (await b.store.get(id))!;
    (copy.fields as { v: number }).v = 99;
    expect((await b.store.get(id))?.fields).toEqual({ v: 2 });
    expect(b.statements.count).toBe(before);
    // a delete too
    const gone = b.next(changed(id));
    await a.store.delete(id);
    await gone;
    expect(await b.store.get(id)).toBeUndefined();
    expect(await b.store.getMany([id])).toEqual([]);
  });

  it('a read on B whose answer PostgreSQL gave before a write on A, and that finishes after its notification, is not cached', async () => {
    const { a, b, id } = await pair(opened);
    // evict on B first (B's own write), so the next read goes to PostgreSQL
    const written = await b.store.put({ id, className: 'Doc', fields: { v: 2 } });
    const held = b.holdNextRead();
    const reading = b.store.get(id);
    await held.fetched; // PostgreSQL answered v 2 ...
    const noticed = b.next(changed(id));
    await a.store.put({ id, className: 'Doc', fields: { v: 3 }, ifStoreTime: written.storeTime });
    await noticed; // ... then A wrote v 3 and B heard of it ...
    held.release(); // ... and only then the read finishes
    expect((await reading)?.fields).toEqual({ v: 2 });
    expect((await b.store.get(id))?.fields).toEqual({ v: 3 });
    expect((await b.store.getMany([id]))[0]?.fields).toEqual({ v: 3 });
  });

  it('a read started before a write of the same instance resolved is not cached either', async () => {
    const { b, id } = await pair(opened);
    const written = await b.store.put({ id, className: 'Doc', fields: { v: 2 } });
    const held = b.holdNextRead();
    const reading = b.store.getMany([id]);
    await held.fetched;
    await b.store.put({ id, className: 'Doc', fields: { v: 3 }, ifStoreTime: written.storeTime });
    held.release();
    expect((await reading)[0]?.fields).toEqual({ v: 2 });
    expect((await b.store.get(id))?.fields).toEqual({ v: 3 }); // at once: no wait for any notification
  });

  it('while its listening connection is lost the cache is emptied and bypassed, and it listens again by itself', async () => {
    const { a, b, id } = await pair(opened);
    const deaf = b.next((event) => event.kind === 'deaf');
    const back = b.next(listening);
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    try {
      // B's listening connection: B's application name, and its last statement was LISTEN (or the heartbeat); the pool sends neither
      const { rows } = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND (query LIKE 'LISTEN %' OR query LIKE 'SELECT pg_current_wal_insert_lsn()%')`,
        [b.name],
      );
      expect(rows).toHaveLength(1);
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      // a write while B cannot hear it (straight to the table: any writer notifies)
      await admin.query(`UPDATE "${schema}"."objects_${tables - 1}" SET body = '{"v":2}', data = '{"v":2}', store_time = store_time + 1000 WHERE id = $1`, [id]);
    } finally {
      await admin.end();
    }
    await deaf;
    const before = b.statements.count;
    expect((await b.store.get(id))?.fields).toEqual({ v: 2 });
    if (!b.events.slice(b.events.findLastIndex((event) => event.kind === 'deaf')).some(listening)) {
      expect((await b.store.get(id))?.fields).toEqual({ v: 2 });
      expect(b.statements.count).toBe(before + 2); // not listening yet: both asked PostgreSQL
    }
    await back;
    expect((await b.store.get(id))?.fields).toEqual({ v: 2 });
    const cached = b.statements.count;
    expect((await b.store.get(id))?.fields).toEqual({ v: 2 });
    expect(b.statements.count).toBe(cached);
    const noticed = b.next(changed(id));
    await a.store.put({ id, className: 'Doc', fields: { v: 3 } });
    await noticed;
    expect((await b.store.get(id))?.fields).toEqual({ v: 3 });
  });

  it('issue 45: a read of a session whose last write is at the very WAL position B last read makes a round trip before B answers from its cache', async (context) => {
    // A round trip of B's listening connection can read the position of a write that is still committing
    // (out of the running transactions, its listeners not yet signalled) and be answered before the write's
    // notification: equal to the session's position, it proves nothing. Checked where nothing else moves
    // the WAL: B's round trip then read exactly the session's position.
    const { a, b, id } = await pair(opened);
    const other = (await a.store.put({ className: 'Doc', fields: { v: 0 } })).id;
    await b.store.get(other);
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    const current = async () => positionOf((await admin.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn);
    const waits = () => b.events.filter((event) => event.kind === 'waited').length;
    let storeTime = (await b.store.get(id))!.storeTime;
    let checked = 0;
    try {
      for (let v = 2; v < 50 && checked < 3; v++) {
        let position: string | undefined;
        const written = await a.store.inSession!(undefined, () => a.store.put({ id, className: 'Doc', fields: { v }, ifStoreTime: storeTime }), async (at) => {
          position = at;
        });
        storeTime = written.storeTime;
        // outside any session: a round trip (B holds `other`), sent after the write, reads the position now;
        // and B holds the object again (as written: its notification came before that round trip's answer)
        await b.store.getMany([other, id]);
        if ((await current()) !== position) continue; // another client wrote meanwhile: B may have read a later position
        const before = waits();
        const read = await b.store.inSession!(position, () => b.store.get(id), async () => undefined);
        expect(read?.fields).toEqual({ v });
        if (waits() === before && (await current()) !== position) continue; // a heartbeat may have read a later one
        expect(waits()).toBe(before + 1);
        checked++;
      }
    } finally {
      await admin.end();
    }
    // a server that other clients write to without pause leaves nothing to check
    if (checked === 0) context.skip();
  });

  it('issue 45: sessions that each write their object on one instance and read it back at once on the other, 2,000 reads in all: no read answers an older version', { timeout: 180_000 }, async () => {
    // The soak's stale reads without the soak: 8 sessions, each on an object of its own, a conditional
    // write on A or B (some move the object to another class, as the recycle bin does), then a read
    // through the other instance (sometimes the same one); and reads outside any session on both, whose
    // round trips on the listening connections come at any moment. Before the fix (equal positions taken
    // as passed) between one read in 400 and one in 7,000 answered the older version from the cache
    // (7 runs of 12-20 s: 1 to 10 stale reads each), and this test failed in each of 7 runs.
    const table = `objects_${tables++}`;
    const sides = [instance(table), instance(table)] as const;
    opened.push(...sides);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await sides[0].store.put({ className: 'Doc', fields: { v: 0 } })).id);
    await Promise.all(sides.map((side) => side.listen()));
    const later = (x: string | undefined, y: string) => (x !== undefined && x >= y ? x : y);
    const stale: string[] = [];
    // bounded by work, not by time: about 10 s on a quiet machine, longer on a loaded one
    const READS = 2_000;
    let reads = 0;
    let stop = false;
    const session = async (id: string) => {
      let position: string | undefined;
      let { storeTime, className } = (await sides[0].store.get(id))!;
      const as = <T>(side: Instance, work: () => Promise<T>) => side.store.inSession!(position, work, async (at) => void (position = later(position, at)));
      for (let v = 1; !stop; v++) {
        const [writer, other] = Math.random() < 0.5 ? sides : ([sides[1], sides[0]] as const);
        const reader = Math.random() < 0.8 ? other : writer;
        await as(reader, () => reader.store.get(id)); // the reader holds it
        const next = Math.random() < 0.3 ? (className === 'Doc' ? 'Binned' : 'Doc') : className;
        ({ storeTime, className } = await as(writer, () => writer.store.put({ id, className: next, fields: { v }, ifStoreTime: storeTime })));
        const read = await as(reader, () => reader.store.get(id));
        if (++reads >= READS) stop = true;
        if (read?.storeTime !== storeTime || read.className !== className) {
          stale.push(`${id}: wrote ${className} ${storeTime} on ${writer.name} (position ${position}), read ${read?.className} ${read?.storeTime} on ${reader.name}`);
          stop = true;
        }
      }
    };
    const outside = async (side: Instance) => {
      while (!stop) await side.store.getMany(ids);
    };
    const runs = [...ids.map(session), ...sides.flatMap((side) => [outside(side), outside(side)])];
    await Promise.all(runs).finally(() => {
      stop = true; // a session that failed stops the others too
    });
    expect(stale).toEqual([]);
  });

  it('tables no store caches send no notifications: the first caching store installs them', async () => {
    const table = `objects_${tables++}`;
    const notifier = async () => {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT to_regprocedure($1) IS NOT NULL AS found`, [`"${schema}"."${table}_notify"()`]);
        return rows[0].found as boolean;
      } finally {
        await client.end();
      }
    };
    const plain = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table, cache: false });
    await plain.put({ className: 'Doc', fields: { v: 1 } });
    await plain.close();
    expect(await notifier()).toBe(false);
    const caching = instance(table);
    opened.push(caching);
    await caching.store.count('Doc');
    expect(await notifier()).toBe(true);
  });

  /**
   * The demo in a new table, served by two services over two caching store instances: alice logged in
   * on each (each service keeping its sessions in process), or, with `kv`, one session of alice's that
   * both use (their sessions in that shared store).
   */
  async function twoServices(consistency?: PostgresCacheOptions['consistency'], kv?: RedisKeyValueStore) {
    const table = `objects_${tables++}`;
    const seeding = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table, cache: false });
    await importObjects(seeding, demoData(), 1000);
    await seeding.close();
    const [a, b] = [instance(table, consistency), instance(table, consistency)];
    opened.push(a, b);
    const services = await Promise.all(
      [a, b].map(async (side) => {
        const service = createService({ store: side.store, kv, access: demoAccess, users: { passwordIterations: 1000 }, onError: () => undefined });
        await service.ready;
        return { service, sessionId: kv ? '' : await login(service, 'alice') };
      }),
    );
    if (kv) {
      const shared = await login(services[0]!.service, 'alice');
      for (const side of services) side.sessionId = shared;
    }
    return { a, b, services };
  }

  it('over HTTP: PATCH on one service, GET on the other answers the new value', { timeout: 60_000 }, async () => {
    const { b, services } = await twoServices();
    const get = (i: number) => call(services[i]!.service, 'GET', '/v1/object/CUS00007', { headers: { sessionId: services[i]!.sessionId } });
    await b.listen();
    const old = (await get(1)).body.data;
    expect((await get(1)).body.data).toEqual(old); // now in B's cache
    const noticed = b.next(changed('CUS00007'));
    const patched = await call(services[0]!.service, 'PATCH', '/v1/object/CUS00007', { headers: { sessionId: services[0]!.sessionId }, json: { City: 'Cached City' } });
    expect(patched.status).toBe(200);
    await noticed;
    const answer = (await get(1)).body.data;
    expect(answer).toEqual(patched.body.data);
    expect(answer.City).toBe('Cached City');
    expect(answer['~StoreTime']).not.toBe(old['~StoreTime']);
  });

  it('issue 53: a listing shares the objects the cache keeps: GETs of the page and of what it references then ask PostgreSQL nothing, and a write on another instance shows in both', { timeout: 60_000 }, async () => {
    const table = `objects_${tables++}`;
    const seeding = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table, cache: false });
    await importObjects(seeding, demoData(), 1000);
    await seeding.close();
    const [a, b] = [instance(table), instance(table)];
    opened.push(a, b);
    // the class rules alone decide (no authorize): the listing's page is only serialized
    const service = createService({ store: b.store, access: { rules: demoAccess.rules }, users: { passwordIterations: 1000 }, onError: () => undefined });
    await service.ready;
    const sessionId = await login(service, 'alice');
    const get = (path: string) => call(service, 'GET', path, { headers: { sessionId } });
    await Promise.all([a.listen(), b.listen()]);
    const page = await get('/v1/objects/Customer?perPage=5');
    expect(page.status).toBe(200);
    const elements = page.body.data['~Elements'] as Array<Record<string, unknown>>;
    expect(elements.length).toBe(5);
    const before = b.statements.count;
    for (const element of elements) expect((await get(`/v1/object/${element['~ObjectID'] as string}`)).body.data).toEqual(element);
    expect(b.statements.count).toBe(before);
    expect((await get('/v1/objects/Customer?perPage=5')).body).toEqual(page.body);
    const id = elements[0]!['~ObjectID'] as string;
    const stored = (await a.store.get(id))!;
    const noticed = b.next(changed(id));
    await a.store.put({ id, className: stored.className, fields: { ...stored.fields, City: 'Listed City' } });
    await noticed;
    const [listed] = (await get('/v1/objects/Customer?perPage=5')).body.data['~Elements'] as Array<Record<string, unknown>>;
    expect(listed!.City).toBe('Listed City');
    expect((await get(`/v1/object/${id}`)).body.data).toEqual(listed);
  });

  /** 1,000 times: a PATCH answered by A, then at once a GET of the same object through B; answers how many GETs were stale. */
  async function writeThenRead(a: Instance, b: Instance, services: Awaited<ReturnType<typeof twoServices>>['services']) {
    const send = (i: number, method: string, json?: unknown) => call(services[i]!.service, method, '/v1/object/CUS00008', { headers: { sessionId: services[i]!.sessionId }, json });
    await Promise.all([a.listen(), b.listen()]);
    await send(1, 'GET'); // in B's cache from here on
    let stale = 0;
    for (let i = 0; i < 1000; i++) {
      const written = await send(0, 'PATCH', { City: `City ${i}` });
      expect(written.status).toBe(200);
      const read = (await send(1, 'GET')).body.data;
      if (read.City !== `City ${i}` || read['~StoreTime'] !== written.body.data['~StoreTime']) stale++;
    }
    expect(b.events.filter((event) => event.kind === 'changed').length).toBeGreaterThan(0);
    return stale;
  }

  it('issue 37: one session on two instances (sessions in Redis), 1,000 writes answered by A each read back at once through B: none stale (session consistency, the default)', { timeout: 300_000 }, async (context) => {
    if (!(await serverAvailable('Redis', 'the session consistency test'))) return context.skip();
    const prefix = `odbrest-cache-${RUN_ID}:`;
    const kv = new RedisKeyValueStore({ url: REDIS_URL, prefix });
    try {
      const { a, b, services } = await twoServices(undefined, kv);
      expect(await writeThenRead(a, b, services)).toBe(0);
      // once B has applied the notifications past the session's last write, its reads answer from the cache without a round trip:
      // past it, not at it (a commit is visible a moment before it signals its listeners), so another client's write moves the WAL on
      await a.store.put({ className: 'Elsewhere', fields: { n: 1 } });
      const waits = () => b.events.filter((event) => event.kind === 'waited').length;
      const get = (sessionId: string) => call(services[1]!.service, 'GET', '/v1/object/CUS00008', { headers: { sessionId } });
      // (B learns that with the round trips of the reads that wait: on a server other clients write to, a few may)
      for (let i = 0; i < 100 && waits() < (await get(services[1]!.sessionId), waits()); i++);
      const other = await login(services[1]!.service, 'alice');
      const [before, statements] = [waits(), b.statements.count];
      for (let i = 0; i < 20; i++) expect((await get(services[1]!.sessionId)).body.data.City).toBe('City 999');
      // and so do those of a session that never wrote
      for (let i = 0; i < 20; i++) expect((await get(other)).body.data.City).toBe('City 999');
      expect(waits()).toBe(before);
      expect(b.statements.count).toBe(statements);
    } finally {
      await kv.close();
      await deleteKeys(prefix);
    }
  });

  it("issue 23, item 6: with consistency 'strong', 1,000 writes answered by A, each read back at once through B by another session: none stale", { timeout: 300_000 }, async () => {
    const { a, b, services } = await twoServices('strong');
    expect(await writeThenRead(a, b, services)).toBe(0);
  });
});
