/**
 * The typed client when no answer comes (a closed port, a server gone, an aborted fetch): a typed
 * `OdbRestNetworkError`, not `TypeError: fetch failed`; and its errors recognised across copies of
 * the package (the built ESM and CommonJS files), as the server's are.
 */
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from 'vitest';
import { serve } from '../../adapters/node.js';
import { createClient, OdbRestError, OdbRestNetworkError, type LoginCredentials } from '../../src/client/index.js';
import { clientPassValue } from '../../src/index.js';
import { APP_KEY, demoService, USERS } from '../helpers.js';

const alice: LoginCredentials = { user: 'alice', password: USERS.alice, appNames: ['crm'] };

/** A port nothing listens on: one a server just had and gave back. */
async function closedPort(): Promise<number> {
  const server = await serve(await demoService(), { port: 0, hostname: '127.0.0.1' });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const caught = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

describe('OdbRestNetworkError', () => {
  test('a closed port: the method, the address, the cause and the system code; no password', async () => {
    const port = await closedPort();
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}/api`, appKey: APP_KEY });
    const error = await caught(client.login(alice));
    expect(error).toBeInstanceOf(OdbRestNetworkError);
    const network = error as OdbRestNetworkError;
    expect([network.name, network.method, network.url]).toEqual(['OdbRestNetworkError', 'POST', `http://127.0.0.1:${port}/api/v1/login`]);
    expect(network.message).toBe(`POST http://127.0.0.1:${port}/api/v1/login: the service could not be reached (ECONNREFUSED)`);
    expect(network.cause).toBeInstanceOf(TypeError); // what fetch threw, kept whole
    expect(`${network.message} ${network.stack}`).not.toContain(clientPassValue(USERS.alice));
    expect(client.sessionKind).toBeUndefined();
  });

  test('the server goes away after the login: the next request names no session id, query or user info', async () => {
    const server = await serve(await demoService(), { port: 0, hostname: '127.0.0.1' });
    const { port } = server.address() as AddressInfo;
    // user info in the base address (for a proxy, say), which fetch itself refuses in URLs
    const withoutUserInfo = (url: string) => Object.assign(new URL(url), { username: '', password: '' });
    const client = createClient({ baseUrl: `http://user:secret@127.0.0.1:${port}`, appKey: APP_KEY, fetch: (url, init) => fetch(withoutUserInfo(url), init) });
    const { sessionId } = await client.login(alice);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const error = await caught(client.listObjects('Customer', { query: { City: 'Berlin' } }));
    expect(error).toBeInstanceOf(OdbRestNetworkError);
    const network = error as OdbRestNetworkError;
    expect(network.url).toBe(`http://127.0.0.1:${port}/v1/objects/Customer`);
    for (const secret of [sessionId, 'secret', 'Berlin', APP_KEY]) expect(network.message).not.toContain(secret);
    expect(client.credential).toEqual({ sessionId }); // nothing said the session ended
  });

  test('an aborted fetch (a timeout the app set) is one too, its reason the abort', async () => {
    const client = createClient({
      baseUrl: 'http://odbrest.test',
      appKey: APP_KEY,
      fetch: (url, init) => fetch(url, { ...init, signal: AbortSignal.abort() }),
    });
    const error = await caught(client.checkService());
    expect(error).toBeInstanceOf(OdbRestNetworkError);
    expect((error as Error).message).toBe('GET http://odbrest.test/_CheckService: the service could not be reached (AbortError)');
    expect((error as Error).cause).toMatchObject({ name: 'AbortError' });
  });

  test('an answer, even 503, is no network error', async () => {
    const client = createClient({ baseUrl: 'http://odbrest.test', appKey: APP_KEY, fetch: async () => new Response('{"status":{"internalStatus":"503","statusMessage":"down"},"data":{}}', { status: 503 }) });
    const error = await caught(client.checkService());
    expect(error).toBeInstanceOf(OdbRestError);
    expect(error).not.toBeInstanceOf(OdbRestNetworkError);
  });
});

describe('errors across copies of the package', () => {
  // dist/ is built by the global setup; the CommonJS file is a second copy of every class
  const esm = () => import('../../dist/client.js') as Promise<typeof import('../../src/client/index.js')>;
  const cjs = () => createRequire(import.meta.url)('../../dist/client.cjs') as typeof import('../../src/client/index.js');

  test('an error of one copy is an instance of the other copy\'s class, and of no unrelated one', async () => {
    const [a, b] = [await esm(), cjs()];
    expect(a.OdbRestError).not.toBe(b.OdbRestError);
    const service = await demoService();
    const viaB = b.createClient({ baseUrl: 'http://odbrest.test', appKey: APP_KEY, fetch: (url, init) => service.fetch(new Request(url, init)) });
    const refused = await caught(viaB.getObject('USR00001'));
    expect(refused).toBeInstanceOf(b.OdbRestError);
    expect(refused).toBeInstanceOf(a.OdbRestError);
    expect(refused).toBeInstanceOf(OdbRestError);
    expect(refused).not.toBeInstanceOf(a.OdbRestNetworkError);

    const offline = b.createClient({ baseUrl: `http://127.0.0.1:${await closedPort()}`, appKey: APP_KEY });
    const unreachable = await caught(offline.checkService());
    expect(unreachable).toBeInstanceOf(a.OdbRestNetworkError);
    expect(unreachable).not.toBeInstanceOf(a.OdbRestError);

    const conflict = new b.OdbRestConflictError(409, 'changed');
    expect([conflict instanceof a.OdbRestConflictError, conflict instanceof a.OdbRestError, conflict instanceof a.TwoFactorError]).toEqual([true, true, false]);
    const twoFactor = new b.TwoFactorError('341', 401, 'code needed');
    expect([twoFactor instanceof a.TwoFactorError, twoFactor instanceof a.OdbRestError, twoFactor instanceof a.OdbRestConflictError]).toEqual([true, true, false]);
    expect([new b.OdbRestProtocolError('x', 200) instanceof a.OdbRestProtocolError, new b.OdbRestUnauthenticatedRefusal('205', 401, '') instanceof a.OdbRestUnauthenticatedRefusal]).toEqual([true, true]);
    expect(new Error('plain')).not.toBeInstanceOf(a.OdbRestError);
  });
});
