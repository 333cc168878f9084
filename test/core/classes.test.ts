/**
 * What the studio reads (PROTOCOL.md 6.11), through `service.fetch`: `GET /v1/classes` and
 * `GET /v1/object/{id}/referencedBy`, under the access rules, `authorize` and per-object security, on a
 * store with the optional methods and on one without them.
 */
import { describe, expect, test } from 'vitest';
import { demoAccess } from '../../examples/demo-access.mjs';
import { MemoryObjectStore, type AccessQuestion, type ObjectStore, type ServiceOptions } from '../../src/index.js';
import { call, demoService, expectError, login, loginToken } from '../helpers.js';

const DEMO_CLASSES = ['Bild', 'ContactPerson', 'Customer', 'Document', 'Dokument', 'Employee', 'User', 'UserGroup'];

/** The demo with its access rules, a declared class without objects and a class named only in the rules. */
async function demo(options: ServiceOptions = {}) {
  const asked: AccessQuestion[] = [];
  const service = await demoService({
    schema: { Project: { fields: { Name: 'string', Lead: { type: 'ref', class: 'Employee' } } } },
    ...options,
    access: {
      ...demoAccess,
      rules: { ...demoAccess.rules, Invoice: { read: ['admins'] } },
      // asked about every class, so that each is counted object by object
      authorizeClasses: undefined,
      authorize: (context, question) => (asked.push(question), demoAccess.authorize!(context, question)),
      ...options.access,
    },
  });
  const as = async (user: 'alice' | 'bob') => ({ sessionId: await login(service, user) });
  return { service, asked, as };
}

const classes = async (service: Awaited<ReturnType<typeof demo>>['service'], headers: Record<string, string>) => {
  const result = await call(service, 'GET', '/v1/classes', { headers });
  expect(result.status, result.text).toBe(200);
  return result.body.data as { '~Count': number; '~UnfilteredCount': number; '~Elements': { Name: string; Declared: boolean; Count: number; CountEstimated?: true }[] };
};

const referencedBy = async (service: Awaited<ReturnType<typeof demo>>['service'], headers: Record<string, string>, id: string, params = '') => {
  const result = await call(service, 'GET', `/v1/object/${id}/referencedBy${params}`, { headers });
  expect(result.status, result.text).toBe(200);
  return { total: result.body.data['~UnfilteredCount'] as number, ids: result.body.data['~Elements'].map((o: { '~ObjectID': string }) => o['~ObjectID']) as string[], data: result.body.data };
};

