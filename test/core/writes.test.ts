/** Writing objects (PROTOCOL.md 6.3) through `service.fetch`, with the demo's access rules. */
import { describe, expect, test } from 'vitest';
import { ApiError, formatStoreTime, type ServiceOptions } from '../../src/index.js';
import { call, demoService, expectError, login, testClock } from '../helpers.js';

const CUSTOMER_RULES: ServiceOptions['access'] = { rules: { Customer: { create: ['sales'], update: ['sales'], delete: ['admins'] } } };

async function session(options: ServiceOptions = {}, user: 'alice' | 'bob' = 'alice') {
  const clock = testClock();
  const service = await demoService({ now: clock.now, access: CUSTOMER_RULES, ...options });
  const headers = { sessionId: await login(service, user) };
  const send = (method: string, path: string, json?: unknown) => call(service, method, path, { headers, json });
  return { service, clock, send };
}

const T0 = formatStoreTime(Date.UTC(2026, 0, 15, 9, 0, 0));

describe('POST /v1/object/{className}', () => {
  test('creates an object and answers it serialized as GET gives it', async () => {
    const { send } = await session();
    const created = await send('POST', '/v1/object/Customer?storeMode=0&storeSecurityPolice=10', {
      '~ObjectID': 'IGNORED1', '~StoreTime': 'x', Name: 'Zoe', Number: 301, Tags: ['a', { b: 1 }], Note: null,
      AccountManager: { '~ObjectID': 'EMP00002', '~ClassName': 'ignored' },
    });
    expect(created.status).toBe(200);
    const data = created.body.data;
    expect(data['~ObjectID']).not.toBe('IGNORED1');
    expect(created.body).toEqual({
      status: { internalStatus: '0', statusMessage: 'ok' },
      data: {
        '~ClassName': 'Customer', '~ObjectID': data['~ObjectID'], '~StoreTime': T0,
        Name: 'Zoe', Number: 301, Tags: ['a', { b: 1 }], Note: null,
        AccountManager: expect.objectContaining({ '~ClassName': 'Employee', '~ObjectID': 'EMP00002', Name1: 'Bob' }),
      },
    });
    expect((await send('GET', `/v1/object/${data['~ObjectID']}`)).body).toEqual(created.body);
  });

  test('a set of references is written with ~Elements', async () => {
    const { send } = await session();
    const created = await send('POST', '/v1/object/Customer', { Name: 'Set', Contacts: { '~Elements': [{ '~ObjectID': 'EMP00001' }, { '~ObjectID': 'EMP00003' }] } });
    const contacts = created.body.data.Contacts;
    expect(contacts['~Count']).toBe(2);
    expect(contacts['~Elements'].map((o: Record<string, string>) => o['~ObjectID'])).toEqual(['EMP00001', 'EMP00003']);
  });

  test.each([
    [{ _secret: 1 }, 'field _secret may not be written (names starting with _ or $ are reserved)'],
    [{ $where: 1 }, 'field $where may not be written (names starting with _ or $ are reserved)'],
    [{ '': 1 }, 'field name  must have 1 to 128 characters'],
    [{ ['x'.repeat(129)]: 1 }, `field name ${'x'.repeat(100)}... must have 1 to 128 characters`],
    [{ Boss: { '~ObjectID': 'NOPE0001' } }, 'field Boss references NOPE0001, which does not exist or may not be read'],
    [{ Boss: { '~ObjectID': 'USR00002' } }, 'field Boss references USR00002, which does not exist or may not be read'],
    [{ Boss: { '~ObjectID': 5 } }, 'field Boss: a reference must be {"~ObjectID": "<id>"}'],
    [{ Team: { '~Elements': 'x' } }, 'field Team: ~Elements must be a list of references'],
    [{ Team: { '~Elements': [{ '~ObjectID': 'EMP00001' }, { '~ObjectID': 'NOPE0001' }] } }, 'field Team references NOPE0001, which does not exist or may not be read'],
    [{ Boss: { $ref: 'EMP00001' } }, 'field Boss: write references as {"~ObjectID": ...}, not $ref or $set'],
  ])('%j is 400 naming the field', async (body, message) => {
    const { send } = await session();
    const result = await send('POST', '/v1/object/Customer', body);
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe(message);
  });

  test('bad class names are 400, internal classes 404, a body that is not an object 400', async () => {
    const { send } = await session({ access: { rules: { '*': { create: ['*'] } } } });
    expectError(await send('POST', '/v1/object/9Bad', {}), '400', 400);
    expectError(await send('POST', `/v1/object/${'A'.repeat(65)}`, {}), '400', 400);
    expectError(await send('POST', '/v1/object/OAuthProvider', {}), '404', 404);
    expectError(await send('POST', '/v1/object/Customer', [1]), '400', 400);
    expect((await send('POST', '/v1/object/NewClass', { A: 1 })).body.data['~ClassName']).toBe('NewClass');
  });

  test('without a create rule it is 403', async () => {
    const { send } = await session({}, 'bob');
    const result = await send('POST', '/v1/object/Customer', { Name: 'x' });
    expectError(result, '403', 403);
    expect(result.body.status.statusMessage).toBe('this session may not create Customer objects');
  });
});

