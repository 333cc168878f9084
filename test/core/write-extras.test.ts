/** Write parameters, actions, bulk writes, the recycle bin, locks and per-object security (PROTOCOL.md 6.3, 6.7), through `service.fetch`. */
import { describe, expect, test } from 'vitest';
import { ApiError, MemoryBlobStore, MemoryObjectStore, type AccessQuestion, type ServiceOptions } from '../../src/index.js';
import { call, demoService, expectError, login, testClock } from '../helpers.js';

const RULES: NonNullable<ServiceOptions['access']>['rules'] = {
  Customer: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'], security: ['sales'] },
  Employee: { read: ['*'], update: ['sales'] },
  Message: { read: ['*'] },
  Item: { read: ['*'], update: ['*'] },
};

async function setup(options: ServiceOptions = {}) {
  const clock = testClock();
  const store = (options.store as MemoryObjectStore | undefined) ?? new MemoryObjectStore({ now: clock.now });
  const service = await demoService({ now: clock.now, store, ...options, access: { rules: RULES, ...options.access } });
  const as = async (user: 'alice' | 'bob' = 'alice') => {
    const headers = { sessionId: await login(service, user) };
    return (method: string, path: string, json?: unknown) => call(service, method, path, { headers, json });
  };
  return { service, clock, store, as, alice: await as('alice') };
}

const ids = (set: { '~Elements': Array<Record<string, unknown>> }) => set['~Elements'].map((o) => o['~ObjectID']);

describe('write parameters', () => {
  test('storeMode=10 replaces the whole object (members not given go, _ fields stay); the default merges', async () => {
    const { alice, store } = await setup();
    await store.put({ ...(await store.get('CUS00001'))!, fields: { ...(await store.get('CUS00001'))!.fields, _hidden: 'kept' } });
    const merged = await alice('PATCH', '/v1/object/CUS00001?storeMode=0', { City: 'Bremen' });
    expect(merged.body.data).toMatchObject({ Name: 'Ben Bauer', City: 'Bremen', Number: 1 });
    const replaced = await alice('PATCH', '/v1/object/CUS00001?storeMode=10', { Name: 'Only' });
    expect(Object.keys(replaced.body.data)).toEqual(['~ClassName', '~ObjectID', '~StoreTime', 'Name']);
    expect((await store.get('CUS00001'))!.fields).toEqual({ Name: 'Only', _hidden: 'kept' });
  });

  test.each([
    ['storeMode=1', 'storeMode must be 0'],
    ['storeSecurityPolice=15', 'storeSecurityPolice must be one of 0, 10, 20, 30, 40, 50, 60'],
    ['actions=%5B', 'actions must be a JSON array'],
    ['actions=%7B%7D', 'actions must be a JSON array'],
    [`actions=${encodeURIComponent(JSON.stringify([{ type: 'teleport' }]))}`, 'actions[0].type teleport is not a known action'],
    [`actions=${encodeURIComponent(JSON.stringify(Array.from({ length: 21 }, () => ({ type: 'add', object: 'EMP00001', field: 'F' }))))}`, 'actions holds 21 actions; at most 20'],
    [`actions=${encodeURIComponent(JSON.stringify([{ type: 'add', object: 'EMP00001', field: 'F', when: 'Later' }]))}`, 'actions[0].when must be Success, Error or Any'],
    [`actions=${encodeURIComponent(JSON.stringify([{ type: 'add', field: 'F' }]))}`, 'actions[0].object must be the id'],
    [`actions=${encodeURIComponent(JSON.stringify([{ type: 'add', object: 'EMP00001', field: '_F' }]))}`, 'actions[0].field must name a set field'],
  ])('%s is 400 and nothing is written (create and update)', async (param, message) => {
    const { alice, store } = await setup();
    const before = await store.count('Customer');
    const created = await alice('POST', `/v1/object/Customer?${param}`, { Name: 'New' });
    expectError(created, '400', 400);
    expect(created.body.status.statusMessage).toContain(message);
    const updated = await alice('PATCH', `/v1/object/CUS00002?${param}`, { Name: 'Changed' });
    expectError(updated, '400', 400);
    expect(await store.count('Customer')).toBe(before);
    expect((await store.get('CUS00002'))!.fields.Name).toBe('Clara Bauer');
  });

  test('rightsControlKey reaches the host authorize', async () => {
    const asked: AccessQuestion[] = [];
    const { alice } = await setup({ access: { authorize: (_, question) => (asked.push(question), !(question.action === 'update' && question.rightsControlKey === 'deny')) } });
    expect((await alice('PATCH', '/v1/object/CUS00001?rightsControlKey=k-1', { City: 'X' })).status).toBe(200);
    expect(asked.some((question) => question.action === 'update' && question.rightsControlKey === 'k-1')).toBe(true);
    expectError(await alice('PATCH', '/v1/object/CUS00001?rightsControlKey=deny', { City: 'Y' }), '403', 403);
  });

  test('an ISO 8601 ~StoreTime compares at whole seconds', async () => {
    const { alice, clock } = await setup();
    const read = (await alice('GET', '/v1/object/CUS00001')).body.data;
    clock.advance(5000);
    const iso = '2026-01-15T09:00:00.999Z'; // the seeded store time, with milliseconds
    expect(read['~StoreTime']).toBe('20260115T090000+00:00');
    expect((await alice('PATCH', '/v1/object/CUS00001', { '~StoreTime': iso, City: 'A' })).status).toBe(200);
    expectError(await alice('PATCH', '/v1/object/CUS00001', { '~StoreTime': iso, City: 'B' }), '409', 409);
    expectError(await alice('PATCH', '/v1/object/CUS00001', { '~StoreTime': '2026-13-01', City: 'B' }), '400', 400);
  });
});

