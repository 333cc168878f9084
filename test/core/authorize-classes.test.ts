/**
 * `access.authorizeClasses` (PROTOCOL.md 6.4): a host declares which classes its `authorize` narrows;
 * the other classes keep the fast path of listings (a page from the store), and `authorize` is never
 * asked about their objects. Without it, `authorize` narrows every class, as before.
 */
import { describe, expect, test } from 'vitest';
import { demoAccess } from '../../examples/demo-access.mjs';
import type { AccessOptions, AccessQuestion } from '../../src/index.js';
import { call, demoService, login } from '../helpers.js';

async function demo(authorizeClasses: AccessOptions['authorizeClasses']) {
  const asked: AccessQuestion[] = [];
  const service = await demoService({
    access: { ...demoAccess, authorizeClasses, authorize: (context, question) => (asked.push(question), demoAccess.authorize!(context, question)) },
  });
  const headers = { sessionId: await login(service, 'alice') };
  const list = async (path: string) => {
    asked.length = 0;
    const answer = await call(service, 'GET', path, { headers });
    expect(answer.status, answer.text).toBe(200);
    return { total: answer.body.data['~UnfilteredCount'] as number, ids: answer.body.data['~Elements'].map((o: { '~ObjectID': string }) => o['~ObjectID']) as string[], asked: [...asked] };
  };
  return { list };
}

describe('access.authorizeClasses', () => {
  test('the classes it does not name are listed a page at a time, authorize never asked about their objects', async () => {
    const { list } = await demo(['ContactPerson']);
    const customers = await list('/v1/objects/Customer?perPage=2&query=%7B%22City%22%3A%22Berlin%22%7D');
    expect([customers.total, customers.ids]).toEqual([50, ['CUS00006', 'CUS00012']]);
    // only about the contact person the page's account manager references (serialized as far as alice may read it)
    expect(customers.asked.map((question) => [question.className, question.object?.id])).toEqual([['ContactPerson', 'CON00002']]);
    // the class it names is still narrowed object by object: alice reads only her employee's contact person
    const contacts = await list('/v1/objects/ContactPerson');
    expect([contacts.total, contacts.ids]).toEqual([1, ['CON00001']]);
    expect(new Set(contacts.asked.map((question) => question.className))).toEqual(new Set(['ContactPerson']));
    expect(contacts.asked.length).toBeGreaterThanOrEqual(2);
  });

  test('without it authorize narrows every class, as before: a listing asks it about every object of the class', async () => {
    const { list } = await demo(undefined);
    const customers = await list('/v1/objects/Customer?perPage=2&query=%7B%22City%22%3A%22Berlin%22%7D');
    expect([customers.total, customers.ids]).toEqual([50, ['CUS00006', 'CUS00012']]);
    expect(customers.asked.filter((question) => question.className === 'Customer').length).toBeGreaterThanOrEqual(50);
    expect((await list('/v1/objects/ContactPerson')).ids).toEqual(['CON00001']);
  });
});
