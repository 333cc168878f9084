/** The model (PROTOCOL.md 6.8) and the v2 group (6.9), with the 0.2 client's own request bodies. */
import { describe, expect, it } from 'vitest';
import { demoAccess } from '../../examples/demo-access.mjs';
import { demoSchema } from '../../examples/demo-schema.mjs';
import { derivedClassId, MemoryBlobStore, type ServiceOptions } from '../../src/index.js';
import { parseSelection } from '../../src/objects/read/index.js';
import { call, demoService, expectError, login } from '../helpers.js';

/** Whether the selection takes query text, ids and word search yet (the query helper's work; "not supported yet" before). */
const selectionBuilt = (() => {
  try {
    parseSelection('Customer', { queryText: 'Name=Test', oids: ['CUS00001'], fullText: 'word' });
    return true;
  } catch (error) {
    return !/not supported yet/.test((error as Error).message);
  }
})();

async function session(options: ServiceOptions = {}, user: 'alice' | 'bob' = 'alice') {
  const service = await demoService({ access: demoAccess, schema: { ...demoSchema, Customer: { ...demoSchema.Customer!, classId: 100 } }, ...options });
  return { service, headers: { sessionId: await login(service, user) } };
}

describe('the model', () => {
  it('GET /v1/model/structure answers the declared classes the session may read, with stable ClassIDs', async () => {
    const { service, headers } = await session();
    const all = await call(service, 'GET', '/v1/model/structure', { headers });
    expect(all.body.status.internalStatus).toBe('0');
    const names = all.body.data['~Elements'].map((c: any) => c.Name);
    expect(names).toEqual(['Customer', 'Employee', 'ContactPerson', 'User', 'UserGroup', 'Document']);
    const some = await call(service, 'GET', '/v1/model/structure?classes=Customer,Employee,Bild', { headers });
    const [customer, employee, bild] = some.body.data['~Elements'];
    expect(customer).toMatchObject({ Name: 'Customer', ClassID: 100, Declared: true, Indices: [{ Name: 'Customer_Name', Members: ['Name'] }, { Name: 'Customer_Number', Members: ['Number'] }, { Name: 'Customer_City', Members: ['City'] }] });
    expect(customer.Members[0]).toEqual({ Name: 'Name', Type: 'string', Required: true, MaxLength: 120 });
    expect(customer.Members.find((m: any) => m.Name === 'AccountManager')).toEqual({ Name: 'AccountManager', Type: 'ref', Class: 'Employee', Required: false });
    expect(employee.ClassID).toBe(derivedClassId('Employee'));
    expect(bild).toEqual({ Name: 'Bild', ClassID: derivedClassId('Bild'), Declared: false, Members: [], Indices: [] });
    expectError(await call(service, 'GET', '/v1/model/structure?classes=Bad-Name', { headers }), '400', 400);
  });

  it('leaves out classes the session may not read', async () => {
    const { service, headers } = await session({ access: { rules: { ...demoAccess.rules, Employee: { read: ['admins'] } } } }, 'bob');
    const some = await call(service, 'GET', '/v1/model/structure?classes=Customer,Employee', { headers });
    expect(some.body.data['~Elements'].map((c: any) => c.Name)).toEqual(['Customer']);
  });

  it('POST /v2/model/structure answers the 0.2 client body in item order; Object lists every class', async () => {
    const { service, headers } = await session();
    const fixture = [{ className: 'Object', skipDerivedClasses: false, skipMembers: false, skipBaseMembers: true, skipIndices: false, skipValueMapping: false }];
    const result = await call(service, 'POST', '/v2/model/structure', { headers, json: [...fixture, { className: 'Customer', skipBaseMembers: false, skipIndices: true }] });
    expect(result.body.status.internalStatus).toBe('0');
    expect(result.body.data).toHaveLength(2);
    expect(result.body.data[0].map((c: any) => c.Name)).toEqual(['Object', 'Customer', 'Employee', 'ContactPerson', 'User', 'UserGroup', 'Document']);
    expect(result.body.data[0][0].Members.map((m: any) => m.Name)).toEqual(['~ObjectID', '~ClassName', '~StoreTime']);
    expect(result.body.data[1][0].Members.slice(0, 4).map((m: any) => m.Name)).toEqual(['~ObjectID', '~ClassName', '~StoreTime', 'Name']);
    expect(result.body.data[1][0].Indices).toEqual([]);
    const bad = await call(service, 'POST', '/v2/model/structure', { headers, json: [{ className: 'Customer' }, { className: 'Customer', skipMembers: 'yes' }] });
    expectError(bad, '400', 400);
    expect(bad.body.status.statusMessage).toBe('item 1: skipMembers must be true or false');
    expect((await call(service, 'POST', '/v2/model/structure', { headers, json: { className: 'Customer' } })).body.status.statusMessage).toMatch(/must be a JSON list/);
  });
});

