/** The typed client's object writes and typed listings (odbrest/client) against the real service. */
import { describe, expect, test } from 'vitest';
import { createClient, OdbRestConflictError, OdbRestError, type SerializedObject } from '../../src/client/index.js';
import { demoAccess } from '../../examples/demo-access.mjs';
import { APP_KEY, demoService, USERS } from '../helpers.js';

interface Customer extends SerializedObject {
  Name: string;
  Number: number;
  City: string;
}

async function client(user: 'alice' | 'bob' = 'alice') {
  const service = await demoService({ access: demoAccess, objects: { serialization: { styles: { Customer: { preview: ['Name'] } } } } });
  const odb = createClient({ baseUrl: 'http://odbrest.test/', appKey: APP_KEY, fetch: (input, init) => service.fetch(new Request(input, init)) });
  await odb.login({ user, password: USERS[user], appNames: ['crm'] });
  return odb;
}

describe('client writes', () => {
  test("the login's answer carries acls, typed as the service declares them (PROTOCOL.md 2.2)", async () => {
    const service = await demoService({ access: demoAccess });
    const odb = createClient({ baseUrl: 'http://odbrest.test/', appKey: APP_KEY, fetch: (input, init) => service.fetch(new Request(input, init)) });
    const login = await odb.login({ user: 'alice', password: USERS.alice, appNames: ['crm'] });
    const [crm] = login.acls['~Elements'];
    expect(login.acls['~Count']).toBe(1);
    expect(crm).toMatchObject({ Application: 'crm', UserName: 'alice', Status: 0, ParallelConnections: 0, AddOns: { '~Count': 0, '~Elements': [] } });
  });

  test('createObject, updateObject with the store time read, deleteObject', async () => {
    const odb = await client();
    const created = await odb.createObject<Customer>('Customer', { Name: 'Client', Number: 900, City: 'Kiel', AccountManager: { '~ObjectID': 'EMP00001' } });
    expect(created).toMatchObject({ '~ClassName': 'Customer', Name: 'Client', City: 'Kiel', AccountManager: { '~ObjectID': 'EMP00001' } });
    const id = created['~ObjectID'];
    const updated = await odb.updateObject<Customer>(id, { City: 'Ulm' }, { storeTime: created['~StoreTime'] });
    expect(updated.City).toBe('Ulm');
    const stale = odb.updateObject(id, { City: 'Bonn' }, { storeTime: created['~StoreTime'] });
    await expect(stale).rejects.toBeInstanceOf(OdbRestConflictError);
    await expect(stale).rejects.toMatchObject({ internalStatus: '409', httpStatus: 409 });
    expect((await odb.updateObject<Customer>(id, { City: 'Bonn' })).City).toBe('Bonn');
    await odb.deleteObject(id);
    await expect(odb.getObject(id)).rejects.toMatchObject({ internalStatus: '404' });
  });

  test('a refused write is an OdbRestError with 403', async () => {
    const odb = await client('bob');
    const refused = odb.createObject('Customer', { Name: 'x' });
    await expect(refused).rejects.toBeInstanceOf(OdbRestError);
    await expect(refused).rejects.toMatchObject({ internalStatus: '403', httpStatus: 403 });
  });

  test('listObjects with typed filters and ordering', async () => {
    const odb = await client();
    const page = await odb.listObjects<Customer>('Customer', {
      query: { City: 'Berlin', Number: { $lte: 60 }, AccountManager: { '~ObjectID': 'EMP00002' } },
      orderBy: '-Number',
      perPage: 3,
    });
    expect(page['~UnfilteredCount']).toBe(10);
    expect(page['~Elements'].map((c) => c.Number)).toEqual([60, 54, 48]);
  });

  test('serialization on getObject, listObjects, createObject and updateObject', async () => {
    const odb = await client();
    expect(await odb.getObject('CUS00003', { serialization: { type: 'oid', getSize: true } })).toEqual({ '~ObjectID': 'CUS00003', '~Size': 0 });
    const listed = await odb.listObjects('Customer', { perPage: 2, serialization: { type: 'custom', custom: { fieldList: ['City'] } } });
    expect(listed['~Elements'].map((c) => Object.keys(c))).toEqual([0, 1].map(() => ['~ClassName', '~ObjectID', '~StoreTime', 'City']));
    const created = await odb.createObject('Customer', { Name: 'Typed', City: 'Kiel' }, { serialization: { type: 'class', style: 'preview' } });
    expect(Object.keys(created)).toEqual(['~ClassName', '~ObjectID', '~StoreTime', 'Name']);
    const updated = await odb.updateObject(created['~ObjectID'], { City: 'Ulm' }, { storeTime: created['~StoreTime'], serialization: { type: 'class', style: 'preview', classes: { Customer: { type: 'empty', securityRights: true } } } });
    expect(updated).toEqual({ '~ClassName': 'Customer', '~ObjectID': created['~ObjectID'], '~StoreTime': expect.any(String), '~SecurityRights': 1 | 2 | 4 | 8 | 16 });
    await expect(odb.getObject('CUS00003', { serialization: { type: 'macro', macro: 'none' } })).rejects.toMatchObject({ internalStatus: '404' });
  });
});
