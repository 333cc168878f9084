/**
 * Reference paths in query text (PROTOCOL.md 6.2) and the access rules (6.4): a path answers through
 * the referenced objects, alike on the memory and the PostgreSQL store, and a referenced object the
 * session may not read never matches, so no filter reveals its fields.
 */
import { afterAll, describe, expect, test } from 'vitest';
import type { ObjectStore, ServiceOptions } from '../../src/index.js';
import { PostgresObjectStore } from '../../stores/postgres.js';
import { demoAccess } from '../../examples/demo-access.mjs';
import { call, demoService, login } from '../helpers.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from '../support/servers.js';

const postgres = await serverAvailable('PostgreSQL', 'reference paths on PostgreSQL');
const schema = `odbrest_paths_${RUN_ID}`;
let tables = 0;
const opened: ObjectStore[] = [];
afterAll(async () => {
  for (const store of opened) await store.close?.();
  if (postgres) await dropSchema(schema);
});

const stores: [string, () => ObjectStore | undefined][] = [
  ['memory', () => undefined],
  ...(postgres ? [['PostgreSQL', () => {
    const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: `objects_${tables++}` });
    opened.push(store);
    return store;
  }] as [string, () => ObjectStore]] : []),
];

async function lister(options: ServiceOptions, store: ObjectStore | undefined, user: 'alice' | 'bob') {
  const service = await demoService({ ...options, ...(store ? { store } : {}) });
  const sessionId = await login(service, user);
  return async (className: string, text: string) => {
    const answer = await call(service, 'GET', `/v1/objects/${className}?perPage=1000&query=${encodeURIComponent(JSON.stringify({ queryString: text }))}`, { headers: { sessionId } });
    expect(answer.status, `${text}: ${answer.text.slice(0, 200)}`).toBe(200);
    const elements = answer.body.data['~Elements'] as { '~ObjectID': string }[];
    expect(answer.body.data['~Count']).toBe(elements.length);
    return elements.map((o) => o['~ObjectID']);
  };
}

describe.each(stores)('reference paths on the %s store', (_, store) => {
  test('through a reference and a set, "is null" through a path, up to three references', async () => {
    const list = await lister({ access: { rules: demoAccess.rules } }, store(), 'alice');
    const all = await list('Customer', 'Number > 0');
    const alices = await list('Customer', 'AccountManager = EMP00001');
    expect(alices.length).toBeGreaterThan(0);
    expect(await list('Customer', 'AccountManager.Name1 = "Alice"')).toEqual(alices);
    expect(await list('Customer', 'AccountManager.Name1 like "al*" and AccountManager.Name3 is not null')).toEqual(alices);
    expect(await list('Customer', 'not AccountManager.Name1 = Alice')).toEqual(all.filter((id) => !alices.includes(id)));
    const managed = await list('Customer', 'AccountManager is not null');
    expect(await list('Customer', 'AccountManager.Nothing is null')).toEqual(managed);
    expect(await list('Customer', 'AccountManager.Mitarbeiteransprechpartner.Name = carol')).toEqual(alices);
    expect(await list('Customer', 'AccountManager.Mitarbeiteransprechpartner.Bild.~ObjectID = IMG00003')).toEqual(alices);
    expect(await list('User', 'Groups.Name = sales')).toEqual(['USR00001']);
  });

  test('a referenced object of a class the session may not read never matches (6.4), not even negated', async () => {
    const access = { rules: { ...demoAccess.rules, Employee: { read: ['admins'] } } };
    const alice = await lister({ access }, store(), 'alice');
    const bob = await lister({ access }, store(), 'bob'); // support: reads customers, not employees
    const all = await bob('Customer', 'Number > 0');
    const alices = await alice('Customer', 'AccountManager.Name1 = "Alice"');
    expect(alices.length).toBeGreaterThan(0);
    expect(await bob('Customer', 'AccountManager.Name1 = "Alice"')).toEqual([]);
    expect(await bob('Customer', 'AccountManager.Name1 like "*"')).toEqual([]);
    expect(await bob('Customer', 'AccountManager.Name1 is null')).toEqual([]);
    expect(await bob('Customer', 'not AccountManager.Name1 = "Alice"')).toEqual(all);
    // the reference itself is the customer's own field, readable as before
    expect(await bob('Customer', 'AccountManager = EMP00001')).toEqual(alices);
  });

  test("where the host's authorize decides per object, a path reaches only the objects it lets the session read", async () => {
    // demoAccess: a user reads only the contact person its own employee names (alice: carol, bob: dan)
    const alice = await lister({ access: demoAccess }, store(), 'alice');
    const bob = await lister({ access: demoAccess }, store(), 'bob');
    const carols = await alice('Employee', 'Mitarbeiteransprechpartner.Name = carol');
    expect(carols).toContain('EMP00001');
    expect(await bob('Employee', 'Mitarbeiteransprechpartner.Name = carol')).toEqual([]);
    expect(await bob('Employee', 'Mitarbeiteransprechpartner.Name like "*"')).toEqual(await bob('Employee', 'Mitarbeiteransprechpartner.Name = dan'));
    expect(await alice('Customer', 'AccountManager.Mitarbeiteransprechpartner.Name = carol')).toEqual(await alice('Customer', 'AccountManager = EMP00001'));
    expect(await bob('Customer', 'AccountManager.Mitarbeiteransprechpartner.Name = carol')).toEqual([]);
  });
});
