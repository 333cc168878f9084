/**
 * Two-factor login (PROTOCOL.md 2.6) through the service: the `/v1/2fa/*` endpoints, `341`/`342` at
 * the login, the `340` session, and wrong codes in the failed-login limit. Codes come from the tests'
 * own RFC 6238 implementation (rfc6238.ts), the clock is the service's `now` option.
 */
import { describe, expect, test } from 'vitest';
import { call, demoService, expectError, login, loginBody } from '../helpers.js';
import { readQr } from './qr-reader.js';
import { base32Decode, totpAt, totpAtStep } from './rfc6238.js';
import {
  enrol,
  expectRefusal,
  loginWithCode,
  NEED_CODE,
  OK,
  STEP,
  twoFactorService,
  WRONG_CODE,
  wrongCode,
} from './support.js';

const step = (now: number) => Math.floor(now / STEP);
const expectLoggedIn = (result: { status: number; body: any; text: string }, user = 'alice') => {
  expect(result.body?.status, result.text).toEqual(OK);
  expect(result.status).toBe(200);
  expect(result.body.data).toEqual({ sessionId: expect.any(String), user: expect.objectContaining({ Name: user }), databaseName: 'odbrest', expiresAt: expect.any(String), acls: expect.objectContaining({ '~Count': expect.any(Number) }) });
};

describe('GET /v1/2fa/secret', () => {
  test('2faStatus 0 without a policy, 1 while not set up (also with an unconfirmed secret), 2 once confirmed', async () => {
    const { service, clock } = await twoFactorService();
    const sessionId = await login(service, 'alice', ['crm']);
    const status = async (app: string) => (await call(service, 'GET', `/v1/2fa/secret?app=${app}`, { headers: { sessionId } })).body;
    expect(await status('crm')).toEqual({ status: OK, data: { isActivated: false, isConfirmed: false, '2faStatus': 0 } });
    expect(await status('hr')).toEqual({ status: OK, data: { isActivated: false, isConfirmed: false, '2faStatus': 1 } });
    await call(service, 'POST', '/v1/2fa/secret?app=hr', { headers: { sessionId } });
    expect(await status('hr')).toEqual({ status: OK, data: { isActivated: true, isConfirmed: false, '2faStatus': 1 } });
    await enrol(service, clock, 'alice', 'hr', sessionId);
    expect(await status('hr')).toEqual({ status: OK, data: { isActivated: true, isConfirmed: true, '2faStatus': 2 } });
    expect(await status('crm')).toEqual({ status: OK, data: { isActivated: true, isConfirmed: true, '2faStatus': 0 } });
  });

  test('2faStatus 3 for a forced application', async () => {
    const { service } = await twoFactorService({}, { hr: 'forced' });
    const sessionId = await login(service, 'alice', ['crm']);
    const result = await call(service, 'GET', '/v1/2fa/secret?app=hr', { headers: { sessionId } });
    expect(result.body).toEqual({ status: OK, data: { isActivated: false, isConfirmed: false, '2faStatus': 3 } });
  });

  test('needs ?app= (400) and a session (204)', async () => {
    const { service } = await twoFactorService();
    const sessionId = await login(service, 'alice', ['crm']);
    expectRefusal(await call(service, 'GET', '/v1/2fa/secret', { headers: { sessionId } }), '400', 400, /^the query parameter app .* is required$/);
    expectRefusal(await call(service, 'GET', '/v1/2fa/secret?app=', { headers: { sessionId } }), '400', 400, /app .* is required/);
    expectRefusal(await call(service, 'GET', `/v1/2fa/secret?app=${'a'.repeat(129)}`, { headers: { sessionId } }), '400', 400, 'app must be at most 128 characters');
    expectError(await call(service, 'GET', '/v1/2fa/secret?app=hr'), '204', 401);
  });
});