describe('v2 object data', () => {
  it('byid takes the 0.2 client body: classId, numeric ids, context "null"; missing ids left out', async () => {
    const { service, headers } = await session();
    const fixture = await call(service, 'POST', '/v2/objectdata/byid', { headers, json: [{ classId: 100, type: '', context: 'null', ids: [200] }] });
    expect(fixture.body.status.internalStatus).toBe('0');
    expect(fixture.body.data).toEqual([{ '~Count': 0, '~UnfilteredCount': 0, '~Elements': [] }]);
    const found = await call(service, 'POST', '/v2/objectdata/byid', {
      headers,
      json: [{ className: 'Customer', ids: ['CUS00002', 'NOPE', 'EMP00001', 'CUS00001'] }, { classId: 100, type: '', context: 'edit', ids: ['CUS00003'] }],
    });
    expect(found.body.data[0]['~Elements'].map((o: any) => o['~ObjectID'])).toEqual(['CUS00002', 'CUS00001']);
    expect(found.body.data[1]['~Elements'][0]).toMatchObject({ '~ObjectID': 'CUS00003', Name: expect.any(String) });
  });

  it('byid refuses 10,000 ids, a body that is not a list, and items of the wrong shape, naming item and member', async () => {
    const { service, headers } = await session();
    const many = await call(service, 'POST', '/v2/objectdata/byid', { headers, json: [{ className: 'Customer', ids: Array.from({ length: 10_000 }, (_, i) => i) }] });
    expectError(many, '400', 400);
    expect(many.body.status.statusMessage).toBe('item 0: ids may hold at most 1000 ids, not 10000');
    expect((await call(service, 'POST', '/v2/objectdata/byid', { headers, json: { className: 'Customer', ids: [] } })).body.status.statusMessage).toMatch(/must be a JSON list/);
    const shape = await call(service, 'POST', '/v2/objectdata/byid', { headers, json: [{ className: 'Customer', ids: [] }, { className: 'Customer', ids: [true] }] });
    expect(shape.body.status.statusMessage).toBe('item 1: ids.0 must be strings or numbers');
    const unknown = await call(service, 'POST', '/v2/objectdata/byid', { headers, json: [{ className: 'Customer', ids: [], colour: 1 }] });
    expect(unknown.body.status.statusMessage).toBe('item 0: unknown member colour');
    expectError(await call(service, 'POST', '/v2/objectdata/byid', { headers, json: [{ classId: 999, ids: [] }] }), '404', 404);
    expect((await call(service, 'POST', '/v2/objectdata/byid', { headers, json: [{ ids: [] }] })).body.status.statusMessage).toBe('item 0: give either className or classId');
  });

  it('byid leaves out objects the session may not read', async () => {
    const { service, headers } = await session({}, 'bob');
    const result = await call(service, 'POST', '/v2/objectdata/byid', { headers, json: [{ className: 'User', ids: ['USR00001', 'USR00002'] }] });
    expect(result.body.data[0]['~Elements'].map((o: any) => o['~ObjectID'])).toEqual(['USR00002']);
  });

  it("an item's serialization shapes its set (6.1); a bad one is 400 naming the item", async () => {
    const { service, headers } = await session();
    const shaped = await call(service, 'POST', '/v2/objectdata/byQuery', { headers, json: [{ className: 'Customer', perPage: 2, serialization: { type: 'oid' } }, { className: 'Customer', perPage: 1 }] });
    expect(shaped.body.data[0]['~Elements']).toEqual([{ '~ObjectID': 'CUS00001' }, { '~ObjectID': 'CUS00002' }]);
    expect(Object.keys(shaped.body.data[1]['~Elements'][0])).toContain('Name');
    const bad = await call(service, 'POST', '/v2/objectdata/byQuery', { headers, json: [{ className: 'Customer', serialization: { type: 'nope' } }] });
    expectError(bad, '400', 400);
    expect(bad.body.status.statusMessage).toMatch(/^item 0/);
  });

  it('byQuery pages and orders as the listing does; a second order field is 400', async () => {
    const { service, headers } = await session();
    const listing = await call(service, 'GET', '/v1/objects/Customer?page=1&perPage=3&orderBy=-Name', { headers });
    const v2 = await call(service, 'POST', '/v2/objectdata/byQuery', { headers, json: [{ className: 'Customer', type: '0', order: 'Name DESC', page: 1, perPage: 3 }] });
    expect(v2.body.data[0]).toEqual(listing.body.data);
    const two = await call(service, 'POST', '/v2/objectdata/byQuery', { headers, json: [{ className: 'Customer', order: 'Name ASC, Number DESC' }] });
    expectError(two, '400', 400);
    expect(two.body.status.statusMessage).toMatch(/^item 0: order may name one field only/);
    expectError(await call(service, 'POST', '/v2/objectdata/byQuery', { headers, json: [{ className: 'Customer', page: -1 }] }), '400', 400);
  });

  // runs once the query helper's query text and word search are merged (they are 400 "not supported yet" before)
  it.skipIf(!selectionBuilt)('byQuery takes the 0.2 client body (query text "Name=Test") and seFulltext', async () => {
    const { service, headers } = await session();
    await call(service, 'POST', '/v1/object/Customer', { headers, json: { Name: 'Test', City: 'Rostock harbour' } });
    const fixture = await call(service, 'POST', '/v2/objectdata/byQuery', { headers, json: [{ className: 'Customer', type: '0', query: 'Name=Test' }] });
    expect(fixture.body.status.internalStatus).toBe('0');
    expect(fixture.body.data[0]['~Elements'].map((o: any) => o.Name)).toEqual(['Test']);
    const words = await call(service, 'POST', '/v2/objectdata/byQuery', { headers, json: [{ className: 'Customer', seFulltext: 'HARBOUR rostock', seFulltextStem: true }] });
    expect(words.body.data[0]['~Elements'].map((o: any) => o.Name)).toEqual(['Test']);
  });

  it('byParentObject answers the objects in a reference or set field, idList: ~ObjectID only', async () => {
    const { service, headers } = await session();
    const minimal = await call(service, 'POST', '/v2/objectdata/byParentObject', { headers, json: [{ parentOID: 'USR00001', member: 'Groups', idList: true }] });
    expect(minimal.body.status.internalStatus).toBe('0');
    expect(minimal.body.data).toEqual([{ '~Count': 2, '~UnfilteredCount': 2, '~Elements': [{ '~ObjectID': 'GRP00001' }, { '~ObjectID': 'GRP00002' }] }]);
    const ref = await call(service, 'POST', '/v2/objectdata/byParentObject', { headers, json: [{ parentOID: 'CUS00001', member: 'AccountManager' }, { parentOID: 'CUS00001', member: 'Nothing' }] });
    expect(ref.body.data[0]['~Elements'][0]).toMatchObject({ '~ObjectID': 'EMP00001', Name1: 'Alice' });
    expect(ref.body.data[1]).toEqual({ '~Count': 0, '~UnfilteredCount': 0, '~Elements': [] });
    expectError(await call(service, 'POST', '/v2/objectdata/byParentObject', { headers, json: [{ parentOID: 'NOPE', member: 'Groups' }] }), '404', 404);
    const scalar = await call(service, 'POST', '/v2/objectdata/byParentObject', { headers, json: [{ parentOID: 'CUS00001', member: 'Name' }] });
    expect(scalar.body.status.statusMessage).toBe('item 0: member Name of CUS00001 is not a reference or set field');
  });

  it('byParentObject checks access on the parent', async () => {
    const { service, headers } = await session({}, 'bob');
    expectError(await call(service, 'POST', '/v2/objectdata/byParentObject', { headers, json: [{ parentOID: 'USR00001', member: 'Groups', idList: true }] }), '404', 404);
  });

  // runs once the query helper's oids, query text and word search are merged
  it.skipIf(!selectionBuilt)('byParentObject takes the full 0.2 client body (query, order, seFulltext)', async () => {
    const { service, headers } = await session();
    const body = [{ parentOID: 'USR00001', member: 'Groups', context: 'edit', idList: true, query: 'Name=admins', order: 'Name ASC', seFulltext: 'administrators', seFulltextStem: true, seTextContent: 'administrators', seTextContentStem: true }];
    const result = await call(service, 'POST', '/v2/objectdata/byParentObject', { headers, json: body });
    expect(result.body.data).toEqual([{ '~Count': 1, '~UnfilteredCount': 1, '~Elements': [{ '~ObjectID': 'GRP00001' }] }]);
  });
});