describe('actions', () => {
  test('add and remove put the written object into and out of a set field of another object', async () => {
    const { alice, store } = await setup();
    const add = encodeURIComponent(JSON.stringify([{ type: 'add', object: 'EMP00001', field: 'Customers' }]));
    const created = (await alice('POST', `/v1/object/Customer?actions=${add}`, { Name: 'Acted' })).body.data['~ObjectID'];
    expect((await store.get('EMP00001'))!.fields.Customers).toEqual({ $set: [created] });
    await alice('PATCH', `/v1/object/${created}?actions=${add}`, { City: 'X' });
    expect((await store.get('EMP00001'))!.fields.Customers).toEqual({ $set: [created] });
    const twice = encodeURIComponent(JSON.stringify([{ type: 'add', object: 'EMP00001', field: 'Customers', operation: 'addobject' }]));
    await alice('PATCH', `/v1/object/${created}?actions=${twice}`, { City: 'Y' });
    expect((await store.get('EMP00001'))!.fields.Customers).toEqual({ $set: [created, created] });
    const remove = encodeURIComponent(JSON.stringify([{ type: 'remove', object: 'EMP00001', field: 'Customers' }]));
    await alice('PATCH', `/v1/object/${created}?actions=${remove}`, { City: 'Z' });
    expect((await store.get('EMP00001'))!.fields.Customers).toEqual({ $set: [] });
  });

  test('add needs the update right on the other object: its 403 is the answer, the write itself stands', async () => {
    const { alice, store } = await setup();
    const add = encodeURIComponent(JSON.stringify([{ type: 'add', object: 'USR00001', field: 'Customers' }]));
    // USR00001 is alice's own user object; no rule lets her update users
    const result = await alice('POST', `/v1/object/Customer?actions=${add}`, { Name: 'Stands' });
    expectError(result, '403', 403);
    expect(result.body.status.statusMessage).toContain('the write itself stands');
    expect((await store.find({ className: 'Customer', where: { Name: 'Stands' } })).total).toBe(1);
  });

  test('a host action receives the written object and records a message; Error actions run when the write fails', async () => {
    const seen: Array<[string, string | undefined]> = [];
    const { alice, store } = await setup({
      actions: {
        sendObject: async (context, action, object) => {
          seen.push([action.when, object?.id]);
          await context.store.put({ className: 'Message', fields: { To: String(action.to), About: object ? { $ref: object.id } : null } });
        },
      },
    });
    const send = encodeURIComponent(JSON.stringify([{ type: 'sendObject', to: 'sales@example.com' }, { type: 'sendObject', when: 'Error', to: 'ops' }]));
    const created = (await alice('POST', `/v1/object/Customer?actions=${send}`, { Name: 'Mailed' })).body.data['~ObjectID'];
    expect(seen).toEqual([['S', created]]);
    const messages = (await alice('GET', '/v1/objects/Message')).body.data;
    expect(messages['~Elements'][0]).toMatchObject({ To: 'sales@example.com', About: { '~ObjectID': created, Name: 'Mailed' } });
    expectError(await alice('PATCH', `/v1/object/CUS00001?actions=${send}`, { '~StoreTime': '20200101T000000+00:00', City: 'late' }), '409', 409);
    expect(seen).toEqual([['S', created], ['E', undefined]]);
    expect(await store.count('Message')).toBe(2);
  });

  test('a failing host action stops the rest; its error is the answer', async () => {
    const ran: string[] = [];
    const { alice, store } = await setup({
      actions: {
        fail: () => {
          ran.push('fail');
          throw new ApiError('400', 'no mail server');
        },
        note: () => void ran.push('note'),
      },
    });
    const list = encodeURIComponent(JSON.stringify([{ type: 'note' }, { type: 'fail' }, { type: 'note' }]));
    const result = await alice('POST', `/v1/object/Customer?actions=${list}`, { Name: 'Half' });
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe('action 1 (fail) failed: no mail server; the write itself stands');
    expect(ran).toEqual(['note', 'fail']);
    expect(await store.count('Customer', { Name: 'Half' })).toBe(1);
  });

  test('POST /v1/action/{className} runs the actions on every selected object and answers the selection', async () => {
    const seen: string[] = [];
    const { alice, store } = await setup({ actions: { sendObject: (_, __, object) => void seen.push(object!.id) } });
    const before = (await store.get('CUS00001'))!;
    const query = encodeURIComponent(JSON.stringify({ City: 'Hamburg' }));
    const actions = encodeURIComponent(JSON.stringify([{ type: 'sendObject' }]));
    const result = await alice('POST', `/v1/action/Customer?query=${query}&actions=${actions}&perPage=5`);
    expect(result.status).toBe(200);
    expect(ids(result.body.data)).toEqual(seen);
    expect(seen).toHaveLength(5);
    expect(result.body.data['~UnfilteredCount']).toBe(await store.count('Customer', { City: 'Hamburg' }));
    expect(await store.get('CUS00001')).toEqual(before);
    expectError(await alice('POST', `/v1/action/Customer?query=${query}`), '400', 400);
    expectError(await alice('POST', `/v1/action/Customer?actions=${encodeURIComponent('[{"type":"nope"}]')}`), '400', 400);
    expect(seen).toHaveLength(5);
  });
});