describe('POST /v1/2fa/secret', () => {
  test('answers a base32 secret, its otpauth URI, a QR code of that URI and 10 backup codes', async () => {
    const { service } = await twoFactorService();
    const sessionId = await login(service, 'alice', ['crm']);
    const result = await call(service, 'POST', '/v1/2fa/secret?app=hr', { headers: { sessionId } });
    expect(result.body).toEqual({
      status: OK,
      data: {
        secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
        otpauthUri: expect.stringMatching(/^otpauth:\/\/totp\//),
        qrCode: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
        backupCodes: expect.any(Array),
      },
    });
    const { secret, otpauthUri, qrCode, backupCodes } = result.body.data;
    expect(otpauthUri).toBe(`otpauth://totp/odbrest%20test:alice?issuer=odbrest%20test&secret=${secret}&algorithm=SHA1&digits=6&period=30`);
    expect(readQr(qrCode)).toBe(otpauthUri);
    expect(backupCodes).toHaveLength(10);
  });

  test('an application without a policy: 403; a service without a two-factor key: 403', async () => {
    const { service } = await twoFactorService();
    const sessionId = await login(service, 'alice', ['crm']);
    expectRefusal(await call(service, 'POST', '/v1/2fa/secret?app=crm', { headers: { sessionId } }), '403', 403, 'two-factor login is not available for application "crm"');
    const plain = await demoService();
    const other = await login(plain, 'alice', ['crm']);
    expectRefusal(await call(plain, 'POST', '/v1/2fa/secret?app=hr', { headers: { sessionId: other } }), '403', 403, 'two-factor login is not available for application "hr"');
    expectRefusal(await call(plain, 'POST', '/v1/2fa/validate?app=hr', { headers: { sessionId: other }, json: { token: '123456' } }), '403', 403, 'two-factor login is not configured on this service');
  });
});

describe('PATCH /v1/2fa/secret', () => {
  test('a wrong code is 342 and confirms nothing; the right one confirms', async () => {
    const { service, clock } = await twoFactorService();
    const sessionId = await login(service, 'alice', ['crm']);
    const { secret } = (await call(service, 'POST', '/v1/2fa/secret?app=hr', { headers: { sessionId } })).body.data;
    const code = totpAt(base32Decode(secret), clock.now());
    const patch = (token: unknown) => call(service, 'PATCH', '/v1/2fa/secret?app=hr', { headers: { sessionId }, json: { token } });
    expectRefusal(await patch(wrongCode(code)), '342', 401, WRONG_CODE);
    expectRefusal(await patch(12), '400', 400, 'token must be a string (a TOTP code or a backup code)');
    expect((await patch(code)).body).toEqual({ status: { internalStatus: '0', statusMessage: 'two-factor login confirmed' }, data: {} });
    expectLoggedIn(await loginWithCode(service, 'alice', ['hr'], totpAtStep(base32Decode(secret), step(clock.now()) + 1)));
  });

  test('with no new secret awaiting confirmation: 400', async () => {
    const { service } = await twoFactorService();
    const sessionId = await login(service, 'alice', ['crm']);
    expectRefusal(
      await call(service, 'PATCH', '/v1/2fa/secret?app=hr', { headers: { sessionId }, json: { token: '123456' } }),
      '400',
      400,
      'no new secret awaits confirmation: POST /v1/2fa/secret first',
    );
  });
});

describe('a login asking for an application with a policy', () => {
  test('a user without a secret logs in without a code (optional)', async () => {
    const { service } = await twoFactorService();
    expectLoggedIn(await loginWithCode(service, 'alice', ['hr'], undefined));
  });

  test('no code or "" is 341; a wrong code 342; the right one logs in', async () => {
    const { service, clock } = await twoFactorService();
    const { key } = await enrol(service, clock);
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], undefined), '341', 401, NEED_CODE);
    expectRefusal(await loginWithCode(service, 'alice', ['crm', 'hr'], ''), '341', 401, NEED_CODE);
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], wrongCode(totpAt(key, clock.now()))), '342', 401, WRONG_CODE);
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], 'not a code'), '342', 401, WRONG_CODE);
    expectLoggedIn(await loginWithCode(service, 'alice', ['hr'], totpAt(key, clock.now())));
  });

  test('the password comes first: a wrong one with the right code is 302', async () => {
    const { service, clock } = await twoFactorService();
    const { key } = await enrol(service, clock);
    const json = { ...loginBody('alice', 'wrong'), appNames: ['hr'], '2faToken': totpAt(key, clock.now()) };
    expectError(await call(service, 'POST', '/v1/login', { json }), '302', 401);
    expectLoggedIn(await loginWithCode(service, 'alice', ['hr'], totpAt(key, clock.now())));
  });

  test('an application without a policy needs no code, even from a user with a secret', async () => {
    const { service, clock } = await twoFactorService();
    await enrol(service, clock);
    expectLoggedIn(await loginWithCode(service, 'alice', ['crm'], undefined));
    expectLoggedIn(await loginWithCode(service, 'alice', [], ''));
  });

  test('a code is accepted once: again in its step, and again one step later (still in its window), it is 342', async () => {
    const { service, clock } = await twoFactorService();
    const { key } = await enrol(service, clock);
    const code = totpAt(key, clock.now());
    expectLoggedIn(await loginWithCode(service, 'alice', ['hr'], code));
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], code), '342', 401, WRONG_CODE);
    clock.advance(STEP);
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], code), '342', 401, WRONG_CODE);
    expectLoggedIn(await loginWithCode(service, 'alice', ['hr'], totpAt(key, clock.now())));
  });

  test('clock drift: a code one step behind or ahead is accepted, two steps either way refused', async () => {
    const { service, clock } = await twoFactorService();
    const { key } = await enrol(service, clock);
    clock.advance(10 * STEP);
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], totpAtStep(key, step(clock.now()) - 2)), '342', 401, WRONG_CODE);
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], totpAtStep(key, step(clock.now()) + 2)), '342', 401, WRONG_CODE);
    expectLoggedIn(await loginWithCode(service, 'alice', ['hr'], totpAtStep(key, step(clock.now()) - 1)));
    clock.advance(10 * STEP);
    expectLoggedIn(await loginWithCode(service, 'alice', ['hr'], totpAtStep(key, step(clock.now()) + 1)));
  });

  test('a backup code logs in once; the second time it is 342', async () => {
    const { service, clock } = await twoFactorService();
    const { backupCodes } = await enrol(service, clock);
    expectLoggedIn(await loginWithCode(service, 'alice', ['hr'], backupCodes[3]!.toUpperCase()));
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], backupCodes[3]!), '342', 401, WRONG_CODE);
    expectLoggedIn(await loginWithCode(service, 'alice', ['hr'], backupCodes[4]!));
  });

  test('of 10 parallel logins with one code, exactly one gets a session', async () => {
    const { service, clock } = await twoFactorService({ loginLimit: { perUser: 50 } });
    const { key } = await enrol(service, clock);
    const code = totpAt(key, clock.now());
    const results = await Promise.all(Array.from({ length: 10 }, () => loginWithCode(service, 'alice', ['hr'], code)));
    expect(results.filter((result) => result.body.status.internalStatus === '0')).toHaveLength(1);
    for (const result of results.filter((result) => result.body.status.internalStatus !== '0')) expectRefusal(result, '342', 401, WRONG_CODE);
  });
});

