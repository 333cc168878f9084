/**
 * Issue 12, finding 2: on a secure session, `odbrest/client` refused an unencrypted answer only below
 * HTTP 400. An attacker on the path answering HTTP 401 or 500 with `{"status":{"internalStatus":"0"},
 * "data":{...}}` had its data returned as a success, and forged `404` or `303` (`Retry-After: 99999`)
 * were taken as the server's word. Now no data is ever taken from an unencrypted answer: the
 * refusals PROTOCOL.md 4 sends in the clear (`201`, `204`, `205`, `413`, `503`, each with its HTTP
 * status) are an `OdbRestUnauthenticatedRefusal`, everything else is an `OdbRestProtocolError`.
 * The client talks to the real Node example through an on-path proxy.
 */
import { createClient, OdbRestProtocolError, OdbRestUnauthenticatedRefusal, type OdbRestClient } from 'odbrest/client';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { startServer, type RunningServer } from '../adapters/servers.js';
import { USERS } from '../helpers.js';
import { onPath, type OnPath } from './on-path.js';

let server: RunningServer;
let attacker: OnPath;
let client: OdbRestClient;

beforeAll(async () => {
  server = await startServer('node');
  attacker = await onPath(server.origin);
  client = createClient({ baseUrl: `${attacker.origin}/api`, appKey: 'sec' });
  await client.loginSecure({ user: 'alice', password: USERS.alice, appNames: ['crm'] });
});
afterAll(async () => {
  await attacker?.close();
  await server?.stop();
});
beforeEach(() => attacker.intercept(undefined));

/** The attacker answers every secure request with this unencrypted envelope. */
function forge(httpStatus: number, internalStatus: string, data: unknown = {}, headers: Record<string, string> = {}): void {
  attacker.intercept(({ headers: sent }) =>
    sent.has('secure-token')
      ? Response.json({ status: { internalStatus, statusMessage: 'forged' }, data }, { status: httpStatus, headers })
      : undefined,
  );
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => ({ returned: value }),
    (error: unknown) => error,
  );
}

const MALLORY = { '~ClassName': 'User', '~ObjectID': 'USR00001', '~StoreTime': '20260101T000000+00:00', Name: 'mallory' };

describe('forged unencrypted answers are never data, nor the server word', () => {
  test.each([
    [401, '0', MALLORY, {}],
    [500, '0', MALLORY, {}],
    [200, '0', MALLORY, {}],
    [404, '404', {}, {}],
    [429, '303', {}, { 'retry-after': '99999' }],
    [403, '403', {}, {}],
    [500, '500', {}, {}],
    [200, '205', {}, {}], // a refusal code under the wrong HTTP status
    [401, '413', {}, {}],
    [503, '201', {}, {}],
  ] as const)('HTTP %i with internalStatus %s is a protocol error', async (httpStatus, internalStatus, data, headers) => {
    forge(httpStatus, internalStatus, data, headers);
    const failure = await failureOf(client.getObject('USR00001'));
    expect(failure).toBeInstanceOf(OdbRestProtocolError);
    expect(failure).toMatchObject({
      httpStatus,
      message: `secure response refused: an answer (HTTP ${httpStatus}) was not encrypted and is not a transport refusal`,
    });
  });

  test('a body that is no envelope is a protocol error too', async () => {
    attacker.intercept(({ headers }) => (headers.has('secure-token') ? new Response('<html>login</html>', { status: 401 }) : undefined));
    expect(await failureOf(client.execute('greet', { name: 'x' }))).toBeInstanceOf(OdbRestProtocolError);
  });
});

describe("the protocol's unencrypted refusals are unauthenticated refusals", () => {
  test.each([
    [401, '201'],
    [401, '204'],
    [401, '205'],
    [413, '413'],
    [503, '503'],
  ] as const)('HTTP %i with internalStatus %s', async (httpStatus, internalStatus) => {
    forge(httpStatus, internalStatus, MALLORY, { 'retry-after': '99999' });
    const failure = await failureOf(client.getObject('USR00001'));
    expect(failure).toBeInstanceOf(OdbRestUnauthenticatedRefusal);
    expect(failure).toMatchObject({
      name: 'OdbRestUnauthenticatedRefusal',
      internalStatus,
      httpStatus,
      claimedMessage: 'forged',
      message: `unauthenticated refusal ${internalStatus} (HTTP ${httpStatus}): the answer was neither encrypted nor signed, so it may have been forged by anyone on the path`,
    });
    expect(failure).not.toHaveProperty('data');
    expect(failure).not.toHaveProperty('retryAfter');
  });

  test("the server's own 205 (a request altered on the way) and 413 (a body over the limit) arrive as such", async () => {
    attacker.intercept(({ headers }) => {
      if (!headers.has('secure-signature')) return undefined;
      headers.set('secure-signature', Buffer.alloc(32).toString('base64'));
      return headers;
    });
    expect(await failureOf(client.getObject('USR00001'))).toMatchObject({ name: 'OdbRestUnauthenticatedRefusal', internalStatus: '205', httpStatus: 401 });
    attacker.intercept(undefined);
    const large = await failureOf(client.execute('greet', { name: 'x'.repeat(1024 * 1024) }));
    expect(large).toMatchObject({ name: 'OdbRestUnauthenticatedRefusal', internalStatus: '413', httpStatus: 413 });
  });

  test('after forged answers the session goes on: the attacker could refuse, never inject', async () => {
    forge(401, '201');
    await expect(client.getObject('USR00001')).rejects.toBeInstanceOf(OdbRestUnauthenticatedRefusal);
    attacker.intercept(undefined);
    expect((await client.getObject('USR00001'))['Name']).toBe('alice');
  });
});