describe('bulk PATCH /v1/objects/{className}', () => {
  test('changes the members on every selected object, all in one step, and answers them', async () => {
    const { alice, store } = await setup();
    const query = encodeURIComponent(JSON.stringify({ City: 'Munich' }));
    const munich = (await store.find({ className: 'Customer', where: { City: 'Munich' } })).objects;
    const result = await alice('PATCH', `/v1/objects/Customer?query=${query}`, { Active: false, Region: 'South' });
    expect(result.status).toBe(200);
    expect(result.body.data['~Count']).toBe(munich.length);
    for (const object of munich) expect((await store.get(object.id))!.fields).toMatchObject({ Active: false, Region: 'South', Name: object.fields.Name });
    expect(await store.count('Customer', { Region: 'South' })).toBe(munich.length);
  });

  test('an empty query is the whole class; a selection over 1,000 objects is 400 with nothing written', async () => {
    const clock = testClock();
    const store = new MemoryObjectStore({ now: clock.now });
    for (let i = 0; i < 1001; i++) await store.put({ className: 'Item', fields: { i } });
    const { alice } = await setup({ store, now: clock.now });
    const result = await alice('PATCH', '/v1/objects/Item', { Done: true });
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe('the query selects 1001 objects; a bulk change works on at most 1000: narrow the query');
    expect(await store.count('Item', { Done: true })).toBe(0);
    const narrower = await alice('PATCH', `/v1/objects/Item?query=${encodeURIComponent(JSON.stringify({ i: { $lt: 1000 } }))}`, { Done: true });
    expect(narrower.body.data['~Count']).toBe(1000);
    expect(await store.count('Item', { Done: true })).toBe(1000);
  });

  test('any selected object the session may not update makes it 403 with nothing written', async () => {
    const { alice, store } = await setup({ access: { authorize: (_, q) => !(q.action === 'update' && q.object?.id === 'CUS00003') } });
    const before = await store.find({ className: 'Customer' });
    expectError(await alice('PATCH', '/v1/objects/Customer', { Active: false }), '403', 403);
    expect(await store.find({ className: 'Customer' })).toEqual(before);
  });
});

