import { afterAll, describe, expect, it } from 'vitest';
import { StoreConflictError, StoreValueError } from '../../src/index.js';
import { PostgresObjectStore } from '../../stores/postgres.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from '../support/servers.js';
import { objectStoreContract } from './suites.js';

const available = await serverAvailable('PostgreSQL', 'the ObjectStore contract on PostgresObjectStore');
const schema = `odbrest_test_${RUN_ID}`; // this run's own schema, dropped afterwards
let tables = 0;
const openedWith = new WeakMap<object, { table: string; now?: () => number; indexedFields?: string[] }>();
/** The fields the contract filters and orders by (plain identifiers), for the run with indexed fields. */
const CONTRACT_FIELDS = ['Color', 'Size', 'Even', 'v', 'Name', 'x', 'Group', 'Score', 'Rank', 'Tag'];

function open(table: string, now?: () => number, indexedFields?: string[]) {
  const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table, now, indexedFields });
  openedWith.set(store, { table, now, indexedFields });
  return store;
}

describe.runIf(available)('PostgresObjectStore', () => {
  const freshSchemas: string[] = [];
  afterAll(async () => {
    for (const name of [schema, ...freshSchemas]) await dropSchema(name);
  });
  const reopen = async (store: { close?: () => Promise<void> }) => {
    await store.close?.();
    const { table, now, indexedFields } = openedWith.get(store)!;
    return open(table, now, indexedFields);
  };
  objectStoreContract('PostgresObjectStore', { create: async (options) => open(`objects_${tables++}`, options?.now), reopen });
  // equality, $in and ordering on the generated columns answer exactly as on the jsonb containment
  objectStoreContract('PostgresObjectStore with indexedFields', {
    create: async (options) => open(`objects_${tables++}`, options?.now, CONTRACT_FIELDS),
    reopen,
  });

  it('refuses a field value with U+0000 with a StoreValueError (answered 400), and stores the text "\\u0000"', async () => {
    const store = open(`objects_${tables++}`);
    const refused = await store.put({ className: 'Note', fields: { Text: 'a\u0000b' } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreValueError);
    expect(refused).toMatchObject({ message: 'a field value contains the character U+0000, which PostgreSQL cannot store' });
    const nested = await store.put({ className: 'Note', fields: { List: [{ deep: '\u0000' }] } }).catch((error: unknown) => error);
    expect(nested).toBeInstanceOf(StoreValueError);
    const literal = await store.put({ className: 'Note', fields: { Text: 'back\\u0000slash' } });
    expect((await store.get(literal.id))?.fields.Text).toBe('back\\u0000slash');
    expect(await store.count('Note')).toBe(1);
    await store.close();
  });

  it('50 parallel conditional writes on one object from two stores (two pools): exactly one wins', async () => {
    const table = `objects_${tables++}`;
    const [a, b] = [open(table), open(table)];
    try {
      const first = await a.put({ className: 'Doc', fields: { v: 0 } });
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) => (i % 2 ? b : a).put({ id: first.id, className: 'Doc', fields: { v: i + 1 }, ifStoreTime: first.storeTime })),
      );
      const won = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      expect(won).toHaveLength(1);
      for (const result of results) if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(StoreConflictError);
      expect(won[0]!.storeTime).toBeGreaterThan(first.storeTime);
      expect(await b.get(first.id)).toEqual(won[0]);
      // and a create-only write (null) from both: one wins
      const created = await Promise.allSettled([a, b, a, b].map((store, i) => store.put({ id: 'NEWONE01', className: 'Doc', fields: { i }, ifStoreTime: null })));
      expect(created.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      expect(await a.count('Doc')).toBe(2);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('totals and deep pages stay exact when another store writes the same table', async () => {
    const table = `objects_${tables++}`;
    const [reader, writer] = [open(table), open(table)];
    try {
      const items = [];
      for (let i = 0; i < 12; i++) items.push(await writer.put({ className: 'Item', fields: { i, Even: i % 2 === 0 } }));
      const even = { className: 'Item', where: { Even: true } };
      const ids = async (query: object) => (await reader.find({ className: 'Item', ...query })).objects.map((object) => object.fields.i);
      // learn the totals and where pages start (each asked twice: the second answer uses what the first taught)
      for (let round = 0; round < 2; round++) {
        expect(await reader.count('Item', { Even: true })).toBe(6);
        expect(await ids({ offset: 4, limit: 3 })).toEqual([4, 5, 6]);
        expect(await ids({ offset: 7, limit: 3 })).toEqual([7, 8, 9]);
        expect(await ids({ where: { Even: true }, offset: 2, limit: 2 })).toEqual([4, 6]);
        expect(await ids({ offset: 3, limit: 2, reverse: true })).toEqual([8, 7]);
      }
      await writer.delete(items[0]!.id);
      await writer.put({ id: items[2]!.id, className: 'Item', fields: { i: 2, Even: false } });
      await writer.put({ className: 'Item', fields: { i: 12, Even: true } });
      expect(await reader.find({ ...even, limit: 0 })).toEqual({ objects: [], total: 5 });
      expect(await reader.count('Item')).toBe(12);
      expect(await ids({ offset: 4, limit: 3 })).toEqual([5, 6, 7]);
      expect(await ids({ offset: 7, limit: 3 })).toEqual([8, 9, 10]);
      expect(await ids({ where: { Even: true }, offset: 2, limit: 2 })).toEqual([8, 10]);
      expect(await ids({ offset: 3, limit: 2, reverse: true })).toEqual([9, 8]);
      await writer.put({ id: items[4]!.id, className: 'Moved', fields: { i: 4, Even: true } });
      expect(await reader.count('Item', { Even: true })).toBe(4);
      expect(await reader.count('Moved', { Even: true })).toBe(1);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it('a condition that is not valid (unknown operator, operand of the wrong type) matches nothing, as in the memory store', async () => {
    const store = open(`objects_${tables++}`);
    try {
      await store.put({ className: 'V', fields: { v: 1 } });
      const invalid = [{ $nope: 1 }, { $gt: true }, { $in: 'x' }, { $in: [[1]] }, { $prefix: 1 }, { $exists: 'yes' }, { $ne: { a: 1 } }, [1], { $gte: 0, $lt: null }];
      for (const condition of invalid) {
        expect(await store.find({ className: 'V', where: { v: condition } as never }), JSON.stringify(condition)).toEqual({ objects: [], total: 0 });
      }
      expect(await store.count('V', { v: {} })).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('two stores start together on one fresh schema and table: every first count and put succeeds', async () => {
    // Several rounds, each on a schema and table that do not exist yet, to give the creation race its chance.
    for (let round = 0; round < 5; round++) {
      const fresh = `${schema}_fresh_${round}`;
      freshSchemas.push(fresh);
      const stores = [0, 1].map(() => new PostgresObjectStore({ connectionString: DATABASE_URL, schema: fresh, table: 'objects' }));
      try {
        const results = await Promise.allSettled(
          stores.flatMap((store, n) => [
            store.count('Note'),
            store.put({ className: 'Note', fields: { From: n, Nr: 1 } }),
            store.count('Note'),
            store.put({ className: 'Note', fields: { From: n, Nr: 2 } }),
          ]),
        );
        expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
        for (const store of stores) expect(await store.count('Note')).toBe(4);
      } finally {
        for (const store of stores) await store.close();
      }
    }
  });
});
