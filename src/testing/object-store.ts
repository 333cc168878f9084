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
import type { Fields, ObjectStore, StoredObject } from '../../src/storage/types.js';

export interface ObjectStoreHarness {
  /** A new, empty store. */
  create(): Promise<ObjectStore>;
  /** Closes `store` and opens the same data again (durable stores only). */
  reopen?(store: ObjectStore): Promise<ObjectStore>;
}

const byIds = (objects: StoredObject[]) => objects.map((object) => object.id);

export function objectStoreContract(name: string, harness: ObjectStoreHarness, { afterEach, describe, expect, it }: TestApi): void {
  describe(`ObjectStore contract: ${name}`, () => {
    const open: ObjectStore[] = [];
    const fresh = async () => {
      const store = await harness.create();
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
