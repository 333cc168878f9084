/**
 * The interoperability suite (issue 18): each of the three independent node:crypto clients
 * (clients.ts: Dart-, TypeScript- and C#-style) does what the product's real clients do, against the
 * real service, in process and over HTTP: hybrid login, the session in its own header spelling,
 * `_CheckSession`, a `/v1/multi` batch, logout, and the check again.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serve } from '../../adapters/node.js';
import type { Service } from '../../src/index.js';
import { APP_KEY, demoService } from '../helpers.js';
import { csharpClient, dartClient, typescriptClient, type Connection, type InteropClient } from './clients.js';
import { KEY } from './vectors.js';

const OK = { internalStatus: '0', statusMessage: 'ok' };

let service: Service;
let server: Server;
const connections: Record<string, Connection> = {};

beforeAll(async () => {
  service = await demoService({ databaseName: 'demo', secure: { serverKey: KEY.privateKey }, mount: { basePath: '/api', alias: 'demo' } });
  server = await serve(service, { port: 0, hostname: '127.0.0.1' });
  const port = (server.address() as AddressInfo).port;
  connections['in process'] = {
    transport: (url, init) => service.fetch(new Request(url, init), { clientAddress: '10.2.0.1' }),
    baseUrl: 'http://odbrest.test/api/demo',
    appKey: APP_KEY,
  };
  connections['over HTTP'] = { transport: (url, init) => fetch(url, init), baseUrl: `http://127.0.0.1:${port}/api/demo`, appKey: APP_KEY };
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const json = async (response: Response) => ({ status: response.status, body: await response.json() });

describe.each(['in process', 'over HTTP'])('%s', (where) => {
  test.each([
    ['Dart', dartClient, 'sessionid'],
    ['TypeScript', typescriptClient, 'sessionId'],
    ['C#', csharpClient, 'sessionId'],
  ] as const)('the %s client logs in, uses and checks its session, batches, logs out', async (_name, make, header) => {
    const connection = connections[where]!;
    const client: InteropClient = await make();
    const login = await client.login(connection, { user: 'bob', password: 'bob-secret', appNames: ['crm'] });
    expect(login.sealed).toBe(true);
    expect(login.envelope).toMatchObject({ status: OK, data: { user: { Name: 'bob' }, databaseName: 'demo' } });
    const sessionId = login.sessionId;

    const sent: string[] = [];
    const seen: Connection = { ...connection, transport: (url, init) => (sent.push(Object.keys(init.headers as object).join(',')), connection.transport(url, init)) };
    const customer = await json(await client.request(seen, 'GET', '/v1/object/CUS00001?', { sessionId }));
    expect([customer.status, customer.body.data['~ObjectID']]).toEqual([200, 'CUS00001']);
    expect(sent[0]).toContain(header);

    const check = await json(await client.request(connection, 'GET', '/_CheckSession', { sessionId }));
    expect(check).toEqual({ status: 200, body: { status: OK, data: {} } });

    const items = [
      { method: 'GET', path: '/v1/object/CUS00001' },
      { method: 'GET', path: '/v1/object/NOPE0000?' },
      { method: 'GET', path: '/_CheckSession' },
    ];
    const batch = await json(await client.request(connection, 'POST', '/v1/multi', { sessionId, json: items }));
    expect(batch.body.status).toEqual(OK);
    expect(batch.body.data.map((item: any) => [item.httpStatus, item.result.status.internalStatus])).toEqual([
      [200, '0'],
      [404, '404'],
      [200, '0'],
    ]);
    expect(batch.body.data[0].result).toEqual(customer.body);

    const out = await json(await client.request(connection, 'POST', '/v1/logout', { sessionId }));
    expect(out.body).toEqual({ status: { internalStatus: '0', statusMessage: 'logged out' }, data: {} });
    const after = await json(await client.request(connection, 'GET', '/_CheckSession', { sessionId }));
    expect([after.status, after.body.status.internalStatus]).toEqual([401, '201']);
  });

  test('_CheckService with no headers at all', async () => {
    const connection = connections[where]!;
    const answer = await json(await connection.transport(`${connection.baseUrl}/_CheckService`, { method: 'GET' }));
    expect([answer.status, answer.body.status, answer.body.data.applicationName]).toEqual([200, OK, 'odbrest']);
  });
});
