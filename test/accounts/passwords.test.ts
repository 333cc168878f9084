/** PROTOCOL.md 2.8: password change and reset through the public surface. */
import { describe, expect, test } from 'vitest';
import { clientPassValue, type PasswordResetDelivery, type ServiceOptions } from '../../src/index.js';
import { call, demoService, expectError, login, loginBody, loginToken, testClock, USERS } from '../helpers.js';

const ok = (result: { status: number; body: any; text: string }) => {
  if (result.status !== 200 || result.body?.status?.internalStatus !== '0') throw new Error(`expected success, got ${result.status}: ${result.text}`);
};

/** A service whose reset hook keeps every delivery (tokens by user name, newest last). */
async function resetService(options: ServiceOptions = {}) {
  const deliveries: PasswordResetDelivery[] = [];
  const service = await demoService({ ...options, users: { sendPasswordReset: (delivery) => void deliveries.push(delivery), ...options.users } });
  /** Waits for the delivery the last request scheduled (it runs after the answer). */
  const delivered = async (count: number) => {
    for (let i = 0; i < 100 && deliveries.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    return deliveries;
  };
  return { service, deliveries, delivered };
}

const sid = (id: string) => ({ sessionId: id });
const change = (pass: string, newPass: string) => ({ pass, newPass });

describe('POST /v1/user/password', () => {
  test('changes the password; the other sessions of the user end (201) and give their seats back, the current one lives', async () => {
    const service = await demoService();
    const current = await login(service, 'bob');
    const other = await login(service, 'bob', ['shop']); // bob's one shop seat
    const jwt = await loginToken(service, 'bob');
    const alice = await login(service, 'alice');
    ok(await call(service, 'POST', '/v1/user/password', { headers: sid(current), json: change(clientPassValue(USERS.bob), 'a new long password') }));
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(other) }), '201', 401);
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: { authorization: `Bearer ${jwt}` } }), '201', 401);
    ok(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(current) }));
    ok(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(alice) }));
    // the old password no longer works, the new one does, and the shop seat is free again
    expectError(await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob, ['shop']) }), '302', 401);
    ok(await call(service, 'POST', '/v1/login', { json: loginBody('bob', 'a new long password', ['shop']) }));
  });

  test('takes pass and newPass in either form (plain or MD5 hex)', async () => {
    const service = await demoService();
    const id = await login(service, 'bob');
    ok(await call(service, 'POST', '/v1/user/password', { headers: sid(id), json: change(USERS.bob, clientPassValue('short')) })); // MD5 form: not checked
    ok(await call(service, 'POST', '/v1/login', { json: loginBody('bob', 'short') }));
  });

  test('a wrong current password is 302, counts as a failed login, and changes nothing', async () => {
    const service = await demoService({ loginLimit: { perUser: 2 } });
    const id = await login(service, 'bob');
    for (let i = 0; i < 2; i++) expectError(await call(service, 'POST', '/v1/user/password', { headers: sid(id), json: change('wrong password', 'a new long password') }), '302', 401);
    const limited = await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) });
    expectError(limited, '303', 429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test('a plain new password is checked by the policy: too short, the user name, or the host policy', async () => {
    const service = await demoService({ users: { passwordPolicy: (password) => (password.includes('1234') ? 'no 1234 please' : undefined) } });
    const id = await login(service, 'bob');
    const refused = await call(service, 'POST', '/v1/user/password', { headers: sid(id), json: change(USERS.bob, 'abc1234xyz-long') });
    expectError(refused, '400', 400);
    expect(refused.body.status.statusMessage).toBe('newPass refused: no 1234 please');
    const defaults = await demoService();
    const bob = await login(defaults, 'bob');
    const short = await call(defaults, 'POST', '/v1/user/password', { headers: sid(bob), json: change(USERS.bob, 'short') });
    expectError(short, '400', 400);
    expect(short.body.status.statusMessage).toMatch(/at least 10 characters/);
    const named = await call(defaults, 'POST', '/v1/user/password', { headers: sid(bob), json: change(USERS.bob, 'BOB') });
    expect(named.body.status.statusMessage).toMatch(/at least 10|user name/);
    ok(await call(defaults, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) })); // unchanged
  });

  test('passwords over 1 KB are refused, naming the member; bad bodies are 400', async () => {
    const service = await demoService();
    const id = await login(service, 'bob');
    const long = await call(service, 'POST', '/v1/user/password', { headers: sid(id), json: change(USERS.bob, 'x'.repeat(1025)) });
    expectError(long, '400', 400);
    expect(long.body.status.statusMessage).toBe('newPass must be at most 1024 characters: longer passwords are refused');
    expectError(await call(service, 'POST', '/v1/user/password', { headers: sid(id), json: { pass: USERS.bob } }), '400', 400);
    expectError(await call(service, 'POST', '/v1/user/password', { headers: sid(id), json: change(USERS.bob, 42 as never) }), '400', 400);
    expectError(await call(service, 'POST', '/v1/user/password', { json: change(USERS.bob, 'a new long password') }), '204', 401);
  });
});

