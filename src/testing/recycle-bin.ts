/**
 * The recycle bin over a store (PROTOCOL.md 6.3), part of the ObjectStore contract: the service on
 * the store under test, its writes cut at every point (a store write that fails, or one that is made
 * and then never answered, as when the process stops), and old bins (one entry per deletion, the
 * entry format before issue 41). No interruption may bring back an older version, leave an object
 * both live and in the bin, list it twice, or lose it.
 */
import { createService, type Service } from '../index.js';
import { MemoryKeyValueStore } from '../storage/memory-kv.js';
import type { ObjectStore, StoredObject } from '../storage/types.js';
import type { TestApi } from './test-api.js';

const BIN_CLASS = 'RecycledObject';
const APP = 'bin';

/** How a write is cut: it fails (nothing written), or it is made and never answered (the process stopped). */
type Cut = 'fails' | 'stops';

/** The store as the service sees it, its `at`-th write (put, putMany, delete; counted from 0) cut. */
function cutStore(store: ObjectStore, at: number, cut: Cut, stopped: () => void): ObjectStore {
  let writes = 0;
  const write = async <T>(run: () => Promise<T>): Promise<T> => {
    if (writes++ !== at) return run();
    if (cut === 'fails') throw new Error('injected store failure');
    await run();
    stopped();
    return new Promise<T>(() => undefined); // never answered
  };
  const { getNow, getManyNow, classNames, classCounts, referencing, putMany, inSession } = store;
  return {
    get: (id) => store.get(id),
    getMany: (ids) => store.getMany(ids),
    ...(getNow && { getNow: getNow.bind(store) }),
    ...(getManyNow && { getManyNow: getManyNow.bind(store) }),
    find: (query) => store.find(query),
    count: (className, where) => store.count(className, where),
    put: (object) => write(() => store.put(object)),
    delete: (id) => write(() => store.delete(id)),
    ...(classNames && { classNames: classNames.bind(store) }),
    ...(classCounts && { classCounts: classCounts.bind(store) }),
    ...(referencing && { referencing: referencing.bind(store) }),
    ...(putMany && { putMany: (objects: Parameters<NonNullable<ObjectStore['putMany']>>[0]) => write(() => putMany.call(store, objects)) }),
    ...(inSession && { inSession: inSession.bind(store) }),
  };
}

interface Answer {
  status: number;
  internalStatus?: string;
  data: Record<string, unknown>;
}

/**
 * One client of a new service on `store` (the contract's and the crash test's): logged in with a
 * custom login whose principal lives in the store, with every right on `BinItem`.
 */
