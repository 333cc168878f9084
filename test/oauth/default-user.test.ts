/** A provider entry with a defaultUser, and the xApi_DBCreateInit_xApiUserProvider hook (PROTOCOL.md 5.2 step 4). */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/index.js';
import {
  authorize,
  expectRejected,
  finish,
  identityLinks,
  loginData,
  spawnProviders,
  startService,
  type LocalProvider,
  type ProviderProcess,
  type RunningService,
} from './provider.js';

const HOOK = 'xApi_DBCreateInit_xApiUserProvider';
let idp: ProviderProcess;
let provider: LocalProvider;
let running: RunningService;

beforeAll(async () => {
  ({ idp, providers: { google: provider } } = await spawnProviders('google'));
  running = await startService([{ provider, name: 'Google', defaultUser: 'extern' }]);
});
afterAll(async () => {
  await running?.close();
  idp?.close();
});
beforeEach(() => void running.service.macros.unregister(HOOK));

const linkOf = (subject: string) => identityLinks(running.service, { subject });

const plainLoginData = (user: 'alice' | 'bob' | 'extern', appNames: string[]) => loginData(running.base, user, appNames);

describe('defaultUser', () => {
  it('links a new identity to the default user and answers with a session', async () => {
    await idp.user(provider, { sub: 'default-1', given_name: 'Dora', family_name: 'Default', email: 'dora@example.com' });
    const answer = await finish(await authorize(running.base, 'google', 'appkey=test-app&appNames=crm'));
    expect(answer.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: await plainLoginData('extern', ['crm']) });
    expect(await linkOf('default-1')).toEqual([
      { provider: 'google', type: 'google', subject: 'default-1', user: { $ref: 'USR00004' }, name: 'Dora', surname: 'Default', email: 'dora@example.com' },
    ]);
  });

  it('runs the hook with the identity, and links the user the hook assigns', async () => {
    const calls: Array<Record<string, unknown>> = [];
    running.service.macros.register(HOOK, (_context, params: Record<string, any>) => {
      calls.push(structuredClone(params));
      params.userObject.fields.user = { $ref: 'USR00002' }; // bob
      return 0;
    });
    await idp.user(provider, { sub: 'default-2', given_name: 'Hugo', family_name: 'Hook', email: 'hugo@example.com' });
    const answer = await finish(await authorize(running.base, 'google', 'appkey=test-app&appNames=crm'));
    expect(answer.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: await plainLoginData('bob', ['crm']) });
    expect(calls).toEqual([
      {
        userObject: {
          className: 'ExternalIdentity',
          fields: { provider: 'google', type: 'google', subject: 'default-2', user: { $ref: 'USR00004' }, name: 'Hugo', surname: 'Hook', email: 'hugo@example.com' },
        },
        providerConfig: expect.objectContaining({ className: 'OAuthProvider', fields: expect.objectContaining({ name: 'Google', type: 'google', defaultUser: 'extern' }) }),
        userUuid: 'default-2',
        name: 'Hugo',
        surname: 'Hook',
        email: 'hugo@example.com',
      },
    ]);
    expect((await linkOf('default-2'))[0]!.user).toEqual({ $ref: 'USR00002' });

    // linked now: the hook is not asked again
    const again = await finish(await authorize(running.base, 'google', 'appkey=test-app&appNames=crm'));
    expect(again.body.data.user.Name).toBe('bob');
    expect(calls.length).toBe(1);
  });

  it('a non-zero hook result refuses the login and links nothing', async () => {
    running.service.macros.register(HOOK, () => 7);
    await idp.user(provider, { sub: 'default-3' });
    const answer = await finish(await authorize(running.base, 'google'));
    expectRejected(answer, '403', 403, `${HOOK} refused the login (returned 7)`);
    expect(await linkOf('default-3')).toEqual([]);
  });

  it('a hook may refuse with its own code and message', async () => {
    running.service.macros.register(HOOK, () => {
      throw new ApiError('4711', 'external users are closed today', { status: 403 });
    });
    await idp.user(provider, { sub: 'default-4' });
    const answer = await finish(await authorize(running.base, 'google'));
    expectRejected(answer, '4711', 403, 'external users are closed today');
    expect(await linkOf('default-4')).toEqual([]);
  });

  it('a hook that assigns no existing user is a 500 and links nothing', async () => {
    running.service.macros.register(HOOK, (_context, params: Record<string, any>) => {
      params.userObject.fields.user = { $ref: 'NOSUCHID' };
      return 0;
    });
    await idp.user(provider, { sub: 'default-5' });
    const answer = await finish(await authorize(running.base, 'google'));
    expectRejected(answer, '500', 500, `${HOOK} assigned no existing database user`);
    expect(await linkOf('default-5')).toEqual([]);
  });
});
