/** Saved queries (PROTOCOL.md 6.12, issue 50 item 1): every member bounded first; a save costs one entry, not the list. */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore, type ObjectStore } from '../../src/index.js';
import { call, demoService, expectError, login } from '../helpers.js';

/** `store` with the JSON size of every put's fields recorded. */
function measured(store: ObjectStore): { view: ObjectStore; puts: number[] } {
  const puts: number[] = [];
  const view = new Proxy(store, {
    get(target, name) {
      const member = Reflect.get(target, name) as unknown;
      if (name === 'put') return (input: Parameters<ObjectStore['put']>[0]) => (puts.push(JSON.stringify(input.fields).length), target.put(input));
      return typeof member === 'function' ? member.bind(target) : member;
    },
  });
  return { view, puts };
}

describe('saved query bounds and cost', () => {
  it('refuses each member beyond its bound with 400 naming it, blank text included', async () => {
    const service = await demoService();
    const alice = await login(service, 'dave', []);
    const put = (json: unknown, name = 'x') => call(service, 'PUT', `/v1/savedQueries/${encodeURIComponent(name)}`, { headers: { sessionId: alice }, json });
    const refused = async (json: unknown, message: string, name?: string) => {
      const answer = await put(json, name);
      expectError(answer, '400', 400);
      expect(answer.body.status.statusMessage).toBe(message);
    };
    await refused({ Class: 'Customer', Query: ' '.repeat(1_000_000) }, 'Query has at most 2000 characters (blank or not)');
    await refused({ Class: 'Customer', Query: 'x'.repeat(2001) }, 'Query has at most 2000 characters (blank or not)');
    await refused({ Class: 'Customer', Query: '' }, 'saved query name is longer than 100 characters', 'n'.repeat(101));
    await refused({ Name: 'n'.repeat(101), Class: 'Customer', Query: '' }, 'Name has at most 100 characters');
    await refused({ Class: 'Customer', Query: '', OrderBy: '_secret' }, 'OrderBy must be a field name of 1 to 128 characters (not starting with _, $ or ~), - in front for descending');
    await refused({ Class: 'Customer', Query: '', OrderBy: 'x'.repeat(129) }, 'OrderBy must be a field name of 1 to 128 characters (not starting with _, $ or ~), - in front for descending');
    await refused({ Class: 'Customer', Query: '', Columns: Array.from({ length: 101 }, (_, i) => `C${i}`) }, 'Columns lists at most 100 names');
    await refused({ Class: 'Customer', Query: '', Columns: ['Name', '$x'] }, 'a column must be a field name (not starting with _, $ or ~)');
    expect((await put({ Class: 'Customer', Query: ' '.repeat(2000), OrderBy: '-Name', Columns: ['Name'] })).body.status.internalStatus).toBe('0');
  });

  it('200 saves of the largest size: each writes one entry of its own size, the 201st is refused, and all are listed', async () => {
    const { view, puts } = measured(new MemoryObjectStore());
    const service = await demoService({ store: view });
    const dave = await login(service, 'dave', []);
    const as = (method: string, path: string, json?: unknown) => call(service, method, path, { headers: { sessionId: dave }, json });
    const query = `Name = "${'q'.repeat(1991)}"`;
    expect(query).toHaveLength(2000);
    const Columns = Array.from({ length: 100 }, (_, i) => `${'c'.repeat(125)}${String(i).padStart(3, '0')}`);
    const name = (i: number) => `${String(i).padStart(3, '0')}${'n'.repeat(97)}`;
    const before = puts.length;
    for (let i = 0; i < 200; i++) expect((await as('PUT', `/v1/savedQueries/${name(i)}`, { Class: 'Customer', Query: query, OrderBy: 'Name', Columns })).body.status.internalStatus).toBe('0');
    const written = puts.slice(before);
    // one entry per save, each of one query's size (about 15 kB), not the list's (about 3 MB at the end)
    expect(written).toHaveLength(200);
    expect(Math.max(...written)).toBeLessThan(20_000);
    expectError(await as('PUT', '/v1/savedQueries/one-more', { Class: 'Customer', Query: '' }), '400', 400);
    // replacing one writes that one entry again
    expect((await as('PUT', `/v1/savedQueries/${name(7)}`, { Class: 'Customer', Query: '' })).body.status.internalStatus).toBe('0');
    expect(puts.length - before).toBe(201);
    const listed = (await as('GET', '/v1/savedQueries')).body.data['~Elements'] as Array<{ Name: string; Query: string }>;
    expect(listed.map((saved) => saved.Name)).toEqual(Array.from({ length: 200 }, (_, i) => name(i)));
    expect(listed[7]!.Query).toBe('');
    // deleting one frees a place
    expect((await as('DELETE', `/v1/savedQueries/${name(3)}`)).body.status.internalStatus).toBe('0');
    expect((await as('PUT', '/v1/savedQueries/one-more', { Class: 'Customer', Query: '' })).body.status.internalStatus).toBe('0');
    expect(((await as('GET', '/v1/savedQueries')).body.data['~Elements'] as Array<{ Name: string }>).at(-1)!.Name).toBe('one-more');
  });

  it('20 saves of new names at once past 190: exactly 200 are kept', async () => {
    const service = await demoService();
    const dave = await login(service, 'dave', []);
    const as = (method: string, path: string, json?: unknown) => call(service, method, path, { headers: { sessionId: dave }, json });
    for (let i = 0; i < 190; i++) await as('PUT', `/v1/savedQueries/q${i}`, { Class: 'Customer', Query: '' });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => as('PUT', `/v1/savedQueries/r${i}`, { Class: 'Customer', Query: '' })));
    expect(answers.filter((answer) => answer.body.status.internalStatus === '0')).toHaveLength(10);
    expect((await as('GET', '/v1/savedQueries')).body.data['~Count']).toBe(200);
  });

  it('reads and moves lists kept the old way (one object per user, SAVEDQ_<user>)', async () => {
    const store = new MemoryObjectStore();
    const service = await demoService({ store });
    const dave = await login(service, 'dave', []);
    const as = (method: string, path: string, json?: unknown) => call(service, method, path, { headers: { sessionId: dave }, json });
    const principal = (await store.find({ className: 'User', where: { Name: 'dave' } })).objects[0]!.id;
    const old = [{ Name: 'old one', Class: 'Customer', Query: 'City = "Kiel"' }, { Name: 'old two', Class: 'Customer', Query: '', Columns: ['Name'] }];
    await store.put({ id: `SAVEDQ_${principal}`, className: 'SavedQueryList', fields: { _owner: principal, _queries: JSON.stringify(old) } });
    expect((await as('GET', '/v1/savedQueries')).body.data['~Elements']).toEqual(old);
    expect(await store.get(`SAVEDQ_${principal}`)).toBeUndefined();
    expect((await as('PUT', '/v1/savedQueries/new', { Class: 'Customer', Query: '' })).body.status.internalStatus).toBe('0');
    expect((await as('DELETE', '/v1/savedQueries/old%20one')).body.status.internalStatus).toBe('0');
    expect((await as('GET', '/v1/savedQueries')).body.data['~Elements'].map((saved: { Name: string }) => saved.Name)).toEqual(['old two', 'new']);
  });
});