describe('GET /v1/classes', () => {
  test('the classes the session may read: declared, named in the rules or holding objects, by name, with what it may read of each', async () => {
    const { service, as } = await demo();
    const alice = await classes(service, await as('alice'));
    expect(alice['~Elements']).toEqual([
      { Name: 'Bild', Declared: false, Count: 4 },
      // the host's authorize lets a user read the contact person its own employee names, no other
      { Name: 'ContactPerson', Declared: false, Count: 1 },
      { Name: 'Customer', Declared: false, Count: 300 },
      { Name: 'Document', Declared: false, Count: 3 },
      // named in the demo's rules (the product client's first example lists it), no objects
      { Name: 'Dokument', Declared: false, Count: 0 },
      { Name: 'Employee', Declared: false, Count: 3 },
      { Name: 'Invoice', Declared: false, Count: 0 },
      { Name: 'Project', Declared: true, Count: 0 },
      // users see only themselves (the default rule "self")
      { Name: 'User', Declared: false, Count: 1 },
      { Name: 'UserGroup', Declared: false, Count: 3 },
    ]);
    expect([alice['~Count'], alice['~UnfilteredCount']]).toEqual([10, 10]);
    // bob is not in admins: Invoice's rule does not let him read it, so it is not listed
    const bob = await classes(service, await as('bob'));
    expect(bob['~Elements'].map((entry) => entry.Name)).toEqual([...DEMO_CLASSES.slice(0, 6), 'Project', 'User', 'UserGroup']);
  });

  test('internal classes never show, even when they hold objects', async () => {
    const { service, as } = await demo();
    const headers = await as('alice');
    expect((await call(service, 'DELETE', '/v1/object/CUS00001?moveToRecycler=true', { headers })).status).toBe(200);
    const names = (await classes(service, headers))['~Elements'].map((entry) => entry.Name);
    expect(names).toEqual([...DEMO_CLASSES.slice(0, 6), 'Invoice', 'Project', 'User', 'UserGroup']);
    expect((await classes(service, headers))['~Elements'].find((entry) => entry.Name === 'Customer')?.Count).toBe(299);
  });

  test('objects with per-object security count only for those they let read', async () => {
    const { service, as } = await demo();
    const alice = await as('alice');
    const secured = await call(service, 'POST', '/v1/setObjectSecurity/CUS00001', { headers: alice, json: { security: [{ userObjectName: 'sales', rights: 31 }] } });
    expect(secured.status, secured.text).toBe(200);
    const customers = async (headers: Record<string, string>) => (await classes(service, headers))['~Elements'].find((entry) => entry.Name === 'Customer')!.Count;
    expect(await customers(alice)).toBe(300);
    expect(await customers(await as('bob'))).toBe(299);
  });

  test('a class too large to ask object by object answers its stored count as an estimate, asking authorize nothing of it', async () => {
    class BigStore extends MemoryObjectStore {
      override async classCounts() {
        return [...(await super.classCounts()), { className: 'Big', count: 50_000 }];
      }
    }
    const { service, as, asked } = await demo({ store: new BigStore() });
    const headers = await as('alice');
    asked.length = 0;
    const answer = await classes(service, headers);
    expect(answer['~Elements'].find((entry) => entry.Name === 'Big')).toEqual({ Name: 'Big', Declared: false, Count: 50_000, CountEstimated: true });
    expect(asked.filter((question) => question.className === 'Big')).toEqual([]);
    // the smaller classes under authorize are asked object by object, and counted exactly
    expect(answer['~Elements'].find((entry) => entry.Name === 'Customer')).toEqual({ Name: 'Customer', Declared: false, Count: 300 });
  });

  test('the same answers from a store without the optional methods (classCounts, referencing)', async () => {
    const memory = new MemoryObjectStore();
    const plain: ObjectStore = {
      get: (id) => memory.get(id),
      getMany: (ids) => memory.getMany(ids),
      find: (query) => memory.find(query),
      count: (className, where) => memory.count(className, where),
      put: (input) => memory.put(input),
      delete: (id) => memory.delete(id),
      classNames: () => memory.classNames(),
    };
    const full = await demo();
    const bare = await demo({ store: plain });
    for (const user of ['alice', 'bob'] as const) {
      expect(await classes(bare.service, await bare.as(user))).toEqual(await classes(full.service, await full.as(user)));
      // (the two services were seeded at different times: ids only)
      for (const [id, params] of [['EMP00002', '?page=2&perPage=70&serialization={"type":"oid"}'], ['EMP00001', '?serialization={"type":"oid"}'], ['GRP00002', '?serialization={"type":"oid"}']] as const) {
        expect((await referencedBy(bare.service, await bare.as(user), id, params)).data).toEqual((await referencedBy(full.service, await full.as(user), id, params)).data);
      }
    }
  });
});