describe('the failed-login limit', () => {
  test('counts wrong codes: after perUser of them even the right code is 303', async () => {
    const { service, clock } = await twoFactorService({ loginLimit: { perUser: 3 } });
    const { key } = await enrol(service, clock);
    for (let i = 0; i < 3; i++) expectRefusal(await loginWithCode(service, 'alice', ['hr'], wrongCode(totpAt(key, clock.now()))), '342', 401, WRONG_CODE);
    const refused = await loginWithCode(service, 'alice', ['hr'], totpAt(key, clock.now()));
    expectRefusal(refused, '303', 429, /^too many failed logins, try again in \d+ seconds$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test('a login without a code (341) neither counts nor clears the wrong codes counted', async () => {
    const { service, clock } = await twoFactorService({ loginLimit: { perUser: 3 } });
    const { key } = await enrol(service, clock);
    const wrong = wrongCode(totpAt(key, clock.now()));
    for (let i = 0; i < 2; i++) expectRefusal(await loginWithCode(service, 'alice', ['hr'], wrong), '342', 401, WRONG_CODE);
    for (let i = 0; i < 6; i++) expectRefusal(await loginWithCode(service, 'alice', ['hr'], ''), '341', 401, NEED_CODE);
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], wrong), '342', 401, WRONG_CODE);
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], totpAt(key, clock.now())), '303', 429, /too many failed logins/);
  });

  test('counts wrong codes at /v1/2fa/validate, PATCH and DELETE too, against the logins of that user', async () => {
    const { service, clock } = await twoFactorService({ loginLimit: { perUser: 3 } });
    const { key, sessionId } = await enrol(service, clock);
    const wrong = { token: wrongCode(totpAt(key, clock.now())) };
    expectRefusal(await call(service, 'POST', '/v1/2fa/validate?app=hr', { headers: { sessionId }, json: wrong }), '342', 401, WRONG_CODE);
    expectRefusal(await call(service, 'DELETE', '/v1/2fa/secret?app=hr', { headers: { sessionId }, json: wrong }), '342', 401, WRONG_CODE);
    await call(service, 'POST', '/v1/2fa/secret?app=hr', { headers: { sessionId } });
    expectRefusal(await call(service, 'PATCH', '/v1/2fa/secret?app=hr', { headers: { sessionId }, json: wrong }), '342', 401, WRONG_CODE);
    const right = { token: totpAt(key, clock.now()) };
    expectRefusal(await call(service, 'POST', '/v1/2fa/validate?app=hr', { headers: { sessionId }, json: right }), '303', 429, /too many failed logins/);
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], right.token), '303', 429, /too many failed logins/);
  });
});

