/**
 * Issue 23, item 2: an attacker who knows the password guessed TOTP codes without end, because any
 * login with the right password cleared the user's failures (20 codes from one address, 60 with
 * rotating forwarded addresses). Wrong codes now count in a second-factor count of their own that only
 * a verified code clears (PROTOCOL.md 2.4): at most the limit's number of guesses per window, however
 * they interleave with other logins, at the login and on /v1/2fa/*.
 */
import { describe, expect, test } from 'vitest';
import { call, loginBody, USERS } from '../helpers.js';
import { totpAt } from '../two-factor/rfc6238.js';
import { enrol, expectRefusal, loginWithCode, STEP, twoFactorService, wrongCode } from '../two-factor/support.js';

const PER_USER = 5;

/** Sends `rounds` wrong codes, each followed by right-password logins that need no code; counts the 342s. */
async function guess(rounds: number, address: (i: number) => string) {
  const { service, clock } = await twoFactorService({ trustProxy: true, loginLimit: { perUser: PER_USER, perAddress: 1000 } });
  const { key } = await enrol(service, clock);
  const forwarded = (i: number) => ({ 'x-forwarded-for': address(i) });
  let guessed = 0;
  let sessionId: string | undefined;
  for (let i = 0; i < rounds; i++) {
    const wrong = wrongCode(totpAt(key, clock.now()));
    // a guess at the login, then one on /v1/2fa/validate with a session of an application without a policy
    const atLogin = await call(service, 'POST', '/v1/login', { headers: forwarded(i), json: { ...loginBody('alice', USERS.alice, ['hr']), '2faToken': wrong } });
    if (atLogin.body.status.internalStatus === '342') guessed++;
    else expect(atLogin.body.status.internalStatus, atLogin.text).toBe('303');
    // right password, no second factor needed: must not clear the wrong codes
    const plain = await call(service, 'POST', '/v1/login', { headers: forwarded(i), json: loginBody('alice', USERS.alice, ['crm']) });
    if (plain.body.status.internalStatus === '0') sessionId = plain.body.data.sessionId;
    if (sessionId) {
      const atRoute = await call(service, 'POST', '/v1/2fa/validate?app=hr', { headers: { sessionId, ...forwarded(i) }, json: { token: wrong } });
      if (atRoute.body.status.internalStatus === '342') guessed++;
      else expect(['303', '201'], atRoute.text).toContain(atRoute.body.status.internalStatus);
    }
    clock.advance(1000);
  }
  return { service, clock, key, guessed };
}

describe('wrong second-factor codes', () => {
  test('one address: at most perUser code guesses in a window, however interleaved with right-password logins', async () => {
    const { guessed } = await guess(30, () => '203.0.113.7');
    expect(guessed).toBeGreaterThanOrEqual(1);
    expect(guessed).toBeLessThanOrEqual(PER_USER);
  });

  test('rotating forwarded addresses (trustProxy): still at most perUser', async () => {
    const { guessed } = await guess(30, (i) => `198.51.100.${i + 1}`);
    expect(guessed).toBeLessThanOrEqual(PER_USER);
  });

  test('once the codes are used up even the right code is 303; after the window the right code logs in and clears the count', async () => {
    const { service, clock, key } = await guess(10, () => '203.0.113.7');
    clock.advance(STEP);
    const refused = await loginWithCode(service, 'alice', ['hr'], totpAt(key, clock.now()), '203.0.113.7');
    expectRefusal(refused, '303', 429, /^too many failed logins, try again in \d+ seconds$/);
    clock.advance(15 * 60_000);
    const loggedIn = await loginWithCode(service, 'alice', ['hr'], totpAt(key, clock.now()), '203.0.113.7');
    expect(loggedIn.body.status.internalStatus, loggedIn.text).toBe('0');
    // a verified code cleared the count: wrong codes get 342 again, not 303
    clock.advance(STEP);
    expectRefusal(await loginWithCode(service, 'alice', ['hr'], wrongCode(totpAt(key, clock.now())), '203.0.113.7'), '342', 401, /wrong/);
  });
});