describe('GET /v1/object/{id}/referencedBy', () => {
  test('the objects of every class referencing the object, as the session may read them, by class then creation order, paged', async () => {
    const { service, as } = await demo();
    const alice = await referencedBy(service, await as('alice'), 'EMP00002', '?perPage=3');
    expect(alice.total).toBe(150);
    expect(alice.ids).toEqual(['CUS00002', 'CUS00004', 'CUS00006']);
    expect(alice.data['~Elements'][0]).toMatchObject({ '~ClassName': 'Customer', Name: expect.any(String), AccountManager: { '~ObjectID': 'EMP00002', Name1: 'Bob' } });
    // bob also reads his own user object, whose Employee field references EMP00002
    const bob = await referencedBy(service, await as('bob'), 'EMP00002', '?page=1&perPage=100&serialization={"type":"oid"}');
    expect(bob.total).toBe(151);
    expect(bob.ids.slice(-2)).toEqual(['CUS00300', 'USR00002']);
    expect(bob.data['~Elements'].at(-1)).toEqual({ '~ObjectID': 'USR00002' });
    // a set element references too: the users in a group
    expect((await referencedBy(service, await as('alice'), 'GRP00002')).ids).toEqual(['USR00001']);
  });

  test('an id that is no object, or one the session may not read, is 404 as GET /v1/object/{id}', async () => {
    const { service, as } = await demo();
    const headers = await as('alice');
    for (const id of ['NOSUCH01', 'USR00002', 'Customer', 'CON00002']) {
      expectError(await call(service, 'GET', `/v1/object/${id}/referencedBy`, { headers }), '404', 404);
    }
    expectError(await call(service, 'GET', '/v1/object/EMP00002/referencedBy?perPage=1001', { headers }), '400', 400);
    expectError(await call(service, 'GET', '/v1/object/EMP00002/referencedBy?page=x', { headers }), '400', 400);
    expectError(await call(service, 'GET', '/v1/object/EMP00002/referencedBy'), '204', 401);
  });

  test("authorize and per-object security narrow it as they narrow listings", async () => {
    const { service, as } = await demo();
    const alice = await as('alice');
    // CON00001 is alice's employee's contact person (authorize lets her read it): EMP00001 references it
    expect((await referencedBy(service, alice, 'CON00001')).ids).toEqual(['EMP00001']);
    const secured = await call(service, 'POST', '/v1/setObjectSecurity/CUS00002', { headers: alice, json: { security: [{ userObjectName: 'sales', rights: 31 }] } });
    expect(secured.status, secured.text).toBe(200);
    expect((await referencedBy(service, alice, 'EMP00002', '?perPage=1')).total).toBe(150);
    const bob = await referencedBy(service, await as('bob'), 'EMP00002', '?perPage=2');
    expect([bob.total, bob.ids]).toEqual([150, ['CUS00004', 'CUS00006']]);
  });

  test('a class declared at run time is held to its own read rule where the rules decide in the store (no authorize)', async () => {
    const { service, as } = await demo({ users: { admins: 'admins' }, access: { authorize: undefined, authorizeClasses: undefined } });
    const alice = await as('alice');
    const Access = { read: ['admins'], create: ['admins'], update: ['admins'], delete: ['admins'] };
    const declared = await call(service, 'PUT', '/v1/model/classes/Audit', { headers: alice, json: { Fields: { Subject: { Type: 'ref', Class: 'Employee' } }, Access } });
    expect(declared.status, declared.text).toBe(200);
    const created = await call(service, 'POST', '/v1/object/Audit', { headers: alice, json: { Subject: { '~ObjectID': 'EMP00002' } } });
    expect(created.status, created.text).toBe(200);
    const audit = created.body.data['~ObjectID'] as string;
    // alice (admins) reads it among the objects referencing EMP00002; bob (support) neither reads nor counts it
    expect((await referencedBy(service, alice, 'EMP00002', '?perPage=1000')).ids).toContain(audit);
    const bob = await as('bob');
    expectError(await call(service, 'GET', `/v1/object/${audit}`, { headers: bob }), '404', 404);
    const seen = await referencedBy(service, bob, 'EMP00002', '?page=1&perPage=1000&serialization={"type":"oid"}');
    expect(seen.ids).not.toContain(audit);
    expect(seen.total).toBe(151);
  });

  test('through a token login and as /v1/multi items', async () => {
    const { service } = await demo();
    const headers = { authorization: `Bearer ${await loginToken(service, 'alice')}` };
    // 150 customers and alice's own user object
    expect((await referencedBy(service, headers, 'EMP00001', '?perPage=1')).total).toBe(151);
    const multi = await call(service, 'POST', '/v1/multi', {
      headers,
      json: [
        { method: 'GET', path: '/v1/classes' },
        { method: 'GET', path: '/v1/object/EMP00002/referencedBy?perPage=1&serialization={"type":"oid"}' },
        { method: 'GET', path: '/v1/object/NOSUCH01/referencedBy' },
      ],
    });
    expect(multi.status, multi.text).toBe(200);
    const [listed, referencing, missing] = multi.body.data;
    expect(listed.httpStatus).toBe(200);
    expect(listed.result.data['~Count']).toBe(10);
    expect(referencing).toMatchObject({ httpStatus: 200, result: { data: { '~Count': 1, '~UnfilteredCount': 150, '~Elements': [{ '~ObjectID': 'CUS00002' }] } } });
    expect(missing).toMatchObject({ httpStatus: 404, result: { status: { internalStatus: '404' } } });
  });
});