describe('recycle bin', () => {
  test('a recycled object is gone from reads, listings, references and filters; the bin lists it; restore puts it back', async () => {
    const { alice, store, clock, as } = await setup();
    const bob = await as('bob');
    const owner = (await alice('POST', '/v1/object/Customer', { Name: 'Owner', Best: { '~ObjectID': 'CUS00005' }, Friends: { '~Elements': [{ '~ObjectID': 'CUS00005' }] } })).body.data['~ObjectID'];
    const before = (await alice('GET', '/v1/object/CUS00005')).body.data;
    expect((await alice('DELETE', '/v1/object/CUS00005?moveToRecycler=true')).body.data).toEqual({});
    expectError(await alice('GET', '/v1/object/CUS00005'), '404', 404);
    expect((await alice('GET', `/v1/object/${owner}`)).body.data).toMatchObject({ Best: null, Friends: { '~Count': 0 } });
    const named = await alice('GET', `/v1/objects/Customer?query=${encodeURIComponent(JSON.stringify({ Number: before.Number }))}`);
    expect(named.body.data['~Count']).toBe(0);
    const bin = (await alice('GET', '/v1/recycleBin')).body.data;
    expect(bin['~Count']).toBe(1);
    expect(bin['~Elements'][0]).toMatchObject({ '~ObjectID': 'CUS00005', Name: before.Name, '~DeletedAt': '20260115T090000+00:00' });
    // bob's bin is his own
    expect((await bob('GET', '/v1/recycleBin')).body.data['~Count']).toBe(0);
    expectError(await bob('POST', '/v1/recycleBin/CUS00005/restore'), '404', 404);
    clock.advance(2000);
    const restored = await alice('POST', '/v1/recycleBin/CUS00005/restore');
    expect(restored.body.data).toMatchObject({ ...before, '~StoreTime': expect.any(String) });
    expect((await alice('GET', `/v1/object/${owner}`)).body.data.Best['~ObjectID']).toBe('CUS00005');
    expect((await alice('GET', '/v1/recycleBin')).body.data['~Count']).toBe(0);
    expectError(await alice('POST', '/v1/recycleBin/CUS00005/restore'), '404', 404);
    expect(await store.count('Customer')).toBe(301);
  });

  test('references to objects deleted meanwhile read null after a restore', async () => {
    const { alice } = await setup();
    const owner = (await alice('POST', '/v1/object/Customer', { Name: 'Owner', Best: { '~ObjectID': 'CUS00006' } })).body.data['~ObjectID'];
    await alice('DELETE', `/v1/object/${owner}?moveToRecycler=true`);
    await alice('DELETE', '/v1/object/CUS00006');
    expect((await alice('POST', `/v1/recycleBin/${owner}/restore`)).body.data).toMatchObject({ Name: 'Owner', Best: null });
  });

  test('objects.deleteMode recycle makes it the default (moveToRecycler=false deletes for good); emptying deletes file bytes', async () => {
    const blobs = new MemoryBlobStore();
    const { alice, store } = await setup({ objects: { deleteMode: 'recycle' }, files: { blobs }, access: { rules: { ...RULES, Document: { read: ['*'], delete: ['admins'] } } } });
    await blobs.put('DOC00001', new Blob(['hello']).stream());
    await alice('DELETE', '/v1/object/DOC00001');
    await alice('DELETE', '/v1/object/CUS00007');
    await alice('DELETE', '/v1/object/CUS00008?moveToRecycler=false');
    expect(ids((await alice('GET', '/v1/recycleBin')).body.data)).toEqual(['DOC00001', 'CUS00007']);
    expect(await blobs.stat('DOC00001')).toBeDefined();
    expect((await alice('PATCH', '/v1/personal/emptyRecycleBin')).body.data).toEqual({});
    expect((await alice('GET', '/v1/recycleBin')).body.data['~Count']).toBe(0);
    expect(await blobs.stat('DOC00001')).toBeUndefined();
    expect(await store.count('RecycledObject')).toBe(0);
    expectError(await alice('POST', '/v1/recycleBin/CUS00007/restore'), '404', 404);
  });

  test('recycled objects expire after the configured days, and the bin is shared by instances on one store', async () => {
    const clock = testClock();
    const store = new MemoryObjectStore({ now: clock.now });
    const first = await setup({ store, now: clock.now, objects: { recycleDays: 2 } });
    const second = await setup({ store, now: clock.now, objects: { recycleDays: 2 } });
    await first.alice('DELETE', '/v1/object/CUS00009?moveToRecycler=true');
    expect(ids((await second.alice('GET', '/v1/recycleBin')).body.data)).toEqual(['CUS00009']);
    clock.advance(2 * 86_400_000 + 1000);
    second.alice = await second.as('alice'); // the sessions timed out meanwhile
    expect((await second.alice('GET', '/v1/recycleBin')).body.data['~Count']).toBe(0);
    expect(await store.count('RecycledObject')).toBe(0);
  });
});

