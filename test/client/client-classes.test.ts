/**
 * The typed client's `classes()` and `referencedBy()` (PROTOCOL.md 6.11) against a real server, through
 * each login kind: session, token and the secure transport.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serve } from '../../adapters/node.js';
import { createClient, OdbRestError, type OdbRestClient, type SerializedObject } from '../../src/client/index.js';
import { demoAccess } from '../../examples/demo-access.mjs';
import { APP_KEY, demoService, USERS } from '../helpers.js';
import { KEY } from '../interop/vectors.js';

interface Customer extends SerializedObject {
  Name: string;
  AccountManager: SerializedObject;
}

let server: Awaited<ReturnType<typeof serve>>;
let baseUrl: string;

beforeAll(async () => {
  const service = await demoService({ access: demoAccess, secure: { serverKey: KEY.privateKey } });
  server = await serve(service, { port: 0, hostname: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const alice = { user: 'alice', password: USERS.alice, appNames: ['crm'] };

describe.each([
  ['session', (odb: OdbRestClient) => odb.login(alice)],
  ['token', (odb: OdbRestClient) => odb.loginToken(alice)],
  ['secure', (odb: OdbRestClient) => odb.loginSecure(alice)],
] as const)('classes and referencedBy through a %s login', (kind, logIn) => {
  let odb: OdbRestClient;
  beforeAll(async () => {
    odb = createClient({ baseUrl, appKey: APP_KEY });
    await logIn(odb);
    expect(odb.sessionKind).toBe(kind);
  });

  test('classes(): the readable classes by name, with counts', async () => {
    const classes = await odb.classes();
    expect(classes['~Count']).toBe(8);
    expect(classes['~Elements'].map((entry) => [entry.Name, entry.Count])).toEqual([
      ['Bild', 4],
      ['ContactPerson', 1],
      ['Customer', 300],
      ['Document', 3],
      ['Dokument', 0],
      ['Employee', 3],
      ['User', 1],
      ['UserGroup', 3],
    ]);
    expect(classes['~Elements'].every((entry) => entry.Declared === false && entry.CountEstimated === undefined)).toBe(true);
  });

  test('referencedBy(): a page of the referencing objects, typed, with serialization', async () => {
    const page = await odb.referencedBy<Customer>('EMP00002', { page: 1, perPage: 2 });
    expect(page['~UnfilteredCount']).toBe(150);
    expect(page['~Elements'].map((customer) => [customer['~ObjectID'], customer.AccountManager['~ObjectID']])).toEqual([
      ['CUS00006', 'EMP00002'],
      ['CUS00008', 'EMP00002'],
    ]);
    const ids = await odb.referencedBy('GRP00002', { serialization: { type: 'oid' } });
    expect(ids).toEqual({ '~Count': 1, '~UnfilteredCount': 1, '~Elements': [{ '~ObjectID': 'USR00001' }] });
    const missing = odb.referencedBy('USR00002');
    await expect(missing).rejects.toBeInstanceOf(OdbRestError);
    await expect(missing).rejects.toMatchObject({ internalStatus: '404', httpStatus: 404 });
  });
});
