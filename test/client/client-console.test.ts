/**
 * The typed client's administration and saved queries (PROTOCOL.md 6.12) against a real server,
 * through a session and the secure transport.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serve } from '../../adapters/node.js';
import { createClient, OdbRestError, type OdbRestClient } from '../../src/client/index.js';
import { demoAccess } from '../../examples/demo-access.mjs';
import { APP_KEY, demoService, USERS } from '../helpers.js';
import { KEY } from '../interop/vectors.js';

let server: Awaited<ReturnType<typeof serve>>;
let baseUrl: string;

beforeAll(async () => {
  const service = await demoService({ access: demoAccess, users: { admins: 'admins' }, secure: { serverKey: KEY.privateKey } });
  server = await serve(service, { port: 0, hostname: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const alice = { user: 'alice', password: USERS.alice, appNames: ['crm'] };

describe.each([
  ['session', (odb: OdbRestClient) => odb.login(alice)],
  ['secure', (odb: OdbRestClient) => odb.loginSecure(alice)],
] as const)('the console calls through a %s login', (kind, logIn) => {
  let odb: OdbRestClient;
  beforeAll(async () => {
    odb = createClient({ baseUrl, appKey: APP_KEY });
    await logIn(odb);
  });

  test('declares a class, refuses one stored objects break (409 with its data), removes it', async () => {
    const className = `Ticket_${kind}`;
    const declared = await odb.admin.declareClass(className, { Fields: { Title: { Type: 'string', Required: true } }, Description: 'tickets' });
    expect(declared).toMatchObject({ Name: className, Declared: true, Runtime: true, Description: 'tickets', Members: [{ Name: 'Title', Type: 'string', Required: true }] });
    const refused = await odb.admin.declareClass('Customer', { Fields: { Segment: { Type: 'string', Required: true } } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OdbRestError);
    expect((refused as OdbRestError).internalStatus).toBe('409');
    expect((refused as OdbRestError).data).toMatchObject({ Violations: 300 });
    await odb.admin.removeClassDeclaration(className);
  });

  test('reads the metrics and the recent requests', async () => {
    const metrics = await odb.admin.metrics(5);
    expect(metrics.Series.Requests).toHaveLength(30);
    const requests = await odb.admin.requests({ perPage: 2 });
    expect(requests['~Elements']).toHaveLength(2);
    expect(requests['~Elements'][0]).toMatchObject({ Method: 'GET', Route: '/v1/admin/metrics', Status: 200, Code: '0', User: 'alice' });
  });

  test('saves, lists and removes queries', async () => {
    const saved = await odb.savedQueries.save(`Kiel ${kind}`, { Class: 'Customer', Query: 'City = "Kiel"', Columns: ['Name'] });
    expect(saved).toEqual({ Name: `Kiel ${kind}`, Class: 'Customer', Query: 'City = "Kiel"', Columns: ['Name'] });
    expect((await odb.savedQueries.list()).map((query) => query.Name)).toContain(`Kiel ${kind}`);
    await expect(odb.savedQueries.save('bad', { Class: 'Customer', Query: 'City =' })).rejects.toMatchObject({ internalStatus: '400' });
    await odb.savedQueries.remove(`Kiel ${kind}`);
    await expect(odb.savedQueries.remove(`Kiel ${kind}`)).rejects.toMatchObject({ internalStatus: '404' });
  });
});