describe('locks', () => {
  test('a lock makes writes and deletes of other sessions 423; its holder writes; GET tells who', async () => {
    const { as, alice } = await setup();
    const other = await as('alice'); // another session of the same user
    expect((await alice('GET', '/v1/lock/object/CUS00001')).body.data).toEqual({ isLocked: false, messages: [] });
    const taken = await alice('POST', '/v1/lock/object/CUS00001', { minutes: 5 });
    expect(taken.body.data).toEqual({ isLocked: false, messages: ['locked by alice since 20260115T090000+00:00'] });
    expect((await alice('GET', '/v1/lock/object/CUS00001')).body.data.isLocked).toBe(false);
    expect((await other('GET', '/v1/lock/object/CUS00001')).body.data).toEqual({ isLocked: true, messages: ['locked by alice since 20260115T090000+00:00'] });
    const refused = await other('PATCH', '/v1/object/CUS00001', { City: 'Other' });
    expectError(refused, '423', 423);
    expect(refused.body.status.statusMessage).toBe('this object is locked by alice since 20260115T090000+00:00');
    expectError(await other('DELETE', '/v1/object/CUS00001'), '423', 423);
    expectError(await other('POST', '/v1/lock/object/CUS00001'), '423', 423);
    expectError(await other('PATCH', '/v1/objects/Customer', { Flag: 1 }), '423', 423);
    expect((await alice('PATCH', '/v1/object/CUS00001', { City: 'Mine' })).status).toBe(200);
    expect((await alice('DELETE', '/v1/lock/object/CUS00001')).body.data).toEqual({ isLocked: false, messages: [] });
    expect((await other('PATCH', '/v1/object/CUS00001', { City: 'Other' })).status).toBe(200);
  });

  test('a lock ends with its minutes and with its session; 403 comes before 423; bad minutes are 400', async () => {
    const { as, alice, clock, service } = await setup();
    const bob = await as('bob');
    expectError(await bob('POST', '/v1/lock/object/CUS00002'), '403', 403);
    await alice('POST', '/v1/lock/object/CUS00002', { minutes: 1 });
    expectError(await bob('PATCH', '/v1/object/CUS00002', { City: 'x' }), '403', 403);
    clock.advance(61_000);
    const other = await as('alice');
    expect((await other('GET', '/v1/lock/object/CUS00002')).body.data.isLocked).toBe(false);
    await alice('POST', '/v1/lock/object/CUS00002');
    expectError(await other('PATCH', '/v1/object/CUS00002', { City: 'x' }), '423', 423);
    expect((await alice('POST', '/v1/logout')).status).toBe(200);
    expect((await other('PATCH', '/v1/object/CUS00002', { City: 'x' })).status).toBe(200);
    for (const body of [{ minutes: 10_000 }, { minutes: 0 }, { minutes: 1.5 }, { minutes: '5' }]) {
      const result = await other('POST', '/v1/lock/object/CUS00003', body);
      expectError(result, '400', 400);
      expect(result.body.status.statusMessage).toContain('minutes must be a whole number from 1 to 240');
    }
    expect((await other('GET', '/v1/lock/object/CUS00003')).body.data.messages).toEqual([]);
    void service;
  });
  // across two instances on real Redis: test/locks-two-instances.test.ts
});

