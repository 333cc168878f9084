/**
 * Classes declared at run time (PROTOCOL.md 6.12): `PUT`/`DELETE /v1/model/classes/{className}`, their
 * check on every write path, the 409 before anything changes, restarts and a second instance.
 */
import { describe, expect, it } from 'vitest';
import { InProcessBus, MemoryObjectStore, type ServiceOptions } from '../../src/index.js';
import { call, demoService, expectError, login } from '../helpers.js';

const TICKET = {
  Fields: { Title: { Type: 'string', Required: true, MaxLength: 20 }, Priority: { Type: 'integer', Min: 1, Max: 5 }, Customer: { Type: 'ref', Class: 'Customer' } },
  Indexes: ['Priority'],
  Description: 'Support tickets',
  Access: { read: ['*'], create: ['admins'], update: ['admins'], delete: ['admins'] },
};

const admins = { users: { admins: 'admins' } } satisfies ServiceOptions;

async function adminService(options: ServiceOptions = {}) {
  const service = await demoService({ ...admins, ...options });
  const alice = await login(service, 'alice'); // in group admins
  const as = (method: string, path: string, json?: unknown) => call(service, method, path, { headers: { sessionId: alice }, json });
  return { service, alice, as };
}

describe('PUT /v1/model/classes/{className}', () => {
  it('declares a class: the model, the classes list and the OpenAPI document show it, and writes are checked', async () => {
    const { as } = await adminService();
    const put = await as('PUT', '/v1/model/classes/Ticket', TICKET);
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ Name: 'Ticket', Declared: true, Runtime: true, Strict: false, Description: 'Support tickets', Indices: [{ Name: 'Ticket_Priority', Members: ['Priority'] }] });
    expect(put.body.data.Members).toEqual([
      { Name: 'Title', Type: 'string', Required: true, MaxLength: 20 },
      { Name: 'Priority', Type: 'integer', Required: false, Min: 1, Max: 5 },
      { Name: 'Customer', Type: 'ref', Required: false, Class: 'Customer' },
    ]);
    const structure = await as('GET', '/v1/model/structure?classes=Ticket');
    expect(structure.body.data['~Elements']).toEqual([put.body.data]);
    const classes = await as('GET', '/v1/classes');
    expect(classes.body.data['~Elements']).toContainEqual({ Name: 'Ticket', Declared: true, Count: 0 });
    const openapi = await as('GET', '/openapi.json');
    expect(openapi.body.components.schemas.Class_Ticket.properties.Title).toBeDefined();

    // v1 create, v1 update, bulk PATCH, a /v1/multi item: each checked
    expect((await as('POST', '/v1/object/Ticket', { Title: 'Printer jams', Priority: 2 })).body.status.internalStatus).toBe('0');
    const tooLong = await as('POST', '/v1/object/Ticket', { Title: 'x'.repeat(21) });
    expectError(tooLong, '400', 400);
    expect(tooLong.body.status.statusMessage).toBe('field Title of Ticket must be a string of at most 20 characters');
    expectError(await as('POST', '/v1/object/Ticket', { Priority: 3 }), '400', 400);
    const created = await as('POST', '/v1/object/Ticket', { Title: 'Toner', Priority: 1 });
    expectError(await as('PATCH', `/v1/object/${created.body.data['~ObjectID']}`, { Priority: 9 }), '400', 400);
    expectError(await as('PATCH', '/v1/objects/Ticket', { Priority: 0 }), '400', 400);
    const multi = await as('POST', '/v1/multi', [{ method: 'POST', path: '/v1/object/Ticket', data: { Title: 7 } }]);
    expect(multi.body.data[0].httpStatus).toBe(400);
  });

  it('changes nothing and answers 409 with Violations and Examples when stored objects would not satisfy it', async () => {
    const { as } = await adminService({ access: { rules: { Customer: { read: ['*'], update: ['sales'] } } } });
    // every demo customer lacks Segment
    const put = await as('PUT', '/v1/model/classes/Customer', { Fields: { Name: { Type: 'string', Required: true }, Segment: { Type: 'string', Required: true } } });
    expect(put.status).toBe(409);
    expect(put.body.status.internalStatus).toBe('409');
    expect(put.body.data.Violations).toBe(300);
    expect(put.body.data.Examples).toEqual(['CUS00001', 'CUS00002', 'CUS00003', 'CUS00004', 'CUS00005', 'CUS00006', 'CUS00007', 'CUS00008', 'CUS00009', 'CUS00010']);
    // nothing changed: the class stays undeclared and takes anything
    expect((await as('GET', '/v1/model/structure?classes=Customer')).body.data['~Elements'][0].Declared).toBe(false);
    expect((await as('PATCH', '/v1/object/CUS00001', { Segment: 5 })).body.status.internalStatus).toBe('0');
    // a declaration they satisfy is taken; a narrower range then counts exactly the objects outside it
    expect((await as('PUT', '/v1/model/classes/Customer', { Fields: { Name: { Type: 'string', Required: true }, Number: { Type: 'integer', Min: 1 } } })).status).toBe(200);
    const narrower = await as('PUT', '/v1/model/classes/Customer', { Fields: { Number: { Type: 'integer', Max: 290 } } });
    expect(narrower.body.data).toEqual({ Violations: 10, Examples: ['CUS00291', 'CUS00292', 'CUS00293', 'CUS00294', 'CUS00295', 'CUS00296', 'CUS00297', 'CUS00298', 'CUS00299', 'CUS00300'] });
    const strict = await as('PUT', '/v1/model/classes/Customer', { Fields: { Name: { Type: 'string' } }, Strict: true });
    expect(strict.body.data.Violations).toBe(300);
  });

  it('refuses what 6.12 refuses: non-admins, host classes, host rules, internal and invalid names', async () => {
    const { service, as } = await adminService({ schema: { UserGroup: { fields: { Name: 'string' } } }, access: { rules: { Customer: { read: ['*'] } } } });
    const bob = await login(service, 'bob');
    expectError(await call(service, 'PUT', '/v1/model/classes/Ticket', { headers: { sessionId: bob }, json: TICKET }), '403', 403);
    const host = await as('PUT', '/v1/model/classes/UserGroup', { Fields: {} });
    expectError(host, '403', 403);
    expect(host.body.status.statusMessage).toContain('declared by the host');
    expectError(await as('PUT', '/v1/model/classes/Customer', { Fields: {}, Access: { read: ['*'] } }), '403', 403);
    expect((await as('PUT', '/v1/model/classes/Customer', { Fields: {} })).status).toBe(200); // its fields may be declared
    expectError(await as('PUT', '/v1/model/classes/RecycledObject', { Fields: {} }), '400', 400);
    expectError(await as('PUT', '/v1/model/classes/9lives', { Fields: {} }), '400', 400);
    expectError(await as('PUT', '/v1/model/classes/Ticket', { Fields: { A: { Type: 'text' } } }), '400', 400);
    const contradiction = await as('PUT', '/v1/model/classes/Ticket', { Fields: { A: { Type: 'integer', Min: 5, Max: 1 } } });
    expectError(contradiction, '400', 400);
    expect(contradiction.body.status.statusMessage).toBe('class Ticket, field A: min 5 is above max 1');
    const noAdmins = await demoService();
    const alice = await login(noAdmins, 'alice');
    expectError(await call(noAdmins, 'PUT', '/v1/model/classes/Ticket', { headers: { sessionId: alice }, json: TICKET }), '403', 403);
  });

  it('applies the declared access rule', async () => {
    const { service, as } = await adminService();
    await as('PUT', '/v1/model/classes/Ticket', TICKET);
    const bob = await login(service, 'bob'); // not in admins
    expectError(await call(service, 'POST', '/v1/object/Ticket', { headers: { sessionId: bob }, json: { Title: 'mine' } }), '403', 403);
    expect((await as('POST', '/v1/object/Ticket', { Title: 'mine' })).status).toBe(200);
    expect((await call(service, 'GET', '/v1/objects/Ticket', { headers: { sessionId: bob } })).body.data['~Count']).toBe(1);
  });
});

