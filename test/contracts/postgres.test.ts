import { afterAll, describe } from 'vitest';
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
});