describe('per-object security', () => {
  test('entries narrow the class rules in reads, listings, references and filters; writes need their bits', async () => {
    const { alice, as, store } = await setup();
    const bob = await as('bob');
    const owner = (await alice('POST', '/v1/object/Customer', { Name: 'Refers', Best: { '~ObjectID': 'CUS00010' } })).body.data['~ObjectID'];
    const set = await alice('POST', '/v1/setObjectSecurity/CUS00010', { security: [{ userObjectName: 'alice', rights: 3 }] });
    expect(set.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: {} });
    expect((await alice('GET', '/v1/object/CUS00010')).body.data).not.toHaveProperty('_security');
    expect((await alice('GET', '/v1/object/CUS00010')).status).toBe(200);
    expectError(await bob('GET', '/v1/object/CUS00010'), '404', 404);
    const filtered = await bob('GET', `/v1/objects/Customer?query=${encodeURIComponent(JSON.stringify({ Number: 10 }))}`);
    expect(filtered.body.data['~Count']).toBe(0);
    const all = (await bob('GET', '/v1/objects/Customer?perPage=1000')).body.data;
    expect(all['~UnfilteredCount']).toBe(300);
    expect(ids(all)).not.toContain('CUS00010');
    expect(Object.keys((await bob('GET', `/v1/object/${owner}`)).body.data.Best)).toEqual(['~ClassName', '~ObjectID', '~StoreTime']);
    // alice holds read and write (3), not delete (8)
    expect((await alice('PATCH', '/v1/object/CUS00010', { City: 'kept' })).status).toBe(200);
    expectError(await alice('DELETE', '/v1/object/CUS00010'), '403', 403);
    // by group, merged per name; replace with [] removes them
    await alice('POST', '/v1/setObjectSecurity/CUS00010', { security: [{ userObjectName: 'support', rights: 1 }] });
    expect((await bob('GET', '/v1/object/CUS00010')).status).toBe(200);
    expectError(await bob('PATCH', '/v1/object/CUS00010', { City: 'no' }), '403', 403);
    await alice('POST', '/v1/setObjectSecurity/CUS00010', { security: [], replace: true });
    expect((await store.get('CUS00010'))!.fields).not.toHaveProperty('_security');
    expect((await alice('DELETE', '/v1/object/CUS00010')).status).toBe(200);
  });

  test('bit 5 on the object or the class rule security; unknown names and bad entries are 400 with nothing written', async () => {
    const { alice, as, store } = await setup();
    const bob = await as('bob');
    expectError(await bob('POST', '/v1/setObjectSecurity/CUS00011', { security: [{ userObjectName: 'bob', rights: 1 }] }), '403', 403);
    await alice('POST', '/v1/setObjectSecurity/CUS00011', { security: [{ userObjectName: 'bob', rights: 17 }, { userObjectName: 'alice', rights: 31 }] });
    expect((await bob('POST', '/v1/setObjectSecurity/CUS00011', { security: [{ userObjectName: 'support', rights: 1 }] })).status).toBe(200);
    const before = await store.get('CUS00011');
    for (const [body, message] of [
      [{ security: [{ userObjectName: 'nobody', rights: 1 }] }, 'security[0].userObjectName nobody names no user or group'],
      [{ security: [{ userObjectName: 'bob', rights: 32 }] }, 'rights must be an integer from 0 to 31'],
      [{ security: 'all' }, 'security'],
      [{ security: [{ userObjectName: 'bob', rights: 1 }], replace: 'yes' }, 'replace'],
    ] as const) {
      const result = await alice('POST', '/v1/setObjectSecurity/CUS00011', body);
      expectError(result, '400', 400);
      expect(result.body.status.statusMessage).toContain(message);
    }
    expect(await store.get('CUS00011')).toEqual(before);
  });
});