describe('the rest of the v2 group', () => {
  it('versionInfo, appConfig and appTheme ({} by default, host JSON when given)', async () => {
    const { service, headers } = await session();
    expect((await call(service, 'GET', '/v2/versionInfo', { headers })).body.data).toEqual((await call(service, 'GET', '/v1/versioninfo', { headers })).body.data);
    expect((await call(service, 'GET', '/v2/appConfig', { headers })).body.data).toEqual({});
    expect((await call(service, 'GET', '/v2/appTheme', { headers })).body.data).toEqual({});
    const hosted = await session({ v2: { appConfig: { modules: ['crm'] }, appTheme: async (context) => ({ user: (await context.user())?.fields.Name }) } });
    expect((await call(hosted.service, 'GET', '/v2/appConfig', { headers: hosted.headers })).body.data).toEqual({ modules: ['crm'] });
    expect((await call(hosted.service, 'GET', '/v2/appTheme', { headers: hosted.headers })).body.data).toEqual({ user: 'alice' });
    expectError(await call(service, 'GET', '/v2/appConfig'), '204', 401);
  });

  it('views: 404 without the hook, the hook answers per item with it (the 0.2 client bodies)', async () => {
    const load = [{ type: '1', viewName: 'edit', className: 'Dokument', context: 'mobile' }, { type: '1', viewName: 'theme', className: '', context: '' }];
    const action = { action: { oid: 'ACTION-OID' }, data: { objectOid: 'OBJECT-OID', values: { Name: 'Test' } } };
    const { service, headers } = await session();
    expectError(await call(service, 'POST', '/v2/view/load', { headers, json: load }), '404', 404);
    expectError(await call(service, 'POST', '/v2/view/action', { headers, json: action }), '404', 404);
    const hosted = await session({ v2: { views: { load: (_, item) => ({ view: item.viewName }), action: (_, body) => ({ ran: (body.action as any).oid }) } } });
    expect((await call(hosted.service, 'POST', '/v2/view/load', { headers: hosted.headers, json: load })).body.data).toEqual([{ view: 'edit' }, { view: 'theme' }]);
    expect((await call(hosted.service, 'POST', '/v2/view/action', { headers: hosted.headers, json: action })).body.data).toEqual({ ran: 'ACTION-OID' });
    expect((await call(hosted.service, 'POST', '/v2/view/load', { headers: hosted.headers, json: [{ type: '1' }] })).body.status.statusMessage).toBe('item 0: viewName is required');
  });

  it('file: the bytes as /v1/file; variant parameters go to fileVariants, without it 400 naming the parameter', async () => {
    const blobs = new MemoryBlobStore();
    await blobs.put('DOC00001', new Blob(['hello file']).stream());
    const { service, headers } = await session({ files: { blobs } });
    const plain = await call(service, 'GET', '/v2/file/DOC00001', { headers });
    expect([plain.status, plain.text]).toEqual([200, 'hello file']);
    const variant = await call(service, 'GET', '/v2/file/DOC00001?usePdf=true', { headers });
    expectError(variant, '400', 400);
    expect(variant.body.status.statusMessage).toBe('usePdf asks for a file variant, and this service has no fileVariants hook');
    const hosted = await session({ files: { blobs }, v2: { fileVariants: (_, { file, params }) => new Response(`${file.id} page ${params.page}`) } });
    expect((await call(hosted.service, 'GET', '/v2/file/DOC00001?page=2', { headers: hosted.headers })).text).toBe('DOC00001 page 2');
    expectError(await call(hosted.service, 'GET', '/v2/file/NOPE?page=2', { headers: hosted.headers }), '404', 404);
  });

  it('refuses every v2 route inside /v1/multi (400 in that item)', async () => {
    const { service, headers } = await session();
    const paths = ['/v2/objectdata/byQuery', '/v2/objectdata/byid', '/v2/objectdata/byParentObject', '/v2/model/structure', '/v2/view/load', '/v2/view/action'];
    const items = [...paths.map((path) => ({ method: 'POST', path, data: [] })), ...['/v2/versionInfo', '/v2/appConfig', '/v2/appTheme', '/v2/file/DOC00001'].map((path) => ({ method: 'GET', path }))];
    const result = await call(service, 'POST', '/v1/multi', { headers, json: items });
    expect(result.body.data.map((item: any) => [item.httpStatus, item.result.status.internalStatus])).toEqual(items.map(() => [400, '400']));
  });
});
