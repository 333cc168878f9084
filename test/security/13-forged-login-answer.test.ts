/**
 * Issue 23, item 1: a client pinned to the server key refused a substituted key, but an on-path
 * attacker who relayed the real key, kept the login request from the server and answered it itself
 * (sealed to the `publicKey` the request carried, with its own token and key) was believed. The
 * server now signs its secure and hybrid login answers (`Login-Signature`, PROTOCOL.md 3.3) and the
 * pinned client verifies the signature before it uses anything in the answer.
 */
import { describe, expect, test } from 'vitest';
import { createClient, OdbRestProtocolError, type FetchFunction } from '../../src/client/index.js';
import { exportKeyPairPem, generateRsaKeyPair, importClientPublicKey, OAEP_SHA256 } from '../../src/secure/keys.js';
import { sealHybridAnswer } from '../../src/secure/hybrid.js';
import { blockEncrypt } from '../../src/secure/rsa.js';
import { demoService, USERS } from '../helpers.js';
import type { Service } from '../../src/index.js';

const alice = { user: 'alice', password: USERS.alice, appNames: ['crm'] };
const BASE = 'http://odbrest.test';

async function pinnedSetup() {
  const pair = await exportKeyPairPem(await generateRsaKeyPair(2048));
  const service = await demoService({ appKeys: ['k'], secure: { serverKey: pair.privateKey } });
  return { service, serverPem: pair.publicKey };
}

/** The attacker's own login answer for the request's publicKey: its token and AES key, the user it chose. */
function forgedEnvelope() {
  return JSON.stringify({
    status: { internalStatus: '0', statusMessage: 'ok' },
    data: { sessionId: 'attacker-token', symmetricKey: btoa(String.fromCharCode(...new Uint8Array(32).fill(7))), user: { Name: 'alice' }, databaseName: 'odbrest' },
  });
}

type Forge = (body: any, path: string) => Promise<Response | undefined>;

/** A fetch that relays everything to the service (so the real key passes), but answers the login itself with `forge`. */
function onPath(service: Service, forge: Forge, seen: string[] = []): FetchFunction {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname;
    seen.push(`${request.method} ${path}`);
    if (request.method === 'POST' && (path === '/v2/login/secure' || path === '/v2/login')) {
      const body = JSON.parse(await request.clone().text());
      const forged = await forge(body, path);
      if (forged) return forged;
    }
    return service.fetch(request, { clientAddress: '127.0.0.1' });
  }) as FetchFunction;
}

const forgeSecure: Forge = async (body, path) => {
  if (path !== '/v2/login/secure') return undefined;
  const clientKey = await importClientPublicKey(body.publicKey);
  const sealed = await blockEncrypt(clientKey, new TextEncoder().encode(forgedEnvelope()));
  return new Response(btoa(String.fromCharCode(...sealed)), { headers: { 'content-type': 'text/plain; charset=utf-8' } });
};

const forgeHybrid: Forge = async (body, path) => {
  if (path !== '/v2/login' || !body.publicKey) return undefined;
  const clientKey = await importClientPublicKey(body.publicKey, OAEP_SHA256);
  const forged = JSON.stringify({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { sessionId: 'attacker-session', user: { Name: 'alice' }, databaseName: 'odbrest' } });
  return new Response(await sealHybridAnswer(clientKey, forged), { headers: { 'content-type': 'text/plain; charset=utf-8' } });
};

describe('Login-Signature: a pinned client believes only the server', () => {
  test('secure login: a forged answer sealed to the request key is refused; the real answer logs in', async () => {
    const { service, serverPem } = await pinnedSetup();
    const seen: string[] = [];
    const attacked = createClient({ baseUrl: BASE, appKey: 'k', serverKey: serverPem, fetch: onPath(service, forgeSecure, seen) });
    const refused = await attacked.loginSecure(alice).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OdbRestProtocolError);
    expect((refused as Error).message).toMatch(/Login-Signature is missing or does not verify/);
    expect(attacked.credential).toBeUndefined();
    expect(seen).toEqual(['GET /v2/login/secure/key', 'POST /v2/login/secure']);

    const honest = createClient({ baseUrl: BASE, appKey: 'k', serverKey: serverPem, fetch: onPath(service, async () => undefined) });
    const answer = await honest.loginSecure(alice);
    expect(answer.user).toMatchObject({ Name: 'alice' });
    expect(await honest.checkSession()).toBe(true);
  });

  test('hybrid login: a forged sealed answer is refused; the real one logs in; a pinned client will not take the unsigned plain answer', async () => {
    const { service, serverPem } = await pinnedSetup();
    const attacked = createClient({ baseUrl: BASE, appKey: 'k', serverKey: serverPem, fetch: onPath(service, forgeHybrid) });
    const refused = await attacked.loginHybrid(alice).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OdbRestProtocolError);
    expect((refused as Error).message).toMatch(/Login-Signature is missing or does not verify/);
    expect(attacked.credential).toBeUndefined();
    await expect(attacked.loginHybrid(alice, { plainAnswer: true })).rejects.toThrow(/cannot take the plain hybrid answer/);

    const honest = createClient({ baseUrl: BASE, appKey: 'k', serverKey: serverPem, fetch: onPath(service, async () => undefined) });
    const answer = await honest.loginHybrid(alice);
    expect(answer.sessionId).toEqual(expect.any(String));
    expect(await honest.checkSession()).toBe(true);
  });

  test('the signature covers the request key: a real answer and its signature replayed to another login (another client key) is refused', async () => {
    const { service, serverPem } = await pinnedSetup();
    let saved: { text: string; signature: string | null } | undefined;
    // first a real answer is recorded; then it is replayed to a second login (another client key)
    const record: Forge = async (body, path) => {
      if (path !== '/v2/login/secure') return undefined;
      const real = await service.fetch(new Request(`${BASE}${path}`, { method: 'POST', headers: { appkey: 'k', 'content-type': 'application/json' }, body: JSON.stringify(body) }));
      const text = await real.text();
      if (!saved) {
        saved = { text, signature: real.headers.get('login-signature') };
        return new Response(text, { headers: real.headers });
      }
      return new Response(saved.text, { headers: { 'content-type': 'text/plain', 'login-signature': saved.signature! } });
    };
    const client = createClient({ baseUrl: BASE, appKey: 'k', serverKey: serverPem, fetch: onPath(service, record) });
    await client.loginSecure(alice);
    await expect(client.loginSecure(alice)).rejects.toThrow(/Login-Signature/);
  });
});
