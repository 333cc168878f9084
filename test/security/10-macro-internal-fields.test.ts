/**
 * Issue 12, finding 10: a macro that returned `await ctx.user()` (or any object from `ctx.store`) sent
 * its `_passwordHash` and `_licences` to the client. Stored objects anywhere in a macro's result are
 * serialized as `GET` serves them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Macros } from '../../src/index.js';
import { call, demoService, login } from '../helpers.js';
import { overNode, type OverNode } from './over-node.js';

const macros: Macros = {
  me: async (ctx) => ctx.user(),
  nested: async (ctx) => ({ me: await ctx.user(), users: [await ctx.store.get('USR00001'), await ctx.store.get('USR00002')], n: 1 }),
  listing: async (ctx) => (await ctx.store.find({ className: 'User' })).objects,
  plain: () => ({ numbers: [1, 2, 3], text: 'as it is' }),
  // issue 23, item 4: the fields of a stored object taken out of it, and objects nested past the bound
  fieldsOnly: async (ctx) => ({ user: { ...(await ctx.user())!.fields }, deep: [{ _secret: 'x', kept: 1 }] }),
  deep: async (ctx) => {
    let value: unknown = await ctx.user();
    for (let i = 0; i < 70; i++) value = i % 2 ? [value] : { next: value };
    return value;
  },
  cyclic: () => {
    const value: Record<string, unknown> = { n: 1 };
    value.self = value;
    return value;
  },
};

describe('macros returning stored objects', () => {
  let node: OverNode;
  let sessionId: string;
  beforeAll(async () => {
    node = await overNode(await demoService({ macros }));
    sessionId = await login(node.remote, 'alice');
  });
  afterAll(() => node?.close());
  const run = (name: string) => call(node.remote, 'POST', `/v1/execute/${name}`, { headers: { sessionId } });

  test.each(['me', 'nested', 'listing'])('%s: no _ field reaches the client, objects are served with their metadata', async (name) => {
    const answer = await run(name);
    expect(answer.body.status.internalStatus).toBe('0');
    expect(answer.text).not.toMatch(/_passwordHash|_licences|pbkdf2/);
    expect(answer.text).toContain('"~ClassName":"User"');
  });

  test('the user object as GET serves it', async () => {
    const answer = await run('me');
    const served = await call(node.remote, 'GET', `/v1/object/${answer.body.data['~ObjectID']}`, { headers: { sessionId } });
    expect(answer.body.data).toEqual(served.body.data);
  });

  test('a result without stored objects or _ members is sent as it is', async () => {
    expect((await run('plain')).body.data).toEqual({ numbers: [1, 2, 3], text: 'as it is' });
  });

  test('issue 23, item 4: no member named _ is served at any depth, whatever shape holds it', async () => {
    const answer = await run('fieldsOnly');
    expect(answer.body.status.internalStatus).toBe('0');
    expect(answer.text).not.toMatch(/"_|pbkdf2/);
    expect(answer.body.data.user.Name).toBe('alice');
    expect(answer.body.data.deep).toEqual([{ kept: 1 }]);
  });

  test.each(['deep', 'cyclic'])('issue 23, item 4: %s: a value nested past the bound is a bare 500, never sent raw', async (name) => {
    const answer = await run(name);
    expect([answer.status, answer.body]).toEqual([500, { status: { internalStatus: '500', statusMessage: 'unexpected server error' }, data: {} }]);
    expect(answer.text).not.toMatch(/_passwordHash|pbkdf2/);
  });
});
