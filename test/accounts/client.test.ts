/** The typed client's `accounts` calls against the service (PROTOCOL.md 2.8). */
import { expect, test } from 'vitest';
import { createClient, OdbRestError } from '../../src/client/index.js';
import type { PasswordResetDelivery, Service } from '../../src/index.js';
import { APP_KEY, demoService, USERS } from '../helpers.js';
import { serveStudio, stopServers } from '../support/studio.js';

const clientOf = (service: Service) => createClient({ baseUrl: 'http://odbrest.test/', appKey: APP_KEY, fetch: (input, init) => service.fetch(new Request(input, init)) });

test('password change, sessions, reset and administration through the client', async () => {
  const deliveries: PasswordResetDelivery[] = [];
  const service = await demoService({ users: { admins: 'admins', sendPasswordReset: (delivery) => void deliveries.push(delivery) } });
  const bob = clientOf(service);
  const other = clientOf(service);
  await other.login({ user: 'bob', password: USERS.bob, appNames: ['crm'] });
  await bob.login({ user: 'bob', password: USERS.bob, appNames: ['crm'] });
  const sessions = await bob.accounts.sessions();
  expect(sessions.map((session) => session.Current)).toEqual([true, false]);
  await expect(bob.accounts.changePassword({ password: 'wrong' }, { password: 'a new long password' })).rejects.toMatchObject({ internalStatus: '302' });
  await bob.accounts.changePassword({ password: USERS.bob }, { password: 'a new long password' });
  expect(await other.checkSession()).toBe(false);
  await expect(bob.accounts.changePassword({ password: 'a new long password' }, { password: 'short' })).rejects.toThrow(/at least 10 characters/);

  await other.accounts.requestPasswordReset('bob');
  await new Promise((resolve) => setTimeout(resolve, 20));
  await other.accounts.confirmPasswordReset(deliveries[0]!.token, { password: 'reset long password' });
  expect(await bob.checkSession()).toBe(false);
  await bob.login({ user: 'bob', password: 'reset long password', appNames: ['crm'] });
  expect(await bob.accounts.endOtherSessions()).toBe(0);

  const admin = clientOf(service);
  await admin.login({ user: 'alice', password: USERS.alice, appNames: ['crm'] });
  expect(await admin.accounts.createUser({ Name: 'erin', password: 'erin long secret', Groups: ['sales'], Licences: ['crm'] })).toMatchObject({ Name: 'erin' });
  expect(await admin.accounts.updateUser('bob', { Disabled: true })).toMatchObject({ Name: 'bob', Disabled: true });
  expect(await bob.checkSession()).toBe(false);
  expect((await admin.accounts.sessions('erin'))).toEqual([]);
  await expect(bob.accounts.sessions()).rejects.toBeInstanceOf(OdbRestError);
  await expect(admin.accounts.passkeys()).rejects.toMatchObject({ internalStatus: '403' });
});

test('users() lists the users for administrators over a real server, a page at a time; 403 for others', async () => {
  const running = await serveStudio(() => ({ users: { admins: 'admins' } }));
  try {
    const admin = createClient({ baseUrl: running.origin, appKey: APP_KEY });
    await admin.login({ user: 'alice', password: USERS.alice, appNames: ['crm'] });
    await admin.accounts.updateUser('dave', { Disabled: true });
    const all = await admin.accounts.users();
    expect(all['~Elements'].map((user) => [user.Name, user.Disabled, user.Groups])).toEqual([
      ['alice', false, ['admins', 'sales']],
      ['bob', false, ['support']],
      ['dave', true, []],
      ['extern', false, ['support']],
    ]);
    expect(await admin.accounts.users({ page: 1, perPage: 2 })).toMatchObject({ '~Count': 2, '~UnfilteredCount': 4, '~Elements': [{ Name: 'dave' }, { Name: 'extern' }] });
    const bob = createClient({ baseUrl: running.origin, appKey: APP_KEY });
    await bob.login({ user: 'bob', password: USERS.bob, appNames: ['crm'] });
    await expect(bob.accounts.users()).rejects.toMatchObject({ internalStatus: '403' });
  } finally {
    await stopServers(running);
  }
});
