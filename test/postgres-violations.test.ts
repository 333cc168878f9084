/**
 * A run-time declaration's check of stored objects (PROTOCOL.md 6.12) on PostgreSQL, in one SQL
 * statement (`violations`), answers exactly as the write check in process does on the memory store:
 * the same 409 counts and example ids for every type, limit and tricky value.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryObjectStore, type FieldValue, type ObjectStore } from '../src/index.js';
import { PostgresObjectStore } from '../stores/postgres.js';
import { call, demoService, login } from './helpers.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from './support/servers.js';

const available = await serverAvailable('PostgreSQL', 'the PostgreSQL violations test');
const schema = `odbrest_violations_${RUN_ID}`;

const VALUES: Array<FieldValue | undefined> = [
  undefined, null, 'abc', 'abcd', '', '😀😀', 'é', 'B', 3, 3.5, -1, 0, 1000, 1e21, true, false,
  { $ref: 'X1' }, { $ref: 'X1', extra: 1 }, { $ref: 5 }, { $set: ['a', 'b'] }, { $set: ['a', 1] }, { $set: [] }, [1, 2], { a: 1 },
  '2026-02-30', '2026-13-01', '2026-00-10', '2026-01-00', '2026-01-01T24:00', '2026-01-01T24:00:01', '2026-01-01T23:60', '2026-01-01T10:00+0130',
  '2026-01-01T10:00+24:00', '2026-01-01T10:00-23:59', '20260101T100000+01:00', '20260101T100000-01:00', '2026-01-01T10:00:00.123456789Z',
  '2026-01-01T24:00:00.000', '2026-01-01T24:00:00.5', '2026-1-01', '2026-01-01T10:00:61Z', '2026-01-01',
];

/** Field declarations, each checked against every value above. */
const DECLARATIONS: Array<Record<string, unknown>> = [
  { Type: 'string' }, { Type: 'string', Required: true }, { Type: 'string', MaxLength: 3 }, { Type: 'string', MaxLength: 1 }, { Type: 'string', Enum: ['abc', 'B'] },
  { Type: 'number' }, { Type: 'number', Min: 0, Max: 100 }, { Type: 'number', Enum: [3, 3.5] }, { Type: 'integer' }, { Type: 'integer', Min: 1, Required: true }, { Type: 'integer', Enum: [0, 1000] },
  { Type: 'boolean' }, { Type: 'date' }, { Type: 'date', Required: true }, { Type: 'json', Required: true }, { Type: 'json' },
  { Type: 'ref', Class: 'Customer' }, { Type: 'set', Class: 'Customer' }, { Type: 'file' },
];

async function fill(store: ObjectStore): Promise<void> {
  for (const [i, value] of VALUES.entries()) {
    const fields: Record<string, FieldValue> = { Name: `probe ${i}` };
    if (value !== undefined) fields.V = value;
    if (i % 7 === 0) fields._internal = 'never checked';
    if (i % 5 === 0) fields.Extra = i;
    await store.put({ id: `P${String(i).padStart(3, '0')}`, className: 'Probe', fields });
  }
}

describe.runIf(available)('run-time declarations on PostgreSQL', () => {
  const pgStore = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
  afterAll(async () => {
    await pgStore.close();
    await dropSchema(schema);
  });

  it('counts the same violations and names the same first ids as the in-process check', { timeout: 60_000 }, async () => {
    const memory = new MemoryObjectStore();
    await fill(memory);
    await fill(pgStore);
    const services = await Promise.all([memory, pgStore].map(async (store) => {
      const service = await demoService({ store, users: { admins: 'admins' } });
      const alice = await login(service, 'alice');
      return (json: unknown) => call(service, 'PUT', '/v1/model/classes/Probe', { headers: { sessionId: alice }, json });
    }));
    const bodies = [
      ...DECLARATIONS.map((V) => ({ Fields: { Name: { Type: 'string' }, V } })),
      { Fields: { Name: { Type: 'string' }, V: { Type: 'json' } }, Strict: true },
      { Fields: { Name: { Type: 'string' }, V: { Type: 'json' }, Extra: { Type: 'integer' } }, Strict: true },
      // several fields checked at once, an unchecked json one among them: each clause reads its own field
      { Fields: { Name: { Type: 'string', Required: true, MaxLength: 7 }, V: { Type: 'date' }, Extra: { Type: 'integer', Max: 20 } } },
      { Fields: { Extra: { Type: 'number', Min: 10 }, Note: { Type: 'json' }, V: { Type: 'string', MaxLength: 3 }, Name: { Type: 'string', Enum: ['probe 1', 'probe 2'] } } },
      { Fields: { V: { Type: 'boolean' }, Extra: { Type: 'integer', Enum: [0, 5, 10] }, Name: { Type: 'string', Required: true } } },
    ];
    let refused = 0;
    for (const body of bodies) {
      const [inProcess, onPostgres] = [await services[0]!(body), await services[1]!(body)];
      expect({ body, status: onPostgres.status, data: onPostgres.body.data.Violations === undefined ? undefined : onPostgres.body.data }).toEqual({ body, status: inProcess.status, data: inProcess.body.data.Violations === undefined ? undefined : inProcess.body.data });
      if (inProcess.status === 409) refused++;
    }
    expect(refused).toBeGreaterThan(15); // the values do break most declarations
  });
});
