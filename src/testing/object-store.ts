/**
 * The ObjectStore contract, written once and run against every implementation (the in-process store,
 * the file store, PostgreSQL, and any store a host writes):
 *
 *   objectStoreContract('MyStore', { create: async () => new MyStore(...) });
 *
 * `create` returns a new, empty store for each test. Durable stores also pass `reopen`, which closes a
 * store and opens the same data again; the contract then checks that nothing was lost.
 */
import type { TestApi } from './test-api.js';
import { modelEdgesContract } from './model-edges.js';
import { recycleBinContract } from './recycle-bin.js';
import { StoreConflictError, StoreValueError } from '../storage/errors.js';
import { classCountsOf } from '../storage/optional.js';
import type { Fields, FindQuery, ObjectStore, StoredObject, Where } from '../storage/types.js';

export interface ObjectStoreHarnessOptions {
  /**
   * The clock store times are taken from (epoch ms). A store that takes its time elsewhere (a database
   * server's clock) may ignore it: the tests that pass one hold either way.
   */
  now?: () => number;
}

export interface ObjectStoreHarness {
  /** A new, empty store. */
  create(options?: ObjectStoreHarnessOptions): Promise<ObjectStore>;
  /** Closes `store` and opens the same data again, with the options it was created with (durable stores only). */
  reopen?(store: ObjectStore): Promise<ObjectStore>;
}

/** A clock that stands still half-way through a second, so every write in a test falls in that second. */
const frozenClock = () => Date.UTC(2026, 0, 15, 9, 0, 0, 500);

const byIds = (objects: StoredObject[]) => objects.map((object) => object.id);

