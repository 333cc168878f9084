import { afterAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/index.js';
import { PostgresObjectStore } from '../../stores/postgres.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from '../support/servers.js';
import { objectStoreContract } from './object-store.js';

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
  afterAll(() => dropSchema(schema));
  objectStoreContract('PostgresObjectStore', {
    create: async () => open(`objects_${tables++}`),
    reopen: async (store) => {
      await store.close?.();
      return open(tableOf.get(store)!);
    },
  });

  it('refuses a field value with U+0000 as a 400 ApiError, and stores the text "\\u0000"', async () => {
    const store = open(`objects_${tables++}`);
    const refused = await store.put({ className: 'Note', fields: { Text: 'a\u0000b' } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: '400', status: 400, message: 'a field value contains the character U+0000, which PostgreSQL cannot store' });
    const nested = await store.put({ className: 'Note', fields: { List: [{ deep: '\u0000' }] } }).catch((error: unknown) => error);
    expect(nested).toBeInstanceOf(ApiError);
    const literal = await store.put({ className: 'Note', fields: { Text: 'back\\u0000slash' } });
    expect((await store.get(literal.id))?.fields.Text).toBe('back\\u0000slash');
    expect(await store.count('Note')).toBe(1);
    await store.close();
  });
});
