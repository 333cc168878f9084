/**
 * The Next.js route handlers in process, without `trackClientAddress()`: the client address is unknown,
 * so only the per-user failed-login limit applies (docs/mounting.md, Next.js).
 */
import { expect, test } from 'vitest';
import { createRouteHandlers } from '../../adapters/next.js';
import { CLIENT_ADDRESS_KEY } from '../../adapters/next-client-address.js';
import type { Service } from '../../src/index.js';
import { call, demoService, loginBody, USERS } from '../helpers.js';

/** The handlers as a `Service` for `call`; they take only the Request, so `call`'s client address never arrives. */
async function nextRoute(): Promise<Service> {
  const { POST } = createRouteHandlers(await demoService({ mount: { basePath: '/api' } }));
  return { fetch: (request: Request) => POST(request) } as unknown as Service;
}

const loginStatus = async (route: Service, user: string, password: string) =>
  (await call(route, 'POST', '/api/v1/login', { json: loginBody(user, password) })).body?.status?.internalStatus;

test('without trackClientAddress(), failed logins are counted per user only, not in one shared address bucket', async () => {
  expect(CLIENT_ADDRESS_KEY in globalThis, 'no instrumentation in this process').toBe(false);
  const route = await nextRoute();
  for (let i = 0; i < 25; i++) expect(await loginStatus(route, `nobody-${i}`, 'wrong')).toBe('302');
  // More than the per-address limit (20) from the same unknown address: alice is not locked out.
  expect(await loginStatus(route, 'alice', USERS.alice)).toBe('0');

  for (let i = 0; i < 5; i++) expect(await loginStatus(route, 'bob', 'wrong')).toBe('302');
  expect(await loginStatus(route, 'bob', USERS.bob)).toBe('303');
});