describe('POST /v1/2fa/validate', () => {
  test('"0" for a right code, once; 342 for a wrong one, and for a user without a secret', async () => {
    const { service, clock } = await twoFactorService();
    const { key, sessionId } = await enrol(service, clock);
    const validate = (token: string, sid = sessionId) => call(service, 'POST', '/v1/2fa/validate?app=hr', { headers: { sessionId: sid }, json: { token } });
    const code = totpAt(key, clock.now());
    expect((await validate(code)).body).toEqual({ status: { internalStatus: '0', statusMessage: 'two-factor code accepted' }, data: {} });
    expectRefusal(await validate(code), '342', 401, WRONG_CODE);
    expectRefusal(await validate(wrongCode(totpAt(key, clock.now() + STEP))), '342', 401, WRONG_CODE);
    expectRefusal(await validate('123456', await login(service, 'bob', ['crm'])), '342', 401, WRONG_CODE);
    expectRefusal(await call(service, 'POST', '/v1/2fa/validate?app=hr', { headers: { sessionId }, json: {} }), '400', 400, 'token is required');
  });
});

describe('DELETE /v1/2fa/secret', () => {
  test('a wrong code is 342; a right one (a backup code too) removes it, and logins need no code again', async () => {
    const { service, clock } = await twoFactorService();
    const { key, backupCodes, sessionId } = await enrol(service, clock);
    const remove = (token: string) => call(service, 'DELETE', '/v1/2fa/secret?app=hr', { headers: { sessionId }, json: { token } });
    expectRefusal(await remove(wrongCode(totpAt(key, clock.now()))), '342', 401, WRONG_CODE);
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], ''), '341', 401, NEED_CODE);
    expect((await remove(backupCodes[0]!)).body).toEqual({ status: { internalStatus: '0', statusMessage: 'two-factor login removed' }, data: {} });
    expectLoggedIn(await loginWithCode(service, 'alice', ['hr'], ''));
    expect((await remove('123456')).body).toEqual({ status: { internalStatus: '0', statusMessage: 'two-factor login was not set up' }, data: {} });
  });
});

