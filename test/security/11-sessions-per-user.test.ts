/**
 * Issue 12, finding 11: nothing capped one user's live sessions (20,000 logins without logout grew
 * the process by 3.6 KB each). A principal holds at most `session.maxPerUser` live sessions; a login
 * beyond it ends the oldest. (Memory per live session: `npm run bench -- core`.)
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryKeyValueStore } from '../../src/index.js';
import { call, demoService, login } from '../helpers.js';
import { overNode, type OverNode } from './over-node.js';

describe('live sessions per user', () => {
  let node: OverNode;
  beforeAll(async () => {
    node = await overNode(await demoService({ session: { maxPerUser: 3 } }));
  });
  afterAll(() => node?.close());
  const status = async (sessionId: string) => (await call(node.remote, 'GET', '/v1/object/CUS00001', { headers: { sessionId } })).body.status.internalStatus;

  test('the fourth login ends the oldest session; the others and other users keep theirs', async () => {
    const bob = await login(node.remote, 'bob');
    const sessions = [];
    for (let i = 0; i < 4; i++) sessions.push(await login(node.remote, 'alice'));
    expect(await Promise.all(sessions.map(status))).toEqual(['201', '0', '0', '0']);
    expect(await status(bob)).toBe('0');
  });

  test('parallel logins of one user keep at most the cap live', async () => {
    const sessions = await Promise.all(Array.from({ length: 5 }, () => login(node.remote, 'dave', [])));
    const live = (await Promise.all(sessions.map((sessionId) => call(node.remote, 'POST', '/v1/execute/none', { headers: { sessionId } })))).filter(
      (answer) => answer.body.status.internalStatus !== '201',
    );
    expect(live).toHaveLength(3);
  });

  test('a login writes the same small entries whatever the number of sessions (no list of them all rewritten per login)', async () => {
    const kv = new MemoryKeyValueStore();
    const written: number[] = [];
    const measured = new Proxy(kv, {
      get(target, name: string) {
        const member = Reflect.get(target, name);
        if (typeof member !== 'function') return member;
        if (name !== 'set' && name !== 'compareAndSet') return member.bind(target);
        return (...args: unknown[]) => {
          written.push(...args.filter((arg): arg is string => typeof arg === 'string' && !arg.startsWith('sess:')).map((value) => value.length));
          return (member as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const service = await demoService({ kv: measured, session: { maxPerUser: 1000 } });
    const sessions = [];
    for (let i = 0; i < 200; i++) sessions.push(await login(service, 'alice'));
    // the session itself (a few hundred bytes) and one page of 32 slots; nothing that grows with the 200 sessions
    expect(Math.max(...written)).toBeLessThan(1200);
    const status = async (sessionId: string) => (await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId } })).body.status.internalStatus;
    expect(await status(sessions[0]!)).toBe('0');
  });
});