describe('password reset', () => {
  test('a token is delivered to the host hook; confirming it sets the password and ends every session of the user', async () => {
    const { service, delivered } = await resetService();
    const session = await login(service, 'bob');
    ok(await call(service, 'POST', '/v1/user/password/reset', { json: { user: 'bob' } }));
    const [delivery] = await delivered(1);
    expect(delivery!.user.name).toBe('bob');
    expect(delivery!.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(delivery!.expiresAt.getTime() - Date.now()).toBeGreaterThan(14 * 60_000);
    ok(await call(service, 'POST', '/v1/user/password/reset/confirm', { json: { token: delivery!.token, newPass: 'a new long password' } }));
    expectError(await call(service, 'GET', '/v1/object/CUS00001', { headers: sid(session) }), '201', 401);
    ok(await call(service, 'POST', '/v1/login', { json: loginBody('bob', 'a new long password') }));
    // used once
    const again = await call(service, 'POST', '/v1/user/password/reset/confirm', { json: { token: delivery!.token, newPass: 'another long password' } });
    expectError(again, '400', 400);
    expect(again.body.status.statusMessage).toBe('the reset token is unknown, used or expired: ask for a new one');
  });

  test('unknown users get the same answer and no delivery; guessed tokens are refused with the same message', async () => {
    const { service, deliveries } = await resetService();
    const known = await call(service, 'POST', '/v1/user/password/reset', { json: { user: 'bob' } });
    const unknown = await call(service, 'POST', '/v1/user/password/reset', { json: { user: 'nobody-here' } });
    expect(unknown.text).toBe(known.text);
    expect(unknown.status).toBe(known.status);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(deliveries.map((delivery) => delivery.user.name)).toEqual(['bob']);
    for (const token of ['A'.repeat(43), 'short', '']) {
      const guessed = await call(service, 'POST', '/v1/user/password/reset/confirm', { json: { token, newPass: 'a new long password' } });
      expectError(guessed, '400', 400);
      expect(guessed.body.status.statusMessage).toBe('the reset token is unknown, used or expired: ask for a new one');
    }
  });

  test('a token expires after 15 minutes, and a newer one voids the older', async () => {
    const clock = testClock();
    const { service, delivered } = await resetService({ now: clock.now });
    ok(await call(service, 'POST', '/v1/user/password/reset', { json: { user: 'bob' } }));
    ok(await call(service, 'POST', '/v1/user/password/reset', { json: { user: 'bob' } }));
    const [older, newer] = await delivered(2);
    expectError(await call(service, 'POST', '/v1/user/password/reset/confirm', { json: { token: older!.token, newPass: 'a new long password' } }), '400', 400);
    clock.advance(15 * 60_000 + 1);
    expectError(await call(service, 'POST', '/v1/user/password/reset/confirm', { json: { token: newer!.token, newPass: 'a new long password' } }), '400', 400);
    ok(await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) }));
  });

  test('a new password the policy refuses leaves the token valid', async () => {
    const { service, delivered } = await resetService();
    ok(await call(service, 'POST', '/v1/user/password/reset', { json: { user: 'bob' } }));
    const [delivery] = await delivered(1);
    expectError(await call(service, 'POST', '/v1/user/password/reset/confirm', { json: { token: delivery!.token, newPass: 'short' } }), '400', 400);
    ok(await call(service, 'POST', '/v1/user/password/reset/confirm', { json: { token: delivery!.token, newPass: 'long enough now' } }));
  });

  test('100 parallel confirms of one token: exactly one succeeds', async () => {
    const { service, delivered } = await resetService();
    ok(await call(service, 'POST', '/v1/user/password/reset', { json: { user: 'bob' } }));
    const [delivery] = await delivered(1);
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => call(service, 'POST', '/v1/user/password/reset/confirm', { json: { token: delivery!.token, newPass: `new password number ${i}` } })),
    );
    const winners = results.filter((result) => result.body.status.internalStatus === '0');
    expect(winners).toHaveLength(1);
    for (const result of results) if (result !== winners[0]) expectError(result, '400', 400);
    const index = results.indexOf(winners[0]!);
    ok(await call(service, 'POST', '/v1/login', { json: loginBody('bob', `new password number ${index}`) }));
  });

  test('limited to 3 per user and 20 per address an hour (429 with Retry-After), known user or not', async () => {
    const { service } = await resetService();
    for (const user of ['bob', 'nobody-here']) {
      for (let i = 0; i < 3; i++) ok(await call(service, 'POST', '/v1/user/password/reset', { json: { user }, clientAddress: `10.0.0.${i}` }));
      const limited = await call(service, 'POST', '/v1/user/password/reset', { json: { user }, clientAddress: '10.0.0.9' });
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ status: { internalStatus: '429', statusMessage: expect.stringMatching(/too many password reset requests/) }, data: {} });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3500);
    }
    for (let i = 0; i < 20; i++) ok(await call(service, 'POST', '/v1/user/password/reset', { json: { user: `user-${i}` }, clientAddress: '10.1.1.1' }));
    const limited = await call(service, 'POST', '/v1/user/password/reset', { json: { user: 'someone' }, clientAddress: '10.1.1.1' });
    expect(limited.status).toBe(429);
  });
});
