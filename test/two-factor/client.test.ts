/** The typed client's two-factor login and seats: `TwoFactorError` says what to do, `client.twoFactor` does it. */
import { describe, expect, test } from 'vitest';
import { createClient, OdbRestError, TwoFactorError, type OdbRestClient } from '../../src/client/index.js';
import type { Service } from '../../src/index.js';
import { APP_KEY, demoService, USERS } from '../helpers.js';
import { base32Decode, totpAt } from './rfc6238.js';
import { readQr } from './qr-reader.js';
import { STEP, twoFactorService, wrongCode, type Clock } from './support.js';

const clientOf = (service: Service): OdbRestClient =>
  createClient({ baseUrl: 'http://odbrest.test', appKey: APP_KEY, fetch: (input, init) => service.fetch(new Request(input, init), { clientAddress: '127.0.0.1' }) });

const alice = (twoFactorToken?: string) => ({ user: 'alice', password: USERS.alice, appNames: ['hr'], ...(twoFactorToken === undefined ? {} : { twoFactorToken }) });

/** What a promise threw. */
const thrown = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

/** Enrols the client's user for `hr` and confirms; answers the secret's bytes. */
async function enrolThrough(client: OdbRestClient, clock: Clock): Promise<Uint8Array> {
  const enrolment = await client.twoFactor.enrol('hr');
  expect(readQr(enrolment.qrCode)).toBe(enrolment.otpauthUri);
  expect(enrolment.backupCodes).toHaveLength(10);
  const key = base32Decode(enrolment.secret);
  await client.twoFactor.confirm('hr', totpAt(key, clock.now()));
  clock.advance(STEP);
  return key;
}

describe('the typed client', () => {
  test('asks for a code (need "code"), refuses a wrong one (need "new-code"), logs in with the right one, on every login variant', async () => {
    const { service, clock } = await twoFactorService();
    const client = clientOf(service);
    await client.login(alice());
    expect(await client.twoFactor.status('hr')).toEqual({ isActivated: false, isConfirmed: false, '2faStatus': 1 });
    const key = await enrolThrough(client, clock);
    expect(await client.twoFactor.status('hr')).toEqual({ isActivated: true, isConfirmed: true, '2faStatus': 2 });
    await client.logout();

    const missing = await thrown(client.login(alice()));
    expect(missing).toBeInstanceOf(TwoFactorError);
    expect(missing).toMatchObject({ need: 'code', internalStatus: '341', httpStatus: 401, setupSessionId: undefined });
    expect(await thrown(client.login(alice(wrongCode(totpAt(key, clock.now())))))).toMatchObject({ need: 'new-code', internalStatus: '342' });
    expect((await client.login(alice(totpAt(key, clock.now())))).user.Name).toBe('alice');
    await client.twoFactor.validate('hr', totpAt(key, clock.now() + STEP));
    expect(await thrown(client.twoFactor.validate('hr', totpAt(key, clock.now() + STEP)))).toMatchObject({ need: 'new-code', internalStatus: '342' });

    clock.advance(3 * STEP);
    expect(await thrown(client.loginToken(alice('')))).toMatchObject({ need: 'code' });
    expect((await client.loginToken(alice(totpAt(key, clock.now())))).token).toEqual(expect.any(String));
    clock.advance(STEP);
    expect(await thrown(client.loginSecure(alice()))).toMatchObject({ need: 'code' });
    expect((await client.loginSecure(alice(totpAt(key, clock.now())))).user.Name).toBe('alice');
    expect(client.sessionKind).toBe('secure');
    await client.twoFactor.remove('hr', totpAt(key, clock.now() + STEP));
    expect(await client.twoFactor.status('hr')).toEqual({ isActivated: false, isConfirmed: false, '2faStatus': 1 });
  });

  test('a forced application: need "enrolment", and the client holds the set-up session until it logs in again', async () => {
    const { service, clock } = await twoFactorService({}, { hr: 'forced' });
    const client = clientOf(service);
    const refused = await thrown(client.login(alice()));
    expect(refused).toBeInstanceOf(TwoFactorError);
    expect(refused).toMatchObject({ need: 'enrolment', internalStatus: '340', httpStatus: 403, setupSessionId: expect.any(String) });
    expect(client.sessionKind).toBe('session');
    expect(await client.twoFactor.status('hr')).toEqual({ isActivated: false, isConfirmed: false, '2faStatus': 3 });
    const key = await enrolThrough(client, clock);
    const elsewhere = await thrown(client.getObject('CUS00001'));
    expect(elsewhere).toBeInstanceOf(OdbRestError);
    expect(elsewhere).toMatchObject({ internalStatus: '403', httpStatus: 403 });
    await client.logout();
    await client.login(alice(totpAt(key, clock.now())));
    expect((await client.getObject('CUS00001'))['~ObjectID']).toBe('CUS00001');
  });

  test('101 for a seat too many; releaseLicences gives it back', async () => {
    const service = await demoService();
    const [first, second] = [clientOf(service), clientOf(service)];
    const bob = { user: 'bob', password: USERS.bob, appNames: ['crm', 'shop'] };
    await first.login(bob);
    expect(await thrown(second.login(bob))).toMatchObject({ internalStatus: '101', httpStatus: 403 });
    await first.releaseLicences('shop');
    await second.login(bob);
    expect((await first.getObject('CUS00001'))['~ObjectID']).toBe('CUS00001'); // still holds crm
  });
});