describe('a forced application', () => {
  const forced = () => twoFactorService({}, { hr: 'forced' });
  const SETUP_ONLY = 'this session may only set up two-factor login (/v1/2fa/*) and log out; log in again once it is set up';

  test('a user without a secret gets 340 and a session that may only set it up and log out', async () => {
    const { service, clock } = await forced();
    const refused = await loginWithCode(service, 'alice', ['crm', 'hr'], '');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      status: {
        internalStatus: '340',
        statusMessage: 'application "hr" requires two-factor login and this user has not set it up: use the session in data.sessionId with /v1/2fa/secret, then log in again',
      },
      data: { sessionId: expect.any(String) },
    });
    const sessionId = refused.body.data.sessionId as string;
    const headers = { sessionId };
    expectRefusal(await call(service, 'GET', '/v1/object/CUS00001', { headers }), '403', 403, SETUP_ONLY);
    expectRefusal(await call(service, 'GET', '/v1/objects/Customer', { headers }), '403', 403, SETUP_ONLY);
    expectRefusal(await call(service, 'POST', '/v1/execute/anything', { headers, json: {} }), '403', 403, SETUP_ONLY);
    expectRefusal(await call(service, 'POST', '/v1/license/release', { headers, json: { appNames: ['hr'] } }), '403', 403, SETUP_ONLY);
    expect((await call(service, 'GET', '/v1/2fa/secret?app=hr', { headers })).body.data).toEqual({ isActivated: false, isConfirmed: false, '2faStatus': 3 });
    const { key } = await enrol(service, clock, 'alice', 'hr', sessionId);
    expectRefusal(await call(service, 'GET', '/v1/object/CUS00001', { headers }), '403', 403, SETUP_ONLY);
    expect((await call(service, 'POST', '/v1/logout', { headers })).body).toEqual({ status: { internalStatus: '0', statusMessage: 'logged out' }, data: {} });
    expectError(await call(service, 'GET', '/v1/2fa/secret?app=hr', { headers }), '201', 401);

    expectRefusal(await loginWithCode(service, 'alice', ['hr'], ''), '341', 401, NEED_CODE);
    const loggedIn = await loginWithCode(service, 'alice', ['crm', 'hr'], totpAt(key, clock.now()));
    expectLoggedIn(loggedIn);
    expect((await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: loggedIn.body.data.sessionId } })).body.status).toEqual(OK);
  });

  test('a login for applications without a policy is not affected', async () => {
    const { service } = await forced();
    expectLoggedIn(await loginWithCode(service, 'alice', ['crm'], undefined));
  });

  test('the 340 comes after the licences: an unlicensed application is 306', async () => {
    const { service } = await forced();
    expectError(await loginWithCode(service, 'dave', ['hr'], ''), '306', 403);
  });

  test('removal while the application is forced: allowed with a code, and the next login is 340 again', async () => {
    const { service, clock } = await forced();
    const refused = await loginWithCode(service, 'alice', ['hr'], '');
    const { key, sessionId } = await enrol(service, clock, 'alice', 'hr', refused.body.data.sessionId);
    const removed = await call(service, 'DELETE', '/v1/2fa/secret?app=hr', { headers: { sessionId }, json: { token: totpAt(key, clock.now()) } });
    expect(removed.body).toEqual({ status: { internalStatus: '0', statusMessage: 'two-factor login removed' }, data: {} });
    const again = await loginWithCode(service, 'alice', ['hr'], totpAt(key, clock.now() + STEP));
    expect([again.status, again.body.status.internalStatus, Object.keys(again.body.data)]).toEqual([403, '340', ['sessionId']]);
  });
});

describe('configuration', () => {
  test('a policy without a key refuses to start; so do a policy that is neither optional nor forced, and a short key', async () => {
    await expect(demoService({ twoFactor: { policies: { hr: 'optional' } } })).rejects.toThrow(
      "twoFactor.key is required when twoFactor.policies names an application (it seals the users' secrets)",
    );
    await expect(demoService({ twoFactor: { policies: { hr: 'always' as 'forced' }, key: 'k'.repeat(32) } })).rejects.toThrow(
      'twoFactor.policies.hr must be "optional" or "forced", not "always"',
    );
    await expect(demoService({ twoFactor: { policies: { hr: 'optional' }, key: 'short' } })).rejects.toThrow('twoFactor.key must be at least 32 bytes');
  });

  test('without the option a login ignores 2faToken', async () => {
    const service = await demoService();
    expectLoggedIn(await loginWithCode(service, 'bob', ['hr'], '123456'), 'bob');
  });
});