export function objectStoreContract(name: string, harness: ObjectStoreHarness, { afterEach, describe, expect, it }: TestApi): void {
  describe(`ObjectStore contract: ${name}`, () => {
    const open: ObjectStore[] = [];
    const fresh = async (options?: ObjectStoreHarnessOptions) => {
      const store = await harness.create(options);
      open.push(store);
      return store;
    };
    afterEach(async () => {
      for (const store of open.splice(0)) await store.close?.();
    });

    /** Creates `count` objects of `className`, fields from `fields(i)`, one after the other. */
    async function fill(store: ObjectStore, className: string, count: number, fields: (i: number) => Fields = (i) => ({ i })) {
      const out: StoredObject[] = [];
      for (let i = 0; i < count; i++) out.push(await store.put({ className, fields: fields(i) }));
      return out;
    }

    describe('put and get', () => {
      it('creates an object with a new short alphanumeric id and a store time', async () => {
        const store = await fresh();
        const created = await store.put({ className: 'Person', fields: { Name: 'Alice', Age: 31 } });
        expect(created.id).toMatch(/^[0-9A-Za-z]{1,32}$/);
        expect(created.className).toBe('Person');
        expect(created.fields).toEqual({ Name: 'Alice', Age: 31 });
        expect(Number.isFinite(created.storeTime)).toBe(true);
        expect(await store.get(created.id)).toEqual(created);
      });

      it('answers undefined for an unknown id', async () => {
        const store = await fresh();
        await store.put({ className: 'Person', fields: {} });
        expect(await store.get('NOSUCHID')).toBeUndefined();
        expect(await store.get('')).toBeUndefined();
      });

      it('creates an object under a given id', async () => {
        const store = await fresh();
        const created = await store.put({ id: 'GIVEN001', className: 'Person', fields: { Name: 'Bob' } });
        expect(created.id).toBe('GIVEN001');
        expect(await store.get('GIVEN001')).toEqual(created);
      });

      it('replaces an object as a whole: no merge with the old fields, a new store time', async () => {
        const store = await fresh();
        const first = await store.put({ id: 'REPL0001', className: 'Person', fields: { Name: 'Carol', Old: true } });
        await new Promise((resolve) => setTimeout(resolve, 5)); // store times are in ms
        const second = await store.put({ id: 'REPL0001', className: 'Person', fields: { Name: 'Carol B.' } });
        expect(second.fields).toEqual({ Name: 'Carol B.' });
        expect(second.storeTime).toBeGreaterThan(first.storeTime);
        expect(await store.get('REPL0001')).toEqual(second);
        expect(await store.count('Person')).toBe(1);
      });

      it('gives every created object its own id', async () => {
        const store = await fresh();
        const created = await Promise.all(Array.from({ length: 300 }, (_, i) => store.put({ className: 'Item', fields: { i } })));
        expect(new Set(byIds(created)).size).toBe(300);
        expect(await store.count('Item')).toBe(300);
        for (const object of created.slice(0, 20)) expect(await store.get(object.id)).toEqual(object);
      });

      it('keeps ids unique across classes', async () => {
        const store = await fresh();
        await store.put({ id: 'SHARED01', className: 'A', fields: { v: 1 } });
        await store.put({ id: 'SHARED01', className: 'B', fields: { v: 2 } });
        expect(await store.get('SHARED01')).toMatchObject({ className: 'B', fields: { v: 2 } });
        expect(await store.count('A')).toBe(0);
        expect(byIds((await store.find({ className: 'B' })).objects)).toEqual(['SHARED01']);
      });
    });

    describe('returned objects are copies', () => {
      it('changing a returned object does not change the store', async () => {
        const store = await fresh();
        const created = await store.put({ className: 'Doc', fields: { Tags: ['a'], Meta: { k: 'v' } } });
        (created.fields.Tags as string[]).push('changed');
        const got = (await store.get(created.id))!;
        (got.fields.Meta as Record<string, string>).k = 'changed';
        const listed = (await store.find({ className: 'Doc' })).objects[0]!;
        listed.fields.Extra = 1;
        const many = (await store.getMany([created.id]))[0]!;
        many.fields.Tags = null;
        expect((await store.get(created.id))!.fields).toEqual({ Tags: ['a'], Meta: { k: 'v' } });
      });

      it('changing the input after put does not change the store', async () => {
        const store = await fresh();
        const fields: Fields = { Tags: ['a'], Meta: { k: 'v' } };
        const created = await store.put({ className: 'Doc', fields });
        (fields.Tags as string[]).push('changed');
        fields.Meta = 'changed';
        expect((await store.get(created.id))!.fields).toEqual({ Tags: ['a'], Meta: { k: 'v' } });
      });
    });

    describe('values round-trip', () => {
      it('keeps every JSON type, nesting and the order of fields', async () => {
        const store = await fresh();
        const fields: Fields = {
          zeta: 'last-named, first-stored',
          Str: '',
          Int: -42,
          Float: 3.25,
          Small: 1e-7,
          Big: 9007199254740991,
          Yes: true,
          No: false,
          Nothing: null,
          List: [1, 'two', null, [3], { four: 4 }],
          Nested: { b: { c: { d: [true] } }, a: 1 },
          alpha: 'first-named, last-stored',
        };
        const created = await store.put({ className: 'Doc', fields });
        const got = (await store.get(created.id))!;
        expect(got.fields).toEqual(fields);
        expect(Object.keys(got.fields)).toEqual(Object.keys(fields));
        expect(Object.keys(got.fields.Nested as object)).toEqual(['b', 'a']);
      });

      it('keeps references and sets of references', async () => {
        const store = await fresh();
        const boss = await store.put({ className: 'Employee', fields: { Name: 'Boss' } });
        const team = await fill(store, 'Employee', 3);
        const created = await store.put({
          className: 'Team',
          fields: { Lead: { $ref: boss.id }, Members: { $set: byIds(team) }, Empty: { $set: [] } },
        });
        const got = (await store.get(created.id))!;
        expect(got.fields).toEqual({ Lead: { $ref: boss.id }, Members: { $set: byIds(team) }, Empty: { $set: [] } });
        expect(await store.getMany([(got.fields.Lead as { $ref: string }).$ref])).toEqual([boss]);
      });

      it('keeps unicode in class names, field names and values, and filters on it', async () => {
        const store = await fresh();
        const fields: Fields = {
          'Näme': 'Jürgen Groß',
          名前: '山田太郎',
          emoji: '👩‍💻🚀 ok',
          rtl: 'שלום עולם',
          combining: 'e\u0301 vs \u00e9',
          escapes: 'quote " backslash \\ newline \n tab \t',
        };
        const created = await store.put({ className: 'Persön', fields });
        expect((await store.get(created.id))!.fields).toEqual(fields);
        await store.put({ className: 'Persön', fields: { 名前: '別人' } });
        const found = await store.find({ className: 'Persön', where: { 名前: '山田太郎' } });
        expect(found).toEqual({ objects: [created], total: 1 });
      });

      it('keeps large values', async () => {
        const store = await fresh();
        const big = 'x'.repeat(512 * 1024) + 'ü'.repeat(64 * 1024);
        const list = Array.from({ length: 10_000 }, (_, i) => i);
        let deep: Fields[string] = 'bottom';
        for (let i = 0; i < 40; i++) deep = { level: i, inner: deep };
        const created = await store.put({ className: 'Blob', fields: { big, list, deep } });
        const got = (await store.get(created.id))!;
        expect(got.fields.big).toBe(big);
        expect(got.fields.list).toEqual(list);
        expect(got.fields.deep).toEqual(deep);
      });
    });

    describe('getMany', () => {
      // Order is free (the serializer matches objects by id), so answers are compared sorted.
      const sorted = (objects: StoredObject[]) => [...objects].sort((x, y) => (x.id < y.id ? -1 : 1));

      it('answers the found objects, leaving out unknown ids', async () => {
        const store = await fresh();
        const [a, b, c] = await fill(store, 'Item', 3);
        const other = await store.put({ className: 'Other', fields: {} });
        expect(sorted(await store.getMany([c!.id, 'MISSING1', a!.id, other.id]))).toEqual(sorted([c!, a!, other]));
        expect(await store.getMany([])).toEqual([]);
        expect(await store.getMany(['MISSING1'])).toEqual([]);
        expect(byIds(await store.getMany([b!.id]))).toEqual([b!.id]);
      });
    });

    describe('find', () => {
      it('lists a class in creation order, with the total', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 12);
        await fill(store, 'Other', 4);
        const found = await store.find({ className: 'Item' });
        expect(found.objects).toEqual(items);
        expect(found.total).toBe(12);
      });

      it('lists newest first with reverse', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 7);
        expect((await store.find({ className: 'Item', reverse: true })).objects).toEqual([...items].reverse());
      });

      it('pages with offset and limit; total counts all matches', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 23);
        const ids = byIds(items);
        expect(await store.find({ className: 'Item', offset: 0, limit: 10 })).toEqual({ objects: items.slice(0, 10), total: 23 });
        expect(byIds((await store.find({ className: 'Item', offset: 20, limit: 10 })).objects)).toEqual(ids.slice(20));
        expect(byIds((await store.find({ className: 'Item', offset: 5 })).objects)).toEqual(ids.slice(5));
        const reversedPage = await store.find({ className: 'Item', offset: 3, limit: 4, reverse: true });
        expect(byIds(reversedPage.objects)).toEqual([...ids].reverse().slice(3, 7));
      });

      it('answers an empty page past the end and for limit 0, still with the total', async () => {
        const store = await fresh();
        await fill(store, 'Item', 5);
        expect(await store.find({ className: 'Item', offset: 5, limit: 10 })).toEqual({ objects: [], total: 5 });
        expect(await store.find({ className: 'Item', offset: 1_000_000, limit: 10 })).toEqual({ objects: [], total: 5 });
        expect(await store.find({ className: 'Item', limit: 0 })).toEqual({ objects: [], total: 5 });
      });

      it('answers nothing for an unknown class', async () => {
        const store = await fresh();
        await fill(store, 'Item', 3);
        expect(await store.find({ className: 'Nope' })).toEqual({ objects: [], total: 0 });
        expect(await store.find({ className: 'item' })).toEqual({ objects: [], total: 0 });
      });

      it('filters on equality of one field, in creation order', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 30, (i) => ({ Color: ['red', 'green', 'blue'][i % 3]!, i }));
        const found = await store.find({ className: 'Item', where: { Color: 'green' } });
        expect(found.objects).toEqual(items.filter((_, i) => i % 3 === 1));
        expect(found.total).toBe(10);
        const page = await store.find({ className: 'Item', where: { Color: 'green' }, offset: 2, limit: 3, reverse: true });
        expect(page).toEqual({ objects: items.filter((_, i) => i % 3 === 1).reverse().slice(2, 5), total: 10 });
      });

      it('combines several fields with AND', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 24, (i) => ({ Color: i % 2 ? 'red' : 'blue', Size: i % 3, Even: i % 2 === 0 }));
        const found = await store.find({ className: 'Item', where: { Color: 'blue', Size: 0, Even: true } });
        expect(found.objects).toEqual(items.filter((_, i) => i % 2 === 0 && i % 3 === 0));
        expect(await store.count('Item', { Color: 'blue', Size: 0, Even: true })).toBe(4);
      });

      it('matches by type and value exactly: strings, numbers, booleans and null', async () => {
        const store = await fresh();
        const one = await store.put({ className: 'V', fields: { v: 1 } });
        const oneText = await store.put({ className: 'V', fields: { v: '1' } });
        const yes = await store.put({ className: 'V', fields: { v: true } });
        const nul = await store.put({ className: 'V', fields: { v: null } });
        const absent = await store.put({ className: 'V', fields: {} });
        const list = await store.put({ className: 'V', fields: { v: [1, '1', true, null] } });
        const object = await store.put({ className: 'V', fields: { v: { inner: 1 } } });
        expect(byIds((await store.find({ className: 'V', where: { v: 1 } })).objects)).toEqual([one.id]);
        expect(byIds((await store.find({ className: 'V', where: { v: '1' } })).objects)).toEqual([oneText.id]);
        expect(byIds((await store.find({ className: 'V', where: { v: true } })).objects)).toEqual([yes.id]);
        expect(byIds((await store.find({ className: 'V', where: { v: null } })).objects)).toEqual([nul.id]);
        expect(byIds((await store.find({ className: 'V', where: { v: 'true' } })).objects)).toEqual([]);
        expect(byIds((await store.find({ className: 'V', where: {} })).objects)).toEqual(byIds([one, oneText, yes, nul, absent, list, object]));
        expect(await store.count('V', { v: 2 })).toBe(0);
      });

      it('matches floats and case exactly', async () => {
        const store = await fresh();
        const exact = await store.put({ className: 'V', fields: { Name: 'Alice', x: 0.1 } });
        await store.put({ className: 'V', fields: { Name: 'alice', x: 0.2 } });
        expect(byIds((await store.find({ className: 'V', where: { Name: 'Alice' } })).objects)).toEqual([exact.id]);
        expect(byIds((await store.find({ className: 'V', where: { x: 0.1 } })).objects)).toEqual([exact.id]);
      });
    });

    describe('count', () => {
      it('counts a class, with and without a filter', async () => {
        const store = await fresh();
        await fill(store, 'Item', 9, (i) => ({ Odd: i % 2 === 1 }));
        await fill(store, 'Other', 2);
        expect(await store.count('Item')).toBe(9);
        expect(await store.count('Item', {})).toBe(9);
        expect(await store.count('Item', { Odd: true })).toBe(4);
        expect(await store.count('Nope')).toBe(0);
      });
    });

    describe('creation order', () => {
      it('a replaced object keeps its place', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 5);
        const replaced = await store.put({ id: items[1]!.id, className: 'Item', fields: { replaced: true } });
        expect(byIds((await store.find({ className: 'Item' })).objects)).toEqual(byIds(items));
        expect((await store.find({ className: 'Item', offset: 1, limit: 1 })).objects).toEqual([replaced]);
      });

      it('an object deleted and created again under its id goes to the end', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 4);
        expect(await store.delete(items[0]!.id)).toBe(true);
        await store.put({ id: items[0]!.id, className: 'Item', fields: { again: true } });
        expect(byIds((await store.find({ className: 'Item' })).objects)).toEqual(byIds([...items.slice(1), items[0]!]));
      });

      it('an object replaced into another class leaves the old listing', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 3);
        await store.put({ id: items[1]!.id, className: 'Moved', fields: { moved: true } });
        expect(byIds((await store.find({ className: 'Item' })).objects)).toEqual([items[0]!.id, items[2]!.id]);
        expect(byIds((await store.find({ className: 'Moved' })).objects)).toEqual([items[1]!.id]);
        expect(await store.count('Item')).toBe(2);
      });
    });

    describe('putMany (optional: bulk writes, all or nothing)', () => {
      it('writes conditional updates, creates and replacements at once, answered in input order', async ({ skip }) => {
        const store = await fresh({ now: frozenClock });
        if (!store.putMany) return skip('optional putMany missing: without it a bulk write is written one object at a time (not all or nothing across objects), and imports are slower');
        const [a, b] = await fill(store, 'Item', 2);
        const written = await store.putMany([
          { id: b!.id, className: 'Item', fields: { i: 'b2' }, ifStoreTime: b!.storeTime },
          { id: a!.id, className: 'Item', fields: { i: 'a2' }, ifStoreTime: a!.storeTime },
          { className: 'Item', fields: { i: 'new' } },
          { id: 'MANY0001', className: 'Item', fields: { i: 'given' }, ifStoreTime: null },
        ]);
        expect(written.map((object) => object.fields.i)).toEqual(['b2', 'a2', 'new', 'given']);
        expect(written[0]!.id).toBe(b!.id);
        expect(written[0]!.storeTime).toBeGreaterThan(b!.storeTime);
        for (const object of written) expect(await store.get(object.id)).toEqual(object);
        // replaced objects keep their place in creation order
        expect((await store.find({ className: 'Item' })).objects.map((object) => object.fields.i)).toEqual(['a2', 'b2', 'new', 'given']);
      });

      it('writes none when one conditional write finds another version', async ({ skip }) => {
        const store = await fresh();
        if (!store.putMany) return skip('optional putMany missing: without it a bulk write is written one object at a time (not all or nothing across objects), and imports are slower');
        const [a, b, c] = await fill(store, 'Item', 3);
        await expect(
          store.putMany([
            { id: a!.id, className: 'Item', fields: { i: 'x' }, ifStoreTime: a!.storeTime },
            { id: b!.id, className: 'Item', fields: { i: 'x' }, ifStoreTime: b!.storeTime - 1000 },
            { id: 'MANY0002', className: 'Item', fields: { i: 'x' } },
          ]),
        ).rejects.toBeInstanceOf(StoreConflictError);
        await expect(store.putMany([{ id: c!.id, className: 'Item', fields: { i: 'x' }, ifStoreTime: null }])).rejects.toBeInstanceOf(StoreConflictError);
        expect(await store.get(a!.id)).toEqual(a);
        expect(await store.get(b!.id)).toEqual(b);
        expect(await store.get(c!.id)).toEqual(c);
        expect(await store.get('MANY0002')).toBeUndefined();
        expect(await store.count('Item', { i: 'x' })).toBe(0);
      });

      it("an import's new objects keep their store times and their order; one id already taken writes none of them", async ({ skip }) => {
        const store = await fresh({ now: frozenClock });
        if (!store.putMany) return skip('optional putMany missing: without it a bulk write is written one object at a time (not all or nothing across objects), and imports are slower');
        const kept = Date.UTC(2020, 4, 1, 12, 0, 0);
        const [taken] = await fill(store, 'Other', 1);
        const inputs = Array.from({ length: 1205 }, (_, i) => ({ id: `IMP${String(i).padStart(5, '0')}`, className: i % 2 ? 'Odd' : 'Even', fields: { i, r: { $ref: taken!.id } }, ifStoreTime: null, importedStoreTime: kept - (i % 7) * 1000 }));
        await expect(store.putMany([...inputs.slice(0, 1100), { id: taken!.id, className: 'Odd', fields: {}, ifStoreTime: null, importedStoreTime: kept }])).rejects.toBeInstanceOf(StoreConflictError);
        expect(await store.count('Even')).toBe(0);
        await expect(store.putMany([{ ...inputs[0]!, importedStoreTime: kept + 1 }])).rejects.toBeInstanceOf(StoreValueError);
        await expect(store.putMany([{ ...inputs[0]!, ifStoreTime: undefined }])).rejects.toBeInstanceOf(StoreValueError);
        expect(await store.count('Even')).toBe(0);
        const written = await store.putMany(inputs);
        expect(written.map((object) => object.storeTime)).toEqual(inputs.map((input) => input.importedStoreTime));
        expect(await store.get('IMP01204')).toEqual({ id: 'IMP01204', className: 'Even', storeTime: kept, fields: { i: 1204, r: { $ref: taken!.id } } });
        const odd = await store.find({ className: 'Odd', limit: 1000 });
        expect(odd.objects.map((object) => object.fields.i)).toEqual(inputs.filter((_, i) => i % 2).map((input) => input.fields.i));
      });

      it('keeps what it wrote across a reopen', async ({ skip }) => {
        let store = await fresh();
        if (!store.putMany) return skip('optional putMany missing: without it a bulk write is written one object at a time (not all or nothing across objects), and imports are slower');
        if (!harness.reopen) return skip('a store that is not reopened (no reopen in the harness)');
        const [a] = await fill(store, 'Item', 1);
        const [written] = await store.putMany([{ id: a!.id, className: 'Item', fields: { i: 'kept' }, ifStoreTime: a!.storeTime }]);
        open.splice(open.indexOf(store), 1);
        store = await harness.reopen(store);
        open.push(store);
        expect(await store.get(a!.id)).toEqual(written);
      });
    });

    describe('delete', () => {
      it('removes an object from get, getMany, find and count', async () => {
        const store = await fresh();
        const [a, b] = await fill(store, 'Item', 2, (i) => ({ Name: `n${i}` }));
        expect(await store.delete(a!.id)).toBe(true);
        expect(await store.get(a!.id)).toBeUndefined();
        expect(await store.getMany([a!.id, b!.id])).toEqual([b]);
        expect(await store.find({ className: 'Item' })).toEqual({ objects: [b], total: 1 });
        expect(await store.find({ className: 'Item', where: { Name: 'n0' } })).toEqual({ objects: [], total: 0 });
        expect(await store.count('Item')).toBe(1);
      });

      it('answers false for an unknown or already deleted id', async () => {
        const store = await fresh();
        const [a] = await fill(store, 'Item', 1);
        expect(await store.delete('NOSUCHID')).toBe(false);
        expect(await store.delete(a!.id)).toBe(true);
        expect(await store.delete(a!.id)).toBe(false);
      });
    });

    describe('filters with operators', () => {
      /**
       * One field `v` holding every kind of value, in creation order; `expectIds` names them by key.
       * Wrong types are the point: an operator never matches a field of another type.
       */
      const KINDS: Array<[string, Fields]> = [
        ['n1', { v: 1 }],
        ['n2_5', { v: 2.5 }],
        ['nNeg', { v: -3 }],
        ['n10', { v: 10 }],
        ['s10', { v: '10' }],
        ['sa', { v: 'a' }],
        ['sab', { v: 'ab' }],
        ['sB', { v: 'B' }],
        ['sEmpty', { v: '' }],
        ['yes', { v: true }],
        ['no', { v: false }],
        ['nul', { v: null }],
        ['absent', {}],
        ['list', { v: [1, 'a', null] }],
        ['object', { v: { a: 1 } }],
        ['ref', { v: { $ref: 'NOSUCH01' } }],
      ];
      const ALL = KINDS.map(([key]) => key);
      const except = (...keys: string[]) => ALL.filter((key) => !keys.includes(key));

      async function kinds() {
        const store = await fresh();
        const byKey = new Map<string, StoredObject>();
        for (const [key, fields] of KINDS) byKey.set(key, await store.put({ className: 'Kind', fields }));
        const keyOf = new Map([...byKey].map(([key, object]) => [object.id, key]));
        /** The keys `find` answers for `where`, in the answer's order; checks `total` and `count` agree. */
        const keys = async (where: Where) => {
          const found = await store.find({ className: 'Kind', where });
          expect(found.total).toBe(found.objects.length);
          expect(await store.count('Kind', where)).toBe(found.total);
          return found.objects.map((object) => keyOf.get(object.id));
        };
        return { store, byKey, keys };
      }

      it('$gt, $gte, $lt, $lte with a number match only numbers, numerically', async () => {
        const { keys } = await kinds();
        expect(await keys({ v: { $gt: 2 } })).toEqual(['n2_5', 'n10']);
        expect(await keys({ v: { $gte: 2.5 } })).toEqual(['n2_5', 'n10']);
        expect(await keys({ v: { $lt: 1 } })).toEqual(['nNeg']);
        expect(await keys({ v: { $lte: 1 } })).toEqual(['n1', 'nNeg']);
        expect(await keys({ v: { $gt: 0, $lt: 5 } })).toEqual(['n1', 'n2_5']);
        expect(await keys({ v: { $gte: 100 } })).toEqual([]);
        expect(await keys({ v: { $gt: -1e300 } })).toEqual(['n1', 'n2_5', 'nNeg', 'n10']);
      });

      it('$gt, $gte, $lt, $lte with a string match only strings, by code point', async () => {
        const { keys } = await kinds();
        expect(await keys({ v: { $gt: 'a' } })).toEqual(['sab']);
        expect(await keys({ v: { $gte: 'B' } })).toEqual(['sa', 'sab', 'sB']);
        expect(await keys({ v: { $lt: 'B' } })).toEqual(['s10', 'sEmpty']);
        expect(await keys({ v: { $lte: '' } })).toEqual(['sEmpty']);
        expect(await keys({ v: { $gte: '' } })).toEqual(['s10', 'sa', 'sab', 'sB', 'sEmpty']);
        expect(await keys({ v: { $gt: '1', $lt: 'a' } })).toEqual(['s10', 'sB']);
      });

      it('$ne matches every other value, other types and absent fields included', async () => {
        const { keys } = await kinds();
        expect(await keys({ v: { $ne: 1 } })).toEqual(except('n1'));
        expect(await keys({ v: { $ne: '1' } })).toEqual(ALL);
        expect(await keys({ v: { $ne: 'a' } })).toEqual(except('sa'));
        expect(await keys({ v: { $ne: null } })).toEqual(except('nul'));
        expect(await keys({ v: { $ne: false } })).toEqual(except('no'));
        expect(await keys({ missing: { $ne: 1 } })).toEqual(ALL);
      });

      it('$in matches any of its scalars by type and value; an empty list matches nothing', async () => {
        const { keys } = await kinds();
        expect(await keys({ v: { $in: [1, 'a', true, null] } })).toEqual(['n1', 'sa', 'yes', 'nul']);
        expect(await keys({ v: { $in: ['1', 2, 'A', 'true'] } })).toEqual([]);
        expect(await keys({ v: { $in: [10, 10, '10'] } })).toEqual(['n10', 's10']);
        expect(await keys({ v: { $in: [] } })).toEqual([]);
        expect(await keys({ missing: { $in: [null] } })).toEqual([]);
      });

      it('$prefix matches strings only', async () => {
        const { keys } = await kinds();
        expect(await keys({ v: { $prefix: 'a' } })).toEqual(['sa', 'sab']);
        expect(await keys({ v: { $prefix: 'ab' } })).toEqual(['sab']);
        expect(await keys({ v: { $prefix: 'abc' } })).toEqual([]);
        expect(await keys({ v: { $prefix: '1' } })).toEqual(['s10']);
        expect(await keys({ v: { $prefix: 'A' } })).toEqual([]);
        expect(await keys({ v: { $prefix: '' } })).toEqual(['s10', 'sa', 'sab', 'sB', 'sEmpty']);
      });

      it('$exists: true for a present field (also null), false for an absent one', async () => {
        const { keys } = await kinds();
        expect(await keys({ v: { $exists: true } })).toEqual(except('absent'));
        expect(await keys({ v: { $exists: false } })).toEqual(['absent']);
        expect(await keys({ missing: { $exists: false } })).toEqual(ALL);
        expect(await keys({ missing: { $exists: true } })).toEqual([]);
      });

      it('equality with null matches a stored null, not an absent field; a scalar never equals a list', async () => {
        const { keys } = await kinds();
        expect(await keys({ v: null })).toEqual(['nul']);
        expect(await keys({ v: 1 })).toEqual(['n1']);
        expect(await keys({ v: 'a' })).toEqual(['sa']);
        expect(await keys({ v: false })).toEqual(['no']);
      });

      it('$eq equals a scalar, and a string also references the object with that id (query text "=")', async () => {
        const { keys } = await kinds();
        expect(await keys({ v: { $eq: 1 } })).toEqual(['n1']);
        expect(await keys({ v: { $eq: '10' } })).toEqual(['s10']);
        expect(await keys({ v: { $eq: null } })).toEqual(['nul']);
        expect(await keys({ v: { $eq: true } })).toEqual(['yes']);
        expect(await keys({ v: { $eq: 'NOSUCH01' } })).toEqual(['ref']);
        expect(await keys({ missing: { $eq: null } })).toEqual([]);
      });

      it('$like matches whole strings, * any run and ? one character, case-insensitively', async () => {
        const { keys } = await kinds();
        expect(await keys({ v: { $like: 'a*' } })).toEqual(['sa', 'sab']);
        expect(await keys({ v: { $like: '?' } })).toEqual(['sa', 'sB']);
        expect(await keys({ v: { $like: 'b' } })).toEqual(['sB']);
        expect(await keys({ v: { $like: 'A?' } })).toEqual(['sab']);
        expect(await keys({ v: { $like: '*' } })).toEqual(['s10', 'sa', 'sab', 'sB', 'sEmpty']);
        expect(await keys({ v: { $like: '1*' } })).toEqual(['s10']);
        expect(await keys({ v: { $like: '*b' } })).toEqual(['sab', 'sB']);
        expect(await keys({ v: { $like: '' } })).toEqual(['sEmpty']);
        expect(await keys({ missing: { $like: '*' } })).toEqual([]);
      });

      it('$like takes other characters literally: %, _, backslash, regular expression signs', async () => {
        const store = await fresh();
        const texts = ['a%b', 'a_b', 'a\\b', 'a.b', 'a+b', 'axb', 'x\ny', '(a)', 'ÄRGER', 'Straße'];
        const made = await Promise.all(texts.map((Text) => store.put({ className: 'Pattern', fields: { Text } })));
        const id = new Map(made.map((object, i) => [object.id, texts[i]]));
        const texts_ = async (pattern: string) => (await store.find({ className: 'Pattern', where: { Text: { $like: pattern } } })).objects.map((o) => id.get(o.id)).sort();
        expect(await texts_('a%b')).toEqual(['a%b']);
        expect(await texts_('a_b')).toEqual(['a_b']);
        expect(await texts_('a\\b')).toEqual(['a\\b']);
        expect(await texts_('a.b')).toEqual(['a.b']);
        expect(await texts_('a?b')).toEqual(['a%b', 'a+b', 'a.b', 'a\\b', 'a_b', 'axb']);
        expect(await texts_('x?y')).toEqual(['x\ny']);
        expect(await texts_('(*)')).toEqual(['(a)']);
        expect(await texts_('a+*')).toEqual(['a+b']);
        expect(await texts_('är*')).toEqual(['ÄRGER']);
        expect(await texts_('STRASSE')).toEqual([]);
        expect(await texts_('STRA?E')).toEqual(['Straße']);
      });

      it('$null: true for an absent field and a null one, false for any other value', async () => {
        const { keys } = await kinds();
        expect(await keys({ v: { $null: true } })).toEqual(['nul', 'absent']);
        expect(await keys({ v: { $null: false } })).toEqual(except('nul', 'absent'));
        expect(await keys({ missing: { $null: true } })).toEqual(ALL);
        expect(await keys({ missing: { $null: false } })).toEqual([]);
      });

      it('$and, $or and $not combine filters; an empty $and matches all, an empty $or nothing', async () => {
        const { keys } = await kinds();
        expect(await keys({ $or: [{ v: 1 }, { v: 'a' }, { v: { $like: 'B' } }] })).toEqual(['n1', 'sa', 'sB']);
        expect(await keys({ $and: [{ v: { $gt: 0 } }, { v: { $lt: 5 } }] })).toEqual(['n1', 'n2_5']);
        expect(await keys({ $not: { v: { $null: false } } })).toEqual(['nul', 'absent']);
        expect(await keys({ $not: { v: { $gt: 1 } } })).toEqual(except('n2_5', 'n10'));
        expect(await keys({ $not: { v: { $in: [1, 'a'] } } })).toEqual(except('n1', 'sa'));
        expect(await keys({ $or: [{ $not: { v: { $exists: true } } }, { v: false }] })).toEqual(['no', 'absent']);
        expect(await keys({ $and: [] })).toEqual(ALL);
        expect(await keys({ $or: [] })).toEqual([]);
        expect(await keys({ $not: {} })).toEqual([]);
        expect(await keys({ $or: [{ v: 1 }, { v: 10 }], $not: { v: 10 } })).toEqual(['n1']);
        expect(await keys({ $not: { $or: [{ v: { $like: '*' } }, { v: { $null: true } }] } })).toEqual(['n1', 'n2_5', 'nNeg', 'n10', 'yes', 'no', 'list', 'object', 'ref']);
      });

      it('$oids and $storeTime select by id and by store time', async () => {
        const { store, byKey, keys } = await kinds();
        expect(await keys({ $oids: [byKey.get('sa')!.id, byKey.get('n1')!.id, 'NOSUCH01'] })).toEqual(['n1', 'sa']);
        expect(await keys({ $oids: [] })).toEqual([]);
        expect(await keys({ $not: { $oids: [byKey.get('sa')!.id] } })).toEqual(except('sa'));
        const time = byKey.get('n1')!.storeTime;
        const stamped = (await store.find({ className: 'Kind' })).objects;
        const at = (test: (t: number) => boolean) => stamped.filter((o) => test(o.storeTime)).length;
        expect((await keys({ $storeTime: { $gte: time } })).length).toBe(at((t) => t >= time));
        expect((await keys({ $storeTime: { $lt: time } })).length).toBe(at((t) => t < time));
        expect(await keys({ $storeTime: { $gt: 8.64e15 } })).toEqual([]);
        expect(await keys({ $storeTime: { $gte: 0 }, v: 1 })).toEqual(['n1']);
        expect(await keys({ $classes: ['Kind'], v: 1 })).toEqual(['n1']);
        expect(await keys({ $classes: ['Other'] })).toEqual([]);
        expect(await keys({ $classes: [] })).toEqual([]);
      });

      it('$text: every word is contained in a top-level string field (not _), case-insensitively', async () => {
        const store = await fresh();
        const put = (fields: Fields) => store.put({ className: 'Doc', fields });
        const a = await put({ Title: 'Red Apple', Note: 'fresh from Berlin' });
        const b = await put({ Title: 'apple pie', Count: 3 });
        const c = await put({ Title: 'Pear', _secret: 'apple', Nested: { t: 'apple' } });
        const d = await put({ Title: 'x', Tags: ['apple'] });
        const ids = async (text: string) => byIds((await store.find({ className: 'Doc', where: { $text: text } })).objects);
        expect(await ids('apple')).toEqual([a.id, b.id]);
        expect(await ids('APPLE berl')).toEqual([a.id]);
        expect(await ids('  ')).toEqual([a.id, b.id, c.id, d.id]);
        expect(await ids('red berlin')).toEqual([a.id]);
        expect(await ids('le pi')).toEqual([b.id]);
        expect(await ids('3')).toEqual([]);
        expect(await ids('pear apple')).toEqual([]);
        expect(await ids('%')).toEqual([]);
        expect(await store.count('Doc', { $text: 'apple', Title: { $like: '*pie' } })).toBe(1);
      });

      it('every operator of a condition and every condition must hold', async () => {
        const { keys } = await kinds();
        expect(await keys({ v: { $gt: 'a', $prefix: 'a' } })).toEqual(['sab']);
        expect(await keys({ v: { $in: [1, 2.5, 'a'], $ne: 2.5 } })).toEqual(['n1', 'sa']);
        expect(await keys({ v: { $exists: true, $ne: null, $lt: 0 } })).toEqual(['nNeg']);
        expect(await keys({ v: { $in: [1, 10] }, missing: { $exists: false } })).toEqual(['n1', 'n10']);
        expect(await keys({ v: { $in: [1, 10] }, missing: { $exists: true } })).toEqual([]);
        expect(await keys({ v: 'a', missing: null })).toEqual([]);
      });

      it('pages $exists and an $and narrowed by $oids (as folders and self listings ask), ordered and reversed, following writes', async () => {
        const store = await fresh();
        const all = await fill(store, 'P', 30, (i): Fields => (i % 4 === 0 ? { i, flag: i % 8 === 0 ? null : 'x' } : { i }));
        const other = await store.put({ className: 'Q', fields: { i: 0, flag: 'x' } });
        const page = async (where: Where, query: Partial<FindQuery> = {}) => {
          const found = await store.find({ className: 'P', where, ...query });
          expect(await store.count('P', where)).toBe(found.total);
          return { total: found.total, ids: byIds(found.objects) };
        };
        const expectPages = async (live: StoredObject[], chosen: string[]) => {
          const flagged = live.filter((object) => 'flag' in object.fields);
          const bare = live.filter((object) => !('flag' in object.fields));
          expect(await page({ flag: { $exists: true } }, { offset: 2, limit: 3 })).toEqual({ total: flagged.length, ids: byIds(flagged.slice(2, 5)) });
          expect(await page({ flag: { $exists: false } }, { offset: 5, limit: 4 })).toEqual({ total: bare.length, ids: byIds(bare.slice(5, 9)) });
          expect(await page({ flag: { $exists: false } }, { limit: 3, reverse: true })).toEqual({ total: bare.length, ids: byIds(bare.slice(-3).reverse()) });
          expect(await page({ flag: { $exists: false } }, { orderBy: { field: 'i', descending: true }, limit: 2 })).toEqual({ total: bare.length, ids: byIds(bare.slice(-2).reverse()) });
          expect(await page({ flag: { $exists: false } }, { limit: 0 })).toEqual({ total: bare.length, ids: [] });
          const narrowed = live.filter((object) => chosen.includes(object.id));
          expect(await page({ $and: [{}, { $oids: chosen }] }, { limit: 2 })).toEqual({ total: narrowed.length, ids: byIds(narrowed.slice(0, 2)) });
          expect(await page({ $and: [{}, { $oids: chosen }] }, { offset: 1, reverse: true })).toEqual({ total: narrowed.length, ids: byIds(narrowed.reverse().slice(1)) });
          const above = live.filter((object) => chosen.includes(object.id) && (object.fields.i as number) >= 10);
          expect(await page({ $and: [{ i: { $gte: 10 } }, { $and: [{ $oids: chosen }] }] })).toEqual({ total: above.length, ids: byIds(above) });
        };
        const chosen = [all[20]!.id, all[3]!.id, all[11]!.id, other.id, all[3]!.id, 'NOSUCH01'];
        await expectPages(all, chosen);
        // a deleted one, one moved to another class, a field removed and one added
        await store.delete(all[11]!.id);
        await store.put({ id: all[20]!.id, className: 'Q', fields: { i: 20 } });
        const unflagged = await store.put({ id: all[4]!.id, className: 'P', fields: { i: 4 } });
        const flagged = await store.put({ id: all[5]!.id, className: 'P', fields: { i: 5, flag: 'y' } });
        const live = all.filter((_, i) => i !== 11 && i !== 20).map((object) => (object.id === unflagged.id ? unflagged : object.id === flagged.id ? flagged : object));
        await expectPages(live, chosen);
      });
    });

    describe('filters on references', () => {
      async function team() {
        const store = await fresh();
        const [lead, other] = await fill(store, 'Employee', 2);
        const put = (fields: Fields) => store.put({ className: 'Customer', fields });
        const direct = await put({ Manager: { $ref: lead!.id }, Team: { $set: [other!.id] } });
        const elsewhere = await put({ Manager: { $ref: other!.id } });
        const inSet = await put({ Team: { $set: [other!.id, lead!.id] } });
        const textId = await put({ Manager: lead!.id, Team: [lead!.id] });
        const setAsManager = await put({ Manager: { $set: [lead!.id] } });
        const none = await put({ Manager: null, Team: { $set: [] } });
        return { store, lead: lead!, other: other!, direct, elsewhere, inSet, textId, setAsManager, none };
      }
      const ids = async (store: ObjectStore, where: Where, extra: Partial<FindQuery> = {}) =>
        byIds((await store.find({ className: 'Customer', where, ...extra })).objects);

      it('matches objects that reference the object directly or as a member of a set, not its id as text', async () => {
        const { store, lead, other, direct, elsewhere, inSet, setAsManager } = await team();
        expect(await ids(store, { Manager: { $ref: lead.id } })).toEqual([direct.id, setAsManager.id]);
        expect(await ids(store, { Team: { $ref: lead.id } })).toEqual([inSet.id]);
        expect(await ids(store, { Team: { $ref: other.id } })).toEqual([direct.id, inSet.id]);
        expect(await ids(store, { Manager: { $ref: other.id } })).toEqual([elsewhere.id]);
        expect(await ids(store, { Manager: { $ref: 'NOSUCH01' } })).toEqual([]);
        expect(await store.count('Customer', { Team: { $ref: other.id } })).toBe(2);
        expect(await ids(store, { Team: { $ref: other.id } }, { reverse: true, limit: 1 })).toEqual([inSet.id]);
      });

      it('combines a reference with other conditions', async () => {
        const { store, lead, other, direct, inSet } = await team();
        expect(await ids(store, { Team: { $ref: other.id }, Manager: { $ref: lead.id } })).toEqual([direct.id]);
        expect(await ids(store, { Team: { $ref: other.id }, Manager: { $exists: false } })).toEqual([inSet.id]);
      });

      it('follows writes: a changed, deleted or new reference is found where it now is, in creation order', async () => {
        const { store, lead, other, direct, elsewhere, inSet, setAsManager, none } = await team();
        expect(await ids(store, { Manager: { $ref: lead.id } })).toEqual([direct.id, setAsManager.id]);
        await store.put({ id: elsewhere.id, className: 'Customer', fields: { Manager: { $ref: lead.id } } });
        await store.put({ id: direct.id, className: 'Customer', fields: { Manager: { $ref: other.id } } });
        await store.delete(setAsManager.id);
        await store.put({ id: none.id, className: 'Customer', fields: { Team: { $set: [lead.id, lead.id] } } });
        const added = await store.put({ className: 'Customer', fields: { Manager: { $ref: lead.id } } });
        expect(await ids(store, { Manager: { $ref: lead.id } })).toEqual([elsewhere.id, added.id]);
        expect(await ids(store, { Manager: { $ref: other.id } })).toEqual([direct.id]);
        expect(await ids(store, { Team: { $ref: lead.id } })).toEqual([inSet.id, none.id]);
        expect(await ids(store, { Team: { $ref: other.id } })).toEqual([inSet.id]);
      });
    });

    describe('class counts and referencing objects (optional: classCounts, referencing; PROTOCOL.md 6.11)', () => {
      // Not optional in effect: the service finds the classes that hold objects through classCounts or
      // classNames. A store with neither still passes every case above, and yet GET /v1/classes, the
      // studio and referencedBy miss every class nobody declared or named in an access rule.
      it('the service finds every class that holds objects (classCounts or classNames, as GET /v1/classes asks)', async () => {
        const store = await fresh();
        await fill(store, 'Customer', 2);
        await fill(store, 'Invoice', 1);
        await fill(store, 'Note', 1);
        const found = (await classCountsOf(store, [])).map((entry) => entry.className).sort();
        expect(found, 'a store with neither classCounts nor classNames: GET /v1/classes, the studio and referencedBy miss these classes').toEqual(['Customer', 'Invoice', 'Note']);
      });

      it('classCounts answers every class holding objects with its number, following writes', async ({ skip }) => {
        const store = await fresh();
        if (!store.classCounts) return skip('optional classCounts missing: without it GET /v1/classes counts class by class (classNames, then count)');
        expect(await store.classCounts()).toEqual([]);
        const [only] = await fill(store, 'Lonely', 1);
        const items = await fill(store, 'Item', 3);
        const sorted = async () => (await store.classCounts!()).sort((a, b) => (a.className < b.className ? -1 : 1));
        const counted = await sorted();
        // a store may estimate a large class; these are small, so they are counted
        expect(counted).toEqual([
          { className: 'Item', count: 3 },
          { className: 'Lonely', count: 1 },
        ]);
        await store.delete(only!.id);
        await store.put({ id: items[0]!.id, className: 'Moved', fields: {} });
        expect(await sorted()).toEqual([
          { className: 'Item', count: 2 },
          { className: 'Moved', count: 1 },
        ]);
      });

      /** Objects of three classes referencing `target` directly, in sets, as text only, and in an internal field. */
      async function referrers() {
        const store = await fresh();
        const [target, other] = await fill(store, 'Employee', 2);
        const put = (className: string, fields: Fields) => store.put({ className, fields });
        const customerA = await put('Customer', { Manager: { $ref: target!.id } });
        const project = await put('Project', { Team: { $set: [other!.id, target!.id, target!.id] }, Name: 'P' });
        const textOnly = await put('Customer', { Manager: target!.id, Team: [target!.id], Note: { id: target!.id } });
        const internal = await put('Customer', { _owner: { $ref: target!.id } });
        const customerB = await put('Customer', { Backup: { $ref: target!.id }, Manager: { $ref: other!.id }, Name: 'B' });
        const boss = await put('Employee', { Boss: { $ref: target!.id } });
        return { store, target: target!, other: other!, customerA, project, textOnly, internal, customerB, boss };
      }

      it('referencing finds the objects of every class holding a reference or a set element to an id, by class name then creation order', async ({ skip }) => {
        const { store, target, other, customerA, project, customerB, boss } = await referrers();
        if (!store.referencing) return skip('optional referencing missing: without it referencedBy reads every class');
        const found = await store.referencing(target.id);
        // never the id as plain text, in a list or nested, nor in a field starting with _
        expect(byIds(found.objects)).toEqual([customerA.id, customerB.id, boss.id, project.id]);
        expect(found.total).toBe(4);
        expect(found.objects[0]).toEqual(customerA);
        expect(byIds((await store.referencing(other.id)).objects)).toEqual([customerB.id, project.id]);
        expect(await store.referencing('NOSUCH01')).toEqual({ objects: [], total: 0 });
      });

      it('referencing pages and filters across classes, with the total of the filter', async ({ skip }) => {
        const { store, target, customerB, boss, project } = await referrers();
        if (!store.referencing) return skip('optional referencing missing: without it referencedBy reads every class');
        expect(await store.referencing(target.id, { limit: 0 })).toEqual({ objects: [], total: 4 });
        const page = await store.referencing(target.id, { offset: 1, limit: 2 });
        expect({ ids: byIds(page.objects), total: page.total }).toEqual({ ids: [customerB.id, boss.id], total: 4 });
        expect((await store.referencing(target.id, { offset: 9, limit: 2 })).objects).toEqual([]);
        const named = await store.referencing(target.id, { where: { Name: { $exists: true } } });
        expect({ ids: byIds(named.objects), total: named.total }).toEqual({ ids: [customerB.id, project.id], total: 2 });
        const notCustomers = await store.referencing(target.id, { where: { $not: { $classes: ['Customer'] } }, limit: 1 });
        expect({ ids: byIds(notCustomers.objects), total: notCustomers.total }).toEqual({ ids: [boss.id], total: 2 });
      });

      it('referencing follows writes: changed, moved, deleted and new references', async ({ skip }) => {
        const { store, target, other, customerA, project, textOnly, customerB, boss } = await referrers();
        if (!store.referencing) return skip('optional referencing missing: without it referencedBy reads every class');
        await store.put({ id: customerA.id, className: 'Customer', fields: { Manager: { $ref: other.id } } });
        await store.put({ id: project.id, className: 'Project', fields: { Team: { $set: [other.id] } } });
        await store.put({ id: textOnly.id, className: 'Customer', fields: { Manager: { $ref: target.id } } });
        await store.put({ id: boss.id, className: 'Archive', fields: { Boss: { $ref: target.id } } });
        await store.delete(customerB.id);
        const added = await store.put({ className: 'Customer', fields: { Team: { $set: [target.id] } } });
        expect(byIds((await store.referencing(target.id)).objects)).toEqual([boss.id, textOnly.id, added.id]);
        expect(byIds((await store.referencing(other.id)).objects)).toEqual([customerA.id, project.id]);
      });
    });

    describe('reference paths ($match)', () => {
      /** Customers referencing employees (directly, and in a set), employees referencing a boss. */
      async function company() {
        const store = await fresh();
        const emp = (fields: Fields) => store.put({ className: 'Employee', fields });
        const boss = await emp({ Name: 'Berta', City: 'Berlin' });
        const ann = await emp({ Name: 'Ann', City: 'Bonn', Boss: { $ref: boss.id } });
        const bob = await emp({ Name: 'Bob', City: null, Boss: { $ref: ann.id } });
        const cid = await emp({ Name: 'Cid', Boss: { $set: [boss.id, ann.id] } });
        const other = await store.put({ className: 'Office', fields: { Name: 'Ann', City: 'Köln' } });
        const cust = (Name: string, fields: Fields) => store.put({ className: 'Customer', fields: { Name, ...fields } });
        const made = [
          await cust('c1', { Manager: { $ref: ann.id } }),
          await cust('c2', { Manager: { $ref: bob.id }, Team: { $set: [ann.id, cid.id] } }),
          await cust('c3', { Manager: { $ref: 'NOSUCH01' }, Team: { $set: [] } }),
          await cust('c4', { Manager: ann.id, Team: [ann.id] }),
          await cust('c5', { Manager: { $ref: other.id }, Team: { $set: [boss.id] } }),
          await cust('c6', { Manager: null }),
          await cust('c7', {}),
          await cust('c8', { Manager: { $set: [cid.id, boss.id] } }),
        ];
        const nameOf = new Map(made.map((object) => [object.id, object.fields.Name]));
        const names = async (where: Where, extra: Partial<FindQuery> = {}) => {
          const found = await store.find({ className: 'Customer', where, ...extra });
          expect(await store.count('Customer', where)).toBe(found.total);
          return found.objects.map((object) => nameOf.get(object.id));
        };
        return { store, boss, ann, bob, cid, other, names };
      }

      it('follows a reference and a set of references to an existing object that matches', async () => {
        const { names } = await company();
        expect(await names({ Manager: { $match: { Name: 'Ann' } } })).toEqual(['c1', 'c5']);
        expect(await names({ Manager: { $match: { City: { $like: 'b*' } } } })).toEqual(['c1', 'c8']);
        expect(await names({ Team: { $match: { Name: 'Ann' } } })).toEqual(['c2']);
        expect(await names({ Team: { $match: { Name: { $in: ['Cid', 'Berta'] } } } })).toEqual(['c2', 'c5']);
        expect(await names({ Manager: { $match: {} } })).toEqual(['c1', 'c2', 'c5', 'c8']);
        expect(await names({ Team: { $match: {} } })).toEqual(['c2', 'c5']);
        expect(await names({ Name: { $match: {} } })).toEqual([]);
      });

      it('follows paths of up to three references, through references and sets', async () => {
        const { names } = await company();
        expect(await names({ Manager: { $match: { Boss: { $match: { Name: 'Berta' } } } } })).toEqual(['c1', 'c8']);
        expect(await names({ Manager: { $match: { Boss: { $match: { Boss: { $match: { City: 'Berlin' } } } } } } })).toEqual(['c2', 'c8']);
        expect(await names({ Team: { $match: { Boss: { $match: { Name: 'Ann' } } } } })).toEqual(['c2']);
      });

      it('"is null" through a path needs a referenced object whose field is absent or null', async () => {
        const { names } = await company();
        expect(await names({ Manager: { $match: { City: { $null: true } } } })).toEqual(['c2', 'c8']);
        expect(await names({ Manager: { $match: { City: { $null: false } } } })).toEqual(['c1', 'c5', 'c8']);
        expect(await names({ $not: { Manager: { $match: { City: { $null: false } } } } })).toEqual(['c2', 'c3', 'c4', 'c6', 'c7']);
        expect(await names({ Manager: { $match: { Boss: { $null: true } } } })).toEqual(['c5', 'c8']);
      });

      it('combines with or, not, other conditions, ordering and paging', async () => {
        const { names, ann } = await company();
        expect(await names({ $or: [{ Manager: { $match: { Name: 'Bob' } } }, { Team: { $match: { Name: 'Berta' } } }] })).toEqual(['c2', 'c5']);
        expect(await names({ $not: { Manager: { $match: { Name: 'Ann' } } } })).toEqual(['c2', 'c3', 'c4', 'c6', 'c7', 'c8']);
        expect(await names({ Manager: { $match: { $oids: [ann.id] } } })).toEqual(['c1']);
        expect(await names({ Manager: { $match: { Name: 'Ann', $classes: ['Office'] } } })).toEqual(['c5']);
        expect(await names({ Manager: { $match: { $not: { $classes: ['Employee'] } } } })).toEqual(['c5']);
        expect(await names({ Manager: { $match: { $text: 'bonn' } }, Name: { $ne: 'c2' } })).toEqual(['c1']);
        expect(await names({ Manager: { $match: { Name: { $like: '*' } } } }, { orderBy: { field: 'Name', descending: true }, offset: 1, limit: 2 })).toEqual(['c5', 'c2']);
        expect(await names({ Manager: { $match: { Name: { $like: '*' } } } }, { reverse: true, offset: 1, limit: 2 })).toEqual(['c5', 'c2']);
      });

      it('follows writes to the referenced objects', async () => {
        const { store, names, ann, bob } = await company();
        expect(await names({ Manager: { $match: { Name: 'Ann' } } })).toEqual(['c1', 'c5']);
        await store.put({ id: ann.id, className: 'Employee', fields: { Name: 'Anna' } });
        expect(await names({ Manager: { $match: { Name: 'Ann' } } })).toEqual(['c5']);
        expect(await names({ Manager: { $match: { Name: 'Anna' } } }, { offset: 0, limit: 5 })).toEqual(['c1']);
        await store.delete(bob.id);
        expect(await names({ Manager: { $match: { City: { $null: true } } } })).toEqual(['c1', 'c8']);
      });
    });

    describe('filters follow writes', () => {
      it('equality and $in answers change with puts, replacements and deletes, in creation order', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 12, (i) => ({ Color: ['red', 'green', 'blue'][i % 3]!, i }));
        const ids = async (where: Where) => byIds((await store.find({ className: 'Item', where })).objects);
        const at = (...indexes: number[]) => indexes.map((index) => items[index]!.id);
        expect(await ids({ Color: 'red' })).toEqual(at(0, 3, 6, 9));
        expect(await ids({ Color: { $in: ['green', 'blue'] } })).toEqual(at(1, 2, 4, 5, 7, 8, 10, 11));
        await store.put({ id: items[4]!.id, className: 'Item', fields: { Color: 'red' } });
        await store.put({ id: items[9]!.id, className: 'Item', fields: { Color: 'green' } });
        await store.put({ id: items[2]!.id, className: 'Item', fields: { Color: 7 } });
        await store.delete(items[0]!.id);
        await store.put({ id: items[5]!.id, className: 'Other', fields: { Color: 'red' } });
        const added = await store.put({ className: 'Item', fields: { Color: 'red' } });
        expect(await ids({ Color: 'red' })).toEqual([...at(3, 4, 6), added.id]);
        expect(await ids({ Color: { $in: ['green', 'blue'] } })).toEqual(at(1, 7, 8, 9, 10, 11));
        expect(await ids({ Color: 7 })).toEqual(at(2));
        const page = await store.find({ className: 'Item', where: { Color: 'red' }, offset: 1, limit: 2, reverse: true });
        expect(page).toEqual({ objects: [items[6], await store.get(items[4]!.id)], total: 4 });
        expect(await store.count('Item', { Color: { $in: ['red', 7] } })).toBe(5);
      });
    });

    describe('orderBy', () => {
      /** One of each rank, with ties, in this creation order. */
      const VALUES: Array<[string, Fields]> = [
        ['two_a', { v: 2 }],
        ['b', { v: 'b' }],
        ['absent', {}],
        ['nul', { v: null }],
        ['yes', { v: true }],
        ['no', { v: false }],
        ['two_b', { v: 2 }],
        ['list', { v: [1] }],
        ['minus', { v: -1 }],
        ['a', { v: 'a' }],
        ['object', { v: { x: 1 } }],
        ['two_c', { v: 2 }],
        ['ref', { v: { $ref: 'NOSUCH01' } }],
        ['big', { v: 1e21 }],
        ['bigText', { v: 'B' }],
      ];
      const ASCENDING = ['absent', 'nul', 'no', 'yes', 'minus', 'two_a', 'two_b', 'two_c', 'big', 'bigText', 'a', 'b', 'list', 'object', 'ref'];
      const DESCENDING = ['list', 'object', 'ref', 'b', 'a', 'bigText', 'big', 'two_a', 'two_b', 'two_c', 'minus', 'yes', 'no', 'absent', 'nul'];

      async function ranked() {
        const store = await fresh();
        const keyOf = new Map<string, string>();
        for (const [key, fields] of VALUES) keyOf.set((await store.put({ className: 'Ranked', fields })).id, key);
        const keys = async (query: Omit<FindQuery, 'className'>) => {
          const found = await store.find({ className: 'Ranked', ...query });
          return { keys: found.objects.map((object) => keyOf.get(object.id)), total: found.total };
        };
        return { store, keys };
      }

      it('ranks absent and null, false, true, numbers, strings, then everything else; ties keep creation order', async () => {
        const { keys } = await ranked();
        expect(await keys({ orderBy: { field: 'v' } })).toEqual({ keys: ASCENDING, total: VALUES.length });
      });

      it('descending reverses the value order only: ties keep creation order', async () => {
        const { keys } = await ranked();
        expect(await keys({ orderBy: { field: 'v', descending: true } })).toEqual({ keys: DESCENDING, total: VALUES.length });
      });

      it('reverse reverses the whole order, ties included', async () => {
        const { keys } = await ranked();
        expect((await keys({ orderBy: { field: 'v' }, reverse: true })).keys).toEqual([...ASCENDING].reverse());
        expect((await keys({ orderBy: { field: 'v', descending: true }, reverse: true })).keys).toEqual([...DESCENDING].reverse());
      });

      it('orders by a field no object has in creation order', async () => {
        const { keys } = await ranked();
        expect((await keys({ orderBy: { field: 'nowhere', descending: true } })).keys).toEqual(VALUES.map(([key]) => key));
      });

      it('pages an ordered listing', async () => {
        const { keys } = await ranked();
        expect(await keys({ orderBy: { field: 'v' }, offset: 4, limit: 5 })).toEqual({ keys: ASCENDING.slice(4, 9), total: VALUES.length });
        expect(await keys({ orderBy: { field: 'v', descending: true }, offset: 13, limit: 5 })).toEqual({ keys: DESCENDING.slice(13), total: VALUES.length });
        expect(await keys({ orderBy: { field: 'v' }, reverse: true, offset: 2, limit: 3 })).toEqual({ keys: [...ASCENDING].reverse().slice(2, 5), total: VALUES.length });
        expect(await keys({ orderBy: { field: 'v' }, limit: 0 })).toEqual({ keys: [], total: VALUES.length });
      });

      it('orders strings by code point, not by UTF-16 code unit: an astral character sorts after U+FFFF', async () => {
        const store = await fresh();
        const names = ['\uFFFF', '😀', 'z', 'Z', 'é', 'a', '\uFFFFa', '😀a', '\uE000', '\uD7FF'];
        const byName = new Map<string, string>();
        for (const Name of names) byName.set((await store.put({ className: 'Text', fields: { Name } })).id, Name);
        const ordered = async (query: Partial<FindQuery>) =>
          (await store.find({ className: 'Text', ...query })).objects.map((object) => byName.get(object.id));
        const codePointOrder = ['Z', 'a', 'z', 'é', '\uD7FF', '\uE000', '\uFFFF', '\uFFFFa', '😀', '😀a'];
        expect(await ordered({ orderBy: { field: 'Name' } })).toEqual(codePointOrder);
        expect(await ordered({ orderBy: { field: 'Name', descending: true } })).toEqual([...codePointOrder].reverse());
        expect(await ordered({ where: { Name: { $gt: '\uFFFF' } } })).toEqual(['😀', '\uFFFFa', '😀a']);
        expect(await ordered({ where: { Name: { $lt: '😀' } } })).toEqual(['\uFFFF', 'z', 'Z', 'é', 'a', '\uFFFFa', '\uE000', '\uD7FF']);
        expect(await ordered({ where: { Name: { $gte: '\uE000', $lte: '\uFFFFa' } } })).toEqual(['\uFFFF', '\uFFFFa', '\uE000']);
        expect(await ordered({ where: { Name: { $prefix: '😀' } } })).toEqual(['😀', '😀a']);
      });

      it('pages over a filtered and ordered listing, with the total of the filter', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 60, (i) => ({ Group: i % 4, Score: (i * 7) % 10, Name: `item ${i}` }));
        const inGroup = items.filter((item) => item.fields.Group === 1);
        // stable sort of the creation order: ties keep it
        const byScoreDesc = [...inGroup].sort((x, y) => (y.fields.Score as number) - (x.fields.Score as number));
        const query: FindQuery = { className: 'Item', where: { Group: 1 }, orderBy: { field: 'Score', descending: true } };
        expect(await store.find({ ...query, offset: 3, limit: 4 })).toEqual({ objects: byScoreDesc.slice(3, 7), total: 15 });
        expect(await store.find({ ...query, offset: 12, limit: 4 })).toEqual({ objects: byScoreDesc.slice(12), total: 15 });
        expect(await store.find({ ...query, offset: 0, limit: 5, reverse: true })).toEqual({ objects: [...byScoreDesc].reverse().slice(0, 5), total: 15 });
        const ranged: FindQuery = { className: 'Item', where: { Score: { $gte: 3, $lt: 8 }, Group: { $in: [0, 2] } }, orderBy: { field: 'Name' } };
        const expected = items
          .filter((item) => [0, 2].includes(item.fields.Group as number) && (item.fields.Score as number) >= 3 && (item.fields.Score as number) < 8)
          .sort((x, y) => ((x.fields.Name as string) < (y.fields.Name as string) ? -1 : 1));
        expect(await store.find({ ...ranged, offset: 2, limit: 3 })).toEqual({ objects: expected.slice(2, 5), total: expected.length });
      });

      it('a declared index (ensureIndex, optional) changes no answer: equality, $in, orders and pages, following writes', async () => {
        const { store, keys } = await ranked();
        if (!store.ensureIndex) return;
        await store.put({ className: 'Other', fields: { v: 2 } });
        const queries: Array<Omit<FindQuery, 'className'>> = [
          ...[2, 'b', null, true, false, -1, 1e21, 'B'].map((v) => ({ where: { v } })),
          { where: { v: { $in: [2, 'a', true] } } },
          { where: { v: 2 }, orderBy: { field: 'v', descending: true }, offset: 1, limit: 1 },
          { orderBy: { field: 'v' } },
          { orderBy: { field: 'v', descending: true }, offset: 3, limit: 6 },
          { orderBy: { field: 'v' }, reverse: true, offset: 2, limit: 3 },
        ];
        const before = await Promise.all(queries.map(keys));
        await store.ensureIndex('Ranked', 'v');
        expect(await Promise.all(queries.map(keys))).toEqual(before);
        expect((await keys({ where: { v: 2 } })).keys).toEqual(['two_a', 'two_b', 'two_c']);
        const later = await store.put({ className: 'Ranked', fields: { v: 2 } });
        await store.put({ id: (await store.find({ className: 'Ranked', where: { v: 'a' } })).objects[0]!.id, className: 'Ranked', fields: { v: 3 } });
        const found = await store.find({ className: 'Ranked', where: { v: { $in: [2, 3] } }, orderBy: { field: 'v', descending: true } });
        expect(found.objects.map((object) => object.fields.v)).toEqual([3, 2, 2, 2, 2]);
        expect(found.objects[4]!.id).toBe(later.id);
      });

      it('a replaced object keeps its place among ties', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 5, () => ({ Rank: 1 }));
        await store.put({ id: items[1]!.id, className: 'Item', fields: { Rank: 1, changed: true } });
        await store.put({ id: items[3]!.id, className: 'Item', fields: { Rank: 0 } });
        const found = await store.find({ className: 'Item', orderBy: { field: 'Rank' } });
        expect(byIds(found.objects)).toEqual(byIds([items[3]!, items[0]!, items[1]!, items[2]!, items[4]!]));
      });
    });

    describe('conditional writes (ifStoreTime)', () => {
      const conflict = (promise: Promise<unknown>) => expect(promise).rejects.toBeInstanceOf(StoreConflictError);

      it('writes when the stored object has the expected store time', async () => {
        const store = await fresh();
        const first = await store.put({ className: 'Doc', fields: { v: 1 } });
        const second = await store.put({ id: first.id, className: 'Doc', fields: { v: 2 }, ifStoreTime: first.storeTime });
        expect(second).toMatchObject({ id: first.id, fields: { v: 2 } });
        expect(second.storeTime).toBeGreaterThan(first.storeTime);
        const third = await store.put({ id: first.id, className: 'Doc', fields: { v: 3 }, ifStoreTime: second.storeTime });
        expect(await store.get(first.id)).toEqual(third);
      });

      it('refuses another store time and writes nothing', async () => {
        const store = await fresh();
        const first = await store.put({ className: 'Doc', fields: { v: 1 } });
        const second = await store.put({ id: first.id, className: 'Doc', fields: { v: 2 } });
        await conflict(store.put({ id: first.id, className: 'Doc', fields: { v: 3 }, ifStoreTime: first.storeTime }));
        await conflict(store.put({ id: first.id, className: 'Doc', fields: { v: 3 }, ifStoreTime: second.storeTime + 1000 }));
        await conflict(store.put({ id: first.id, className: 'Doc', fields: { v: 3 }, ifStoreTime: null }));
        expect(await store.get(first.id)).toEqual(second);
        expect(await store.find({ className: 'Doc', where: { v: 3 } })).toEqual({ objects: [], total: 0 });
      });

      it('null creates only when no object has the id', async () => {
        const store = await fresh();
        const created = await store.put({ id: 'ONLYNEW1', className: 'Doc', fields: { v: 1 }, ifStoreTime: null });
        expect(await store.get('ONLYNEW1')).toEqual(created);
        await conflict(store.put({ id: 'ONLYNEW1', className: 'Doc', fields: { v: 2 }, ifStoreTime: null }));
        await conflict(store.put({ id: 'ONLYNEW1', className: 'Other', fields: { v: 2 }, ifStoreTime: null }));
        expect(await store.get('ONLYNEW1')).toEqual(created);
        const fresh1 = await store.put({ className: 'Doc', fields: { v: 3 }, ifStoreTime: null });
        expect(await store.get(fresh1.id)).toEqual(fresh1);
      });

      it('refuses a store time for a missing or deleted object and creates nothing', async () => {
        const store = await fresh();
        const gone = await store.put({ className: 'Doc', fields: { v: 1 } });
        await store.delete(gone.id);
        await conflict(store.put({ id: gone.id, className: 'Doc', fields: { v: 2 }, ifStoreTime: gone.storeTime }));
        await conflict(store.put({ id: 'NOSUCH01', className: 'Doc', fields: { v: 2 }, ifStoreTime: gone.storeTime }));
        await conflict(store.put({ className: 'Doc', fields: { v: 2 }, ifStoreTime: gone.storeTime }));
        expect(await store.get(gone.id)).toBeUndefined();
        expect(await store.get('NOSUCH01')).toBeUndefined();
        expect(await store.count('Doc')).toBe(0);
      });

      it('of 50 parallel writes expecting the same store time exactly one wins', async () => {
        const store = await fresh();
        const original = await store.put({ className: 'Doc', fields: { writer: -1 } });
        const results = await Promise.allSettled(
          Array.from({ length: 50 }, (_, writer) => store.put({ id: original.id, className: 'Doc', fields: { writer }, ifStoreTime: original.storeTime })),
        );
        const won = results.filter((result) => result.status === 'fulfilled');
        const lost = results.filter((result) => result.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost.every((result) => result.reason instanceof StoreConflictError)).toBe(true);
        const winner = (won[0] as PromiseFulfilledResult<StoredObject>).value;
        expect(await store.get(original.id)).toEqual(winner);
        expect(winner.storeTime).toBeGreaterThan(original.storeTime);
      });

      it('of 20 parallel creates of one id with null exactly one wins', async () => {
        const store = await fresh();
        const results = await Promise.allSettled(
          Array.from({ length: 20 }, (_, writer) => store.put({ id: 'RACE0001', className: 'Doc', fields: { writer }, ifStoreTime: null })),
        );
        expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
        expect(await store.count('Doc')).toBe(1);
      });

      it('a replaced object keeps its place in creation order', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 4);
        const replaced = await store.put({ id: items[1]!.id, className: 'Item', fields: { v: 'new' }, ifStoreTime: items[1]!.storeTime });
        expect((await store.find({ className: 'Item' })).objects).toEqual([items[0], replaced, items[2], items[3]]);
      });
    });

    describe('a conditional write into another class (the recycle bin, PROTOCOL.md 6.3)', () => {
      it('moves an object into another class and back, each in one conditional put; a stale version moves nothing', async () => {
        const store = await fresh();
        const [item, other] = await fill(store, 'Item', 2);
        const moved = await store.put({ id: item!.id, className: 'Binned', fields: { was: 'Item' }, ifStoreTime: item!.storeTime });
        expect(moved.storeTime).toBeGreaterThan(item!.storeTime);
        expect(await store.get(item!.id)).toEqual(moved);
        expect(byIds((await store.find({ className: 'Item' })).objects)).toEqual([other!.id]);
        expect(await store.count('Binned')).toBe(1);
        // the version read before the move no longer matches: neither a second move nor a write of the old class happens
        await expect(store.put({ id: item!.id, className: 'Binned', fields: { was: 'again' }, ifStoreTime: item!.storeTime })).rejects.toBeInstanceOf(StoreConflictError);
        await expect(store.put({ id: item!.id, className: 'Item', fields: { i: 'stale' }, ifStoreTime: item!.storeTime })).rejects.toBeInstanceOf(StoreConflictError);
        await expect(store.put({ id: item!.id, className: 'Item', fields: { i: 'new' }, ifStoreTime: null })).rejects.toBeInstanceOf(StoreConflictError);
        const back = await store.put({ id: item!.id, className: 'Item', fields: { i: 0 }, ifStoreTime: moved.storeTime });
        expect(back.storeTime).toBeGreaterThan(moved.storeTime);
        expect(await store.get(item!.id)).toEqual(back);
        expect(await store.count('Binned')).toBe(0);
        expect((await store.find({ className: 'Item' })).objects.map((object) => object.fields.i).sort()).toEqual([0, 1]);
        // of two writers moving the same version, exactly one wins
        const raced = await Promise.allSettled([
          store.put({ id: item!.id, className: 'Binned', fields: { by: 1 }, ifStoreTime: back.storeTime }),
          store.put({ id: item!.id, className: 'Item', fields: { by: 2 }, ifStoreTime: back.storeTime }),
        ]);
        expect(raced.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
        expect((await store.count('Binned')) + (await store.count('Item'))).toBe(2);
      });
    });

    recycleBinContract(harness, { afterEach, describe, expect, it });
    modelEdgesContract(harness, { afterEach, describe, expect, it });

    describe('exports and imports (classNames, storeTime)', () => {
      it('classNames lists exactly the classes that hold objects', async ({ skip }) => {
        const store = await fresh();
        if (!store.classNames) return skip('optional classNames missing: without it GET /v1/classes, the studio and referencedBy miss the classes nobody declared or named in an access rule, and odbrest export refuses');
        expect(await store.classNames()).toEqual([]);
        const [only] = await fill(store, 'Lonely', 1);
        await fill(store, 'Item', 2);
        expect((await store.classNames()).sort()).toEqual(['Item', 'Lonely']);
        await store.delete(only!.id);
        expect(await store.classNames()).toEqual(['Item']);
      });

      it('a new object given a storeTime keeps it exactly; a storeTime without ifStoreTime: null is refused', async () => {
        const store = await fresh({ now: frozenClock });
        const kept = Date.UTC(2020, 4, 1, 12, 0, 0);
        const imported = await store.put({ id: 'IMPORT01', className: 'Doc', fields: { v: 1 }, ifStoreTime: null, importedStoreTime: kept });
        expect(imported.storeTime).toBe(kept);
        expect((await store.get('IMPORT01'))?.storeTime).toBe(kept);
        await expect(store.put({ id: 'IMPORT01', className: 'Doc', fields: { v: 2 }, ifStoreTime: null, importedStoreTime: kept })).rejects.toBeInstanceOf(StoreConflictError);
        await expect(store.put({ id: 'IMPORT02', className: 'Doc', fields: {}, importedStoreTime: kept })).rejects.toBeInstanceOf(StoreValueError);
        await expect(store.put({ id: 'IMPORT03', className: 'Doc', fields: {}, ifStoreTime: null, importedStoreTime: kept + 1 })).rejects.toBeInstanceOf(StoreValueError);
        expect(await store.getMany(['IMPORT02', 'IMPORT03'])).toEqual([]);
        // the next write of it moves on from the kept time as from any other
        const next = await store.put({ id: 'IMPORT01', className: 'Doc', fields: { v: 3 } });
        expect(next.storeTime).toBeGreaterThan(kept);
      });
    });

    describe('store times', () => {
      it('are whole seconds and strictly increase per object, also for writes within one second', async () => {
        const store = await fresh({ now: frozenClock });
        const first = await store.put({ className: 'Doc', fields: { v: 0 } });
        const times = [first.storeTime];
        for (let v = 1; v <= 4; v++) times.push((await store.put({ id: first.id, className: 'Doc', fields: { v } })).storeTime);
        let last = (await store.get(first.id))!;
        for (let v = 5; v <= 7; v++) {
          last = await store.put({ id: first.id, className: 'Doc', fields: { v }, ifStoreTime: last.storeTime });
          times.push(last.storeTime);
        }
        for (const time of times) expect(time % 1000).toBe(0);
        for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThan(times[i - 1]!);
        expect((await store.get(first.id))!.storeTime).toBe(times.at(-1));
        const other = await store.put({ className: 'Doc', fields: {} });
        expect(other.storeTime % 1000).toBe(0);
      });

      it('strictly increase for parallel writes of one object', async () => {
        const store = await fresh({ now: frozenClock });
        const first = await store.put({ className: 'Doc', fields: { v: 0 } });
        const written = await Promise.all(Array.from({ length: 10 }, (_, v) => store.put({ id: first.id, className: 'Doc', fields: { v } })));
        const times = written.map((object) => object.storeTime);
        expect(new Set(times).size).toBe(10);
        for (const time of times) expect(time).toBeGreaterThan(first.storeTime);
        expect((await store.get(first.id))!.storeTime).toBe(Math.max(...times));
      });

      if (harness.reopen) {
        const reopen = harness.reopen;
        it('keep increasing after a close and reopen', async () => {
          const store = await fresh({ now: frozenClock });
          let last = await store.put({ className: 'Doc', fields: { v: 0 } });
          for (let v = 1; v <= 3; v++) last = await store.put({ id: last.id, className: 'Doc', fields: { v } });
          open.splice(open.indexOf(store), 1);
          const again = await reopen(store);
          open.push(again);
          expect(await again.get(last.id)).toEqual(last);
          const next = await again.put({ id: last.id, className: 'Doc', fields: { v: 4 }, ifStoreTime: last.storeTime });
          expect(next.storeTime).toBeGreaterThan(last.storeTime);
          expect(next.storeTime % 1000).toBe(0);
        });
      }
    });

    it('takes concurrent writes of different objects without losing any', async () => {
      const store = await fresh();
      const seeded = await fill(store, 'Item', 20);
      await Promise.all([
        ...seeded.slice(0, 10).map((object) => store.put({ id: object.id, className: 'Item', fields: { updated: true } })),
        ...seeded.slice(10).map((object) => store.delete(object.id)),
        ...Array.from({ length: 30 }, (_, i) => store.put({ className: 'Item', fields: { added: i } })),
      ]);
      const all = (await store.find({ className: 'Item' })).objects;
      expect(all).toHaveLength(40);
      expect(all.slice(0, 10).map((object) => object.fields)).toEqual(Array.from({ length: 10 }, () => ({ updated: true })));
      expect(all.slice(10).map((object) => object.fields.added).sort((x, y) => Number(x) - Number(y))).toEqual(
        Array.from({ length: 30 }, (_, i) => i),
      );
    });

    if (harness.reopen) {
      const reopen = harness.reopen;
      it('keeps everything across a close and reopen', async () => {
        const store = await fresh();
        const items = await fill(store, 'Item', 50, (i) => ({ i, Name: `item ${i}`, Tag: i % 5 === 0 ? 'five' : 'other' }));
        await store.put({ id: items[3]!.id, className: 'Item', fields: { i: 3, replaced: true } });
        await store.delete(items[4]!.id);
        await store.put({ id: items[6]!.id, className: 'Moved', fields: { moved: 'ü😀' } });
        const before = await Promise.all(['Item', 'Moved'].map((className) => store.find({ className })));
        open.splice(open.indexOf(store), 1);
        const again = await reopen(store);
        open.push(again);
        const after = await Promise.all(['Item', 'Moved'].map((className) => again.find({ className })));
        expect(after).toEqual(before);
        const fives = before[0]!.objects.filter((object) => object.fields.Tag === 'five');
        expect(fives).toHaveLength(10);
        expect(await again.find({ className: 'Item', where: { Tag: 'five' } })).toEqual({ objects: fives, total: 10 });
        const next = await again.put({ className: 'Item', fields: { afterReopen: true } });
        expect((await again.find({ className: 'Item', reverse: true, limit: 1 })).objects).toEqual([next]);
      });
    }
  });
}