describe('DELETE /v1/model/classes/{className}', () => {
  it('removes a run-time declaration of an empty class; 409 while it holds objects, 404 undeclared, 403 for the host', async () => {
    const { as } = await adminService({ schema: { UserGroup: { fields: { Name: 'string' } } } });
    await as('PUT', '/v1/model/classes/Ticket', TICKET);
    const ticket = await as('POST', '/v1/object/Ticket', { Title: 'one' });
    expectError(await as('DELETE', '/v1/model/classes/Ticket'), '409', 409);
    await as('DELETE', `/v1/object/${ticket.body.data['~ObjectID']}`);
    const removed = await as('DELETE', '/v1/model/classes/Ticket');
    expect(removed.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: {} });
    expectError(await as('DELETE', '/v1/model/classes/Ticket'), '404', 404);
    expectError(await as('DELETE', '/v1/model/classes/Nothing'), '404', 404);
    expectError(await as('DELETE', '/v1/model/classes/UserGroup'), '403', 403);
    // undeclared again: anything goes
    expect((await as('GET', '/v1/model/structure?classes=Ticket')).body.data['~Elements'][0].Declared).toBe(false);
  });
});

describe('run-time declarations live with the data', () => {
  it('a restart on the same store keeps them, and another instance on the same store and bus applies them', async () => {
    const store = new MemoryObjectStore();
    const bus = new InProcessBus();
    const first = await adminService({ store, events: { bus } });
    const second = await adminService({ store, events: { bus }, data: undefined });
    expect((await first.as('PUT', '/v1/model/classes/Ticket', TICKET)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 10)); // the other instance reads it when told
    expectError(await second.as('POST', '/v1/object/Ticket', { Priority: 2 }), '400', 400);
    expect((await second.as('GET', '/v1/model/structure?classes=Ticket')).body.data['~Elements'][0].Runtime).toBe(true);

    const restarted = await adminService({ store, data: undefined });
    expectError(await restarted.as('POST', '/v1/object/Ticket', { Title: 'x'.repeat(30) }), '400', 400);
    // removed on the first: the second learns it too
    await first.as('DELETE', '/v1/model/classes/Ticket');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expectError(await second.as('POST', '/v1/object/Ticket', { Priority: 'any' }), '403', 403); // no rule, no check: the default refusal
  });
});
