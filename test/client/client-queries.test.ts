/**
 * The typed client's query options (PROTOCOL.md 6.2): query text, `oids`, `sortIndex`, `macro`,
 * `folderPath` and `serialization` on listings and on the v2 `byQuery` call, against a real server.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serve } from '../../adapters/node.js';
import { createClient, OdbRestError, type OdbRestClient, type SerializedObject } from '../../src/client/index.js';
import type { SelectionMacro } from '../../src/index.js';
import { APP_KEY, demoService, USERS } from '../helpers.js';

interface Customer extends SerializedObject {
  Name: string;
  Number: number;
  City: string;
}

const evenNumbers: SelectionMacro = (_context, { objects }) => objects.filter((object) => (object.fields.Number as number) % 2 === 0);
let server: Awaited<ReturnType<typeof serve>>;
let odb: OdbRestClient;

beforeAll(async () => {
  const service = await demoService({ macros: { evenNumbers }, folders: (_context, { folderPath }) => (folderPath === '/Key accounts' ? ['CUS00001', 'CUS00002', 'CUS00003'] : []) });
  server = await serve(service, { port: 0, hostname: '127.0.0.1' });
  odb = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, appKey: APP_KEY });
  await odb.login({ user: 'alice', password: USERS.alice, appNames: ['crm'] });
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const ids = (set: { '~Elements': SerializedObject[] }) => set['~Elements'].map((o) => o['~ObjectID']);

describe('listObjects query options', () => {
  test('query text as query or queryText, with field conditions', async () => {
    const text = await odb.listObjects<Customer>('Customer', { query: 'City = "Berlin" and Number < 30', orderBy: 'Number' });
    expect(text['~Elements'].every((o) => o.City === 'Berlin' && o.Number < 30)).toBe(true);
    expect(text['~Count']).toBeGreaterThan(0);
    const same = await odb.listObjects<Customer>('Customer', { query: { City: 'Berlin' }, queryText: 'Number < 30', orderBy: 'Number' });
    expect(ids(same)).toEqual(ids(text));
    await expect(odb.listObjects('Customer', { query: 'City =' })).rejects.toMatchObject({ internalStatus: '400', message: expect.stringContaining("expected a value after '='") });
  });

  test('oids, sortIndex, macro and folderPath combine; serialization shapes the answer', async () => {
    const set = await odb.listObjects<Customer>('Customer', { oids: ['CUS00001', 'CUS00002', 'CUS00004', 'CUS00005'], sortIndex: '!Number', macro: 'evenNumbers', macroLevel: 1, serialization: { type: 'oid' } });
    expect(set).toEqual({ '~Count': 2, '~UnfilteredCount': 2, '~Elements': [{ '~ObjectID': 'CUS00004' }, { '~ObjectID': 'CUS00002' }] });
    const folder = await odb.listObjects<Customer>('Customer', { folderPath: '/Key accounts', sortIndex: 'Number' });
    expect(ids(folder)).toEqual(['CUS00001', 'CUS00002', 'CUS00003']);
    const both = await odb.listObjects<Customer>('Customer', { folderPath: '/Key accounts', macro: 'evenNumbers' });
    expect(ids(both)).toEqual(['CUS00002']);
    await expect(odb.listObjects('Customer', { macro: 'nothing' })).rejects.toMatchObject({ internalStatus: '400', message: 'query member macro: no macro nothing' });
    expect(() => odb.listObjects('Customer', { query: 'a = 1', queryText: 'b = 2' })).toThrow(TypeError);
  });
});

describe('v2 byQuery query options', () => {
  test('query text stays text; the other members are sent as the query object', async () => {
    const [text, members, conditions] = await odb.v2.byQuery<Customer>([
      { className: 'Customer', query: 'City = Berlin', perPage: 3, order: 'Number ASC', serialization: { type: 'custom', custom: { fieldList: ['City'] } } },
      { className: 'Customer', queryText: 'Number <= 6', oids: ['CUS00001', 'CUS00002', 'CUS00004', 'CUS00009'], sortIndex: '!Number', macro: 'evenNumbers', serialization: { type: 'oid' } },
      { className: 'Customer', query: { City: 'Hamburg' }, folderPath: '/Key accounts' },
    ]);
    expect(text!['~Elements'].map((o) => Object.keys(o).sort())).toEqual(Array(3).fill(['City', '~ClassName', '~ObjectID', '~StoreTime']));
    expect(text!['~Elements'].every((o) => o.City === 'Berlin')).toBe(true);
    expect(members).toEqual({ '~Count': 2, '~UnfilteredCount': 2, '~Elements': [{ '~ObjectID': 'CUS00004' }, { '~ObjectID': 'CUS00002' }] });
    expect(ids(conditions!)).toEqual(['CUS00001']);
    const refused = odb.v2.byQuery([{ className: 'Customer', folderType: '' }]);
    await expect(refused).rejects.toBeInstanceOf(OdbRestError);
    await expect(refused).rejects.toMatchObject({ internalStatus: '400', message: expect.stringContaining('folderType') });
  });
});
