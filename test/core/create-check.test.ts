/**
 * `POST /v1/model/classes/{className}/check` (PROTOCOL.md 6.12, checking rows before an import): each
 * object refused exactly as `POST /v1/object/{className}` refuses it (code and message), nothing written.
 */
import { describe, expect, it } from 'vitest';
import { call, demoService, expectError, login } from '../helpers.js';

const TICKET = {
  Fields: { Title: { Type: 'string', Required: true, MaxLength: 20 }, Priority: { Type: 'integer', Min: 1, Max: 5 }, Customer: { Type: 'ref', Class: 'Customer' } },
  Access: { read: ['*'], create: ['admins'], update: ['admins'], delete: ['admins'] },
};

const ROWS: unknown[] = [
  { Title: 'Printer jams', Priority: 2, Customer: { '~ObjectID': 'CUS00001' } },
  { Priority: 3 },
  { Title: 'x'.repeat(21) },
  { Title: 'Toner', Priority: 9 },
  { Title: 'Call back', Customer: { '~ObjectID': 'NOSUCHID' } },
  { Title: 'Wrong class', Customer: { '~ObjectID': 'EMP00001' } },
  { Title: 'Reserved', _secret: 1 },
  { Title: 'Bad reference', Customer: { '~ObjectID': 5 } },
  'not an object',
];

async function ticketService() {
  const service = await demoService({ users: { admins: 'admins' } });
  const alice = await login(service, 'alice'); // in group admins
  const bob = await login(service, 'bob');
  const as = (sessionId: string, method: string, path: string, json?: unknown) => call(service, method, path, { headers: { sessionId }, json });
  expect((await as(alice, 'PUT', '/v1/model/classes/Ticket', TICKET)).status).toBe(200);
  return { alice, bob, as };
}

describe('POST /v1/model/classes/{className}/check', () => {
  it('refuses each object with the code and message its create gets, and writes nothing', async () => {
    const { alice, as } = await ticketService();
    const checked = await as(alice, 'POST', '/v1/model/classes/Ticket/check', { Objects: ROWS });
    expect(checked.status).toBe(200);
    expect(checked.body.data.Checked).toBe(ROWS.length);
    expect((await as(alice, 'GET', '/v1/objects/Ticket')).body.data['~Count']).toBe(0);

    const created = [];
    for (const [index, row] of ROWS.entries()) {
      const answer = await as(alice, 'POST', '/v1/object/Ticket', row);
      if (answer.body.status.internalStatus !== '0') created.push({ Index: index, Code: answer.body.status.internalStatus, Message: answer.body.status.statusMessage });
    }
    expect(checked.body.data.Refused).toEqual(created);
    expect(created.map((refusal) => refusal.Index)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(created[4]!.Message).toBe('field Customer of Ticket must be a reference {"~ObjectID": "<id>"} to a Customer; EMP00001 is not a Customer');
  });

  it("refuses every object with 403 for a session the class's create rule leaves out", async () => {
    const { bob, as } = await ticketService();
    const checked = await as(bob, 'POST', '/v1/model/classes/Ticket/check', { Objects: [{ Title: 'fine' }, { Priority: 9 }] });
    expect(checked.body.data).toEqual({
      Checked: 2,
      Refused: [0, 1].map((Index) => ({ Index, Code: '403', Message: 'this session may not create Ticket objects' })),
    });
    expectError(await as(bob, 'POST', '/v1/object/Ticket', { Title: 'fine' }), '403', 403);
  });

  it('answers 404 for a name that is no class, and takes 1,000 objects at most', async () => {
    const { alice, as } = await ticketService();
    expectError(await as(alice, 'POST', '/v1/model/classes/Tickets/check', { Objects: [] }), '404', 404);
    expect((await as(alice, 'POST', '/v1/model/classes/Ticket/check', { Objects: Array.from({ length: 1000 }, () => ({ Title: 'ok' })) })).body.data).toEqual({ Checked: 1000, Refused: [] });
    expectError(await as(alice, 'POST', '/v1/model/classes/Ticket/check', { Objects: Array.from({ length: 1001 }, () => ({ Title: 'ok' })) }), '400', 400);
  });
});
