/**
 * Optimistic concurrency (PROTOCOL.md 6.3) across instances: two services, each with its own
 * PostgreSQL connection pool on one table, get 50 PATCHes of one object holding the same `~StoreTime`
 * at once, over their `fetch`. Only PostgreSQL is shared, so only the store's conditional write can
 * make exactly one of them win.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAccess } from '../examples/demo-access.mjs';
import { createService, importObjects, type Service } from '../src/index.js';
import { PostgresObjectStore } from '../stores/postgres.js';
import { call, demoData, expectError, login } from './helpers.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from './support/servers.js';

const available = await serverAvailable('PostgreSQL', 'the two-instance concurrency test');
const schema = `odbrest_race_${RUN_ID}`;
const WRITERS = 50;

describe.runIf(available)('50 conditional writes of one object from two instances on one PostgreSQL table', () => {
  const stores: PostgresObjectStore[] = [];
  const instances: Array<{ service: Service; sessionId: string }> = [];

  beforeAll(async () => {
    const seeding = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
    await importObjects(seeding, demoData(), 1000);
    await seeding.close();
    for (let i = 0; i < 2; i++) {
      const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
      stores.push(store);
      const service = createService({ store, access: demoAccess, users: { passwordIterations: 1000 }, onError: () => undefined });
      await service.ready;
      instances.push({ service, sessionId: await login(service, 'alice') }); // alice is in sales: she updates customers
    }
  }, 60_000);

  afterAll(async () => {
    for (const store of stores) await store.close();
    await dropSchema(schema);
  });

  it('exactly one wins, 49 are 409, and the stored object is the winner’s', { timeout: 60_000 }, async () => {
    const patch = (i: number, json: unknown) => {
      const { service, sessionId } = instances[i % 2]!;
      return call(service, 'PATCH', '/v1/object/CUS00007', { headers: { sessionId }, json });
    };
    const read = (i: number) => call(instances[i]!.service, 'GET', '/v1/object/CUS00007', { headers: { sessionId: instances[i]!.sessionId } });
    const stamp = (await read(0)).body.data['~StoreTime'];

    const results = await Promise.all(Array.from({ length: WRITERS }, (_, i) => patch(i, { '~StoreTime': stamp, City: `City ${i}`, Writer: i })));

    const winners = results.filter((result) => result.status === 200);
    expect(winners).toHaveLength(1);
    const losers = results.filter((result) => result.status !== 200);
    expect(losers).toHaveLength(WRITERS - 1);
    for (const loser of losers) {
      expectError(loser, '409', 409);
      expect(loser.body.status.statusMessage).toBe('the object changed since it was read');
    }
    const won = winners[0]!.body.data;
    expect(won['~StoreTime'] > stamp).toBe(true);
    // both instances read back the winner's write, exactly as its answer showed it
    for (const i of [0, 1]) expect((await read(i)).body.data).toEqual(won);
    expect(won).toMatchObject({ '~ObjectID': 'CUS00007', City: `City ${won.Writer}`, Name: expect.any(String) });
  });
});
