/**
 * Every login route PROTOCOL.md 2.6 names applies the second factor: `/v1/login`, `/v2/login` (JWT and
 * hybrid), `/v2/login/secure` and `/v1/auth/df` here; `/v1/extLogin` and the linked external login in
 * external-login.test.ts. Each without a code (`341`), with a wrong one (`342`), with the right one,
 * and for a forced application without a secret (`340`).
 */
import { describe, expect, test } from 'vitest';
import type { Service } from '../../src/index.js';
import { clientPassValue } from '../../src/index.js';
import { call, CONTACTS, USERS, type CallResult } from '../helpers.js';
import { typescriptClient } from '../interop/clients.js';
import { nodeKeyPair, rsaBlocksDecrypt, secureLoginBody, serverKeyPem } from '../secure/node-client.js';
import { totpAt } from './rfc6238.js';
import { enrol, expectRefusal, NEED_CODE, OK, twoFactorService, WRONG_CODE, wrongCode } from './support.js';

const clientKeys = nodeKeyPair();

/** A login route: sends the body, answers the HTTP status and the envelope (decrypted where the route encrypts it). */
type LoginRoute = (service: Service, body: Record<string, unknown>) => Promise<{ status: number; envelope: any }>;

const plain =
  (path: string): LoginRoute =>
  async (service, json) => {
    const result = await call(service, 'POST', path, { json });
    return { status: result.status, envelope: result.body };
  };

const hybrid: LoginRoute = async (service, json) => {
  const key = (await call(service, 'GET', '/v2/login/key')).body.data.key as string;
  const client = await typescriptClient({ withoutPublicKey: true });
  const result = await call(service, 'POST', '/v2/login', { body: client.bodyFor(key, Buffer.from(JSON.stringify(json))), headers: { 'content-type': 'application/json' } });
  return { status: result.status, envelope: result.body };
};

const secure: LoginRoute = async (service, json) => {
  const result: CallResult = await call(service, 'POST', '/v2/login/secure', { json: secureLoginBody(await serverKeyPem(service), JSON.stringify(json), clientKeys.publicKey) });
  if (result.body !== undefined) return { status: result.status, envelope: result.body };
  const opened = rsaBlocksDecrypt(clientKeys.privateKey, clientKeys.publicKey, Buffer.from(result.text, 'base64'));
  return { status: result.status, envelope: JSON.parse(opened.toString('utf8')) };
};

const ROUTES: Array<[string, LoginRoute, 'db' | 'df']> = [
  ['POST /v1/login', plain('/v1/login'), 'db'],
  ['POST /v2/login (JWT)', plain('/v2/login'), 'db'],
  ['POST /v2/login (hybrid)', hybrid, 'db'],
  ['POST /v2/login/secure', secure, 'db'],
  ['POST /v1/auth/df', plain('/v1/auth/df'), 'df'],
];

/** alice for `hr`, or the contact person carol (custom login) for `crm`. */
const who = (kind: 'db' | 'df') => (kind === 'db' ? { user: 'alice', pass: clientPassValue(USERS.alice), appNames: ['hr'] } : { user: 'carol', pass: clientPassValue(CONTACTS.carol), appNames: ['crm'] });

/** A session of the same principal through the route's own kind of plain login. */
async function sessionOf(service: Service, kind: 'db' | 'df'): Promise<string> {
  const { user, pass } = who(kind);
  const result = await call(service, 'POST', kind === 'db' ? '/v1/login' : '/v1/auth/df', { json: { user, pass, appNames: [] } });
  return result.body.data.sessionId;
}

const refusal = (code: string, message: string | RegExp) => ({ internalStatus: code, statusMessage: expect.stringMatching(message) });

describe.each(ROUTES)('%s', (_, route, kind) => {
  test('without a code 341, with a wrong one 342, with the right one a login', async () => {
    const { service, clock } = await twoFactorService({}, { hr: 'optional', crm: 'optional' });
    const app = who(kind).appNames[0]!;
    expect((await route(service, who(kind))).envelope.status).toEqual(OK); // no secret yet
    const { key } = await enrol(service, clock, 'alice', app, await sessionOf(service, kind));
    expect(await route(service, who(kind))).toEqual({ status: 401, envelope: { status: refusal('341', NEED_CODE), data: {} } });
    expect(await route(service, { ...who(kind), '2faToken': '' })).toEqual({ status: 401, envelope: { status: refusal('341', NEED_CODE), data: {} } });
    const wrong = await route(service, { ...who(kind), '2faToken': wrongCode(totpAt(key, clock.now())) });
    expect(wrong).toEqual({ status: 401, envelope: { status: refusal('342', WRONG_CODE), data: {} } });
    const right = await route(service, { ...who(kind), '2faToken': totpAt(key, clock.now()) });
    expect(right.status).toBe(200);
    expect(right.envelope.status).toEqual(OK);
    expect(right.envelope.data.user.Name).toBe(who(kind).user);
    const reused = await route(service, { ...who(kind), '2faToken': totpAt(key, clock.now()) });
    expect(reused.envelope.status.internalStatus).toBe('342');
  });

  test('a forced application without a secret: 340 with a session for the two-factor set-up', async () => {
    const { service } = await twoFactorService({}, { hr: 'forced', crm: 'forced' });
    const refused = await route(service, who(kind));
    expect(refused).toEqual({ status: 403, envelope: { status: refusal('340', /requires two-factor login/), data: { sessionId: expect.any(String) } } });
    const headers = { sessionId: refused.envelope.data.sessionId };
    const status = await call(service, 'GET', `/v1/2fa/secret?app=${who(kind).appNames[0]}`, { headers });
    expect(status.body).toEqual({ status: OK, data: { isActivated: false, isConfirmed: false, '2faStatus': 3 } });
    expectRefusal(await call(service, 'GET', '/v1/object/CUS00001', { headers }), '403', 403, /may only set up two-factor login/);
  });
});