describe('PATCH /v1/object/{objectId}', () => {
  test('merges the members given; null stores null; _ fields stay as stored; the store time moves on', async () => {
    const { send, service } = await session();
    const result = await send('PATCH', '/v1/object/CUS00001', { City: 'Bremen', Revenue: null, '~ClassName': 'Other' });
    expect(result.body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
    expect(result.body.data).toMatchObject({ '~ClassName': 'Customer', '~ObjectID': 'CUS00001', Name: 'Ben Bauer', City: 'Bremen', Revenue: null });
    expect(result.body.data['~StoreTime'] > T0).toBe(true);
    void service;
  });

  test('a matching ~StoreTime writes; an older one is 409 and writes nothing', async () => {
    const { send } = await session();
    const read = (await send('GET', '/v1/object/CUS00002')).body.data;
    const first = await send('PATCH', '/v1/object/CUS00002', { '~StoreTime': read['~StoreTime'], City: 'Kiel' });
    expect(first.body.data.City).toBe('Kiel');
    const second = await send('PATCH', '/v1/object/CUS00002', { '~StoreTime': read['~StoreTime'], City: 'Ulm' });
    expectError(second, '409', 409);
    expect((await send('GET', '/v1/object/CUS00002')).body.data.City).toBe('Kiel');
    expectError(await send('PATCH', '/v1/object/CUS00002', { '~StoreTime': 'yesterday' }), '400', 400);
  });

  test('of two writers holding the same ~StoreTime exactly one wins', async () => {
    const { send } = await session();
    const stamp = (await send('GET', '/v1/object/CUS00003')).body.data['~StoreTime'];
    const results = await Promise.all(['A', 'B', 'C', 'D'].map((city) => send('PATCH', '/v1/object/CUS00003', { '~StoreTime': stamp, City: city })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
  });

  test('unknown, internal and unreadable objects are 404; without an update rule 403', async () => {
    const { send } = await session();
    expectError(await send('PATCH', '/v1/object/NOPE0001', { A: 1 }), '404', 404);
    expectError(await send('PATCH', '/v1/object/USR00002', { A: 1 }), '404', 404);
    expectError(await send('PATCH', '/v1/object/EMP00001', { A: 1 }), '403', 403);
  });
});

describe('DELETE /v1/object/{objectId}', () => {
  test('deletes; references to it serialize as null, sets leave it out; a body is ignored', async () => {
    const { send } = await session();
    const setOwner = (await send('POST', '/v1/object/Customer', { Name: 'S', Friends: { '~Elements': [{ '~ObjectID': 'CUS00005' }, { '~ObjectID': 'CUS00006' }] }, Best: { '~ObjectID': 'CUS00005' } })).body.data['~ObjectID'];
    const result = await send('DELETE', '/v1/object/CUS00005', { any: 'thing' });
    expect(result.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: {} });
    expectError(await send('GET', '/v1/object/CUS00005'), '404', 404);
    const owner = (await send('GET', `/v1/object/${setOwner}`)).body.data;
    expect(owner.Best).toBeNull();
    expect(owner.Friends['~Elements'].map((o: Record<string, string>) => o['~ObjectID'])).toEqual(['CUS00006']);
    expectError(await send('DELETE', '/v1/object/CUS00005'), '404', 404);
  });

  test('without a delete rule it is 403', async () => {
    const { send } = await session({ access: { rules: { Customer: { update: ['sales'], delete: ['support'] } } } });
    expectError(await send('DELETE', '/v1/object/CUS00001'), '403', 403);
  });
});

describe('write hooks', () => {
  test('beforeWrite may change the fields or refuse; afterWrite sees the result; xApi_BuildSerialization shapes the answer', async () => {
    const seen: string[] = [];
    const { send } = await session({
      objects: {
        beforeWrite: async (context, change) => {
          const user = await context.user();
          if (change.fields?.Name === 'forbidden') throw new ApiError('403', 'no such names');
          if (change.fields) change.fields.ChangedBy = String(user?.fields.Name);
        },
        afterWrite: (_context, result) => void seen.push(`${result.action} ${result.object?.fields.Name ?? result.before?.fields.Name}`),
      },
      macros: { xApi_BuildSerialization: (_c, { objectJson }) => ({ ...objectJson, Shaped: true }) },
    });
    const created = await send('POST', '/v1/object/Customer', { Name: 'Hooked' });
    expect(created.body.data).toMatchObject({ Name: 'Hooked', ChangedBy: 'alice', Shaped: true });
    const refused = await send('POST', '/v1/object/Customer', { Name: 'forbidden' });
    expectError(refused, '403', 403);
    expect(refused.body.status.statusMessage).toBe('no such names');
    await send('DELETE', `/v1/object/${created.body.data['~ObjectID']}`);
    expect(seen).toEqual(['create Hooked', 'delete Hooked']);
  });
});