export async function binClient(store: ObjectStore) {
  const principal = (await store.find({ className: 'BinTester', limit: 1 })).objects[0] ?? (await store.put({ className: 'BinTester', fields: { Name: 'tester', _licences: [APP] } }));
  const service: Service = createService({ store, kv: new MemoryKeyValueStore(), onError: () => undefined, customLogin: { className: 'BinTester', authenticate: async () => principal },
    access: { rules: { BinItem: { read: ['*'], create: ['*'], update: ['*'], delete: ['*'] } } },
  });
  await service.ready;
  let sessionId = '';
  const call = async (method: string, path: string, json?: unknown): Promise<Answer> => {
    const headers: Record<string, string> = { appkey: 'contract', ...(sessionId && { sessionId }) };
    if (json !== undefined) headers['content-type'] = 'application/json';
    const response = await service.fetch(new Request(`http://odbrest.contract${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) }));
    const body = (await response.json().catch(() => ({}))) as { status?: { internalStatus?: string }; data?: Record<string, unknown> };
    return { status: response.status, internalStatus: body.status?.internalStatus, data: body.data ?? {} };
  };
  const login = await call('POST', '/v1/auth/df', { user: 'tester', pass: 'x', appNames: [APP] });
  sessionId = String(login.data.sessionId ?? '');
  if (!sessionId) throw new Error(`the contract's login failed: ${JSON.stringify(login)}`);
  return call;
}

type Call = Awaited<ReturnType<typeof binClient>>;
type Step = 'update' | 'recycle' | 'restore';
/** Three rounds of a change, a move to the bin and a restore: what a cut may fall between. */
const STEPS: Step[] = ['update', 'recycle', 'restore', 'update', 'recycle', 'restore', 'update', 'recycle', 'restore'];

/** Registers the cases; `harness.create` makes a new, empty store (the ObjectStore contract's harness). */
export function recycleBinContract(harness: { create(): Promise<ObjectStore> }, { describe, expect, it }: TestApi): void {
  describe('the recycle bin over this store (PROTOCOL.md 6.3): no cut brings back an older version', () => {
    /**
     * Where the object is, checked against the versions it may have (`allowed`: the last one written,
     * and one written in doubt): live or in the bin, never both, never twice, never older, never gone.
     */
    async function check(call: Call, id: string, allowed: number[], context: string): Promise<{ v: number; live: boolean }> {
      const read = await call('GET', `/v1/object/${id}`);
      const bin = await call('GET', '/v1/recycleBin');
      const listed = ((bin.data['~Elements'] ?? []) as Array<Record<string, unknown>>).filter((element) => element['~ObjectID'] === id);
      expect(read.status === 200 || read.status === 404, `${context}: GET answered ${read.status}`).toBe(true);
      const live = read.status === 200;
      expect(listed.length, `${context}: listed ${listed.length} times in the bin while ${live ? 'live' : 'not live'}`).toBe(live ? 0 : 1);
      const v = (live ? read.data.v : listed[0]?.v) as number;
      expect(allowed, `${context}: v=${v} ${live ? 'live' : 'in the bin'}, expected one of ${allowed.join(', ')}`).toContain(v);
      return { v, live };
    }

    /** Runs STEPS from a fresh object with the `at`-th store write cut; then once more without cuts. */
    async function run(store: ObjectStore, at: number, cut: Cut): Promise<void> {
      let stop!: () => void;
      // settles once, when the cut write stopped its process; never again after that
      let stopped = new Promise<'stopped'>((resolve) => (stop = () => resolve('stopped')));
      let call = await binClient(store);
      const created = await call('POST', '/v1/object/BinItem', { v: 0 });
      const id = created.data['~ObjectID'] as string;
      expect(created.status, JSON.stringify(created)).toBe(200);
      call = await binClient(cutStore(store, at, cut, stop));
      let v = 0;
      let live = true;
      for (const [i, step] of [...STEPS, 'update', 'recycle', 'restore'].entries()) {
        const context = `${cut === 'fails' ? 'write' : 'stop after write'} ${at}, step ${i} (${step})`;
        if (i === STEPS.length) call = await binClient(store); // no cut from here on
        if ((step === 'update' && !live) || (step === 'recycle' && !live) || (step === 'restore' && live)) continue;
        const next = step === 'update' ? v + 1 : v;
        const answer = await Promise.race([
          step === 'update' ? call('PATCH', `/v1/object/${id}`, { v: next }) : step === 'recycle' ? call('DELETE', `/v1/object/${id}?moveToRecycler=true`) : call('POST', `/v1/recycleBin/${id}/restore`),
          stopped,
        ]);
        if (answer === 'stopped') {
          call = await binClient(store); // the process stopped: a new one on the same store
          stopped = new Promise(() => undefined);
        }
        else if (answer.status === 200 && step === 'restore') expect(answer.data.v, `${context}: the restore answered v=${String(answer.data.v)}, the last written is ${v}`).toBe(v);
        const ok = answer !== 'stopped' && answer.status === 200;
        ({ v, live } = await check(call, id, ok ? [next] : [v, next], context));
        if (ok) expect(live, `${context}: the ${step} was answered, yet the object is ${live ? 'live' : 'in the bin'}`).toBe(step !== 'recycle');
      }
      expect(live, 'the last restore leaves the object live').toBe(true);
    }

    for (const cut of ['fails', 'stops'] as const) {
      const name = `a store write that ${cut === 'fails' ? 'fails' : 'is made and never answered (the process stops)'}, at each point of moves to the bin and restores`;
      it(name, { timeout: 180_000 }, async () => {
        const store = await harness.create();
        try {
          // each write of the steps (one per step where each is one atomic write; the first rounds where not), each on an object of its own
          for (let at = 0; at < 10; at++) await run(store, at, cut);
        } finally {
          await store.close?.();
        }
      });
    }

    it('old bins (an entry per deletion under ids of their own): the newest deletion is restored, a live object always wins', async () => {
      const store = await harness.create();
      try {
        const call0 = await binClient(store);
        const principal = (await store.find({ className: 'BinTester', limit: 1 })).objects[0] as StoredObject;
        const now = Date.now();
        const old = (id: string, v: number, deletedAt: number) =>
          store.put({ className: BIN_CLASS, fields: { _objectId: id, _className: 'BinItem', _storeTime: deletedAt - 1000, _fields: JSON.stringify({ v }), _deletedAt: deletedAt, _deletedBy: principal.id } });
        // OLDBIN01: deleted three times, a restore cut short twice: three entries, the newest (v=3) in the middle
        await old('OLDBIN01', 1, now - 60_000);
        await old('OLDBIN01', 3, now - 20_000);
        await old('OLDBIN01', 2, now - 40_000);
        // a live object with a stale entry, left by a restore cut short: the live object wins
        const live = (await call0('POST', '/v1/object/BinItem', { v: 7 })).data['~ObjectID'] as string;
        expect(live).toBeTypeOf('string');
        await old(live, 6, now - 10_000);
        const call = await binClient(store);
        const bin = await call('GET', '/v1/recycleBin');
        expect((bin.data['~Elements'] as Array<Record<string, unknown>>).map((element) => [element['~ObjectID'], element.v])).toEqual([['OLDBIN01', 3]]);
        expect((await call('GET', `/v1/object/${live}`)).data.v).toBe(7);
        const restored = await call('POST', '/v1/recycleBin/OLDBIN01/restore');
        expect([restored.status, restored.data.v]).toEqual([200, 3]);
        expect(await store.count(BIN_CLASS)).toBe(0);
        // and once more: moved to the bin and back, the same version
        await call('DELETE', `/v1/object/${live}?moveToRecycler=true`);
        expect((await call('POST', `/v1/recycleBin/${live}/restore`)).data.v).toBe(7);
        expect((await call('GET', '/v1/recycleBin')).data['~Count']).toBe(0);
      } finally {
        await store.close?.();
      }
    });
  });
}
