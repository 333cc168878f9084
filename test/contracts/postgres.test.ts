import { afterAll, describe, expect, it } from 'vitest';
import { StoreValueError } from '../../src/index.js';
import { PostgresObjectStore } from '../../stores/postgres.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from '../support/servers.js';
import { objectStoreContract } from './suites.js';

const available = await serverAvailable('PostgreSQL', 'the ObjectStore contract on PostgresObjectStore');
const schema = `odbrest_test_${RUN_ID}`; // this run's own schema, dropped afterwards
let tables = 0;
const tableOf = new WeakMap<object, string>();

function open(table: string) {
  const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table });
  tableOf.set(store, table);
  return store;
}

describe.runIf(available)('PostgresObjectStore', () => {
  const freshSchemas: string[] = [];
  afterAll(async () => {
    for (const name of [schema, ...freshSchemas]) await dropSchema(name);
  });
  objectStoreContract('PostgresObjectStore', {
    create: async () => open(`objects_${tables++}`),
    reopen: async (store) => {
      await store.close?.();
      return open(tableOf.get(store)!);
    },
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
