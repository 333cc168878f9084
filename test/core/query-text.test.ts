/** The product's query object and query text (PROTOCOL.md 6.2), against the demo's customers. */
import { describe, expect, test } from 'vitest';
import { demoAccess } from '../../examples/demo-access.mjs';
import { afterAll } from 'vitest';
import type { Fields, ObjectStore } from '../../src/index.js';
import { PostgresObjectStore } from '../../stores/postgres.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from '../support/servers.js';
import { queryTextWhere } from '../../src/query/index.js';
import { compileWhere } from '../../src/storage/filter.js';
import { call, demoData, demoService, expectError, login } from '../helpers.js';

async function lister(store?: ObjectStore) {
  const service = await demoService(store ? { store } : {});
  const sessionId = await login(service);
  return (query: unknown, extra = '') =>
    call(service, 'GET', `/v1/objects/Customer?perPage=1000&query=${encodeURIComponent(JSON.stringify(query))}${extra}`, { headers: { sessionId } });
}

describe('queryString', () => {
  test('query text selects as the JSON filter does; keywords in any case, bare words are strings', async () => {
    const list = await lister();
    const json = await list({ City: 'Berlin' });
    expect(json.body.data['~Count']).toBeGreaterThan(0);
    for (const text of ['query City = "Berlin";', 'City=Berlin', "QUERY City == 'Berlin'", 'not (City <> "Berlin")']) {
      const answer = await list({ queryString: text });
      expect([text, answer.body.data]).toEqual([text, json.body.data]);
    }
  });

  test('or, like, in and is null', async () => {
    const list = await lister();
    const all = (await list({})).body.data['~Elements'] as Record<string, unknown>[];
    const ids = (answer: { body: { data: { '~Elements': { '~ObjectID': string }[] } } }) => answer.body.data['~Elements'].map((o) => o['~ObjectID']);
    const expected = (keep: (o: Record<string, unknown>) => boolean) => all.filter(keep).map((o) => o['~ObjectID']);
    const city = (o: Record<string, unknown>) => String(o.City ?? '');
    expect(ids(await list({ queryString: 'City = "Berlin" or City = "Hamburg"' }))).toEqual(expected((o) => ['Berlin', 'Hamburg'].includes(city(o))));
    expect(ids(await list({ queryString: 'City like "b*N"' }))).toEqual(expected((o) => /^b.*n$/i.test(city(o))));
    expect(ids(await list({ queryString: 'City in ("Berlin", Hamburg)' }))).toEqual(expected((o) => ['Berlin', 'Hamburg'].includes(city(o))));
    expect(ids(await list({ queryString: 'Nowhere is null' }))).toEqual(expected(() => true));
    expect(ids(await list({ queryString: 'City is null' }))).toEqual(expected((o) => o.City === undefined || o.City === null));
  });

  test('oids and sortIndex', async () => {
    const list = await lister();
    const all = (await list({})).body.data['~Elements'] as { '~ObjectID': string; City: string }[];
    const two = [all[3]!['~ObjectID'], all[1]!['~ObjectID']];
    const answer = await list({ oids: two });
    expect(answer.body.data['~Elements'].map((o: { '~ObjectID': string }) => o['~ObjectID'])).toEqual([all[1]!['~ObjectID'], all[3]!['~ObjectID']]);
    const sorted = await list({ sortIndex: '!City' });
    const cities = sorted.body.data['~Elements'].map((o: { City: string }) => o.City);
    expect(cities).toEqual([...cities].sort().reverse());
  });

  test.each([
    ['query Nummer =', 'query text: expected a value after \'=\' at 14'],
    ['City = "Berlin', 'query text: expected a closing " for the string at 7'],
    ['(((City = 1)', 'query text: expected ")" to close the "(" of 1 at 12'],
    ['City ~ 1', 'query text: expected a name, value or operator, not "~" at 5'.replace('"~"', '"~"')],
    ['A.B.C.D.E = 1', 'query text: expected at most 3 references followed in a path at 8'],
    ['_Password = 1', 'query text: expected a field name not starting with _ at 0'],
  ])('%s: 400 naming the position', async (text, message) => {
    const list = await lister();
    const answer = await list({ queryString: text });
    expectError(answer, '400', 400);
    if (!message.includes('~')) expect(answer.body.status.statusMessage).toBe(message);
  });

  test('an unknown member of the query object is 400, never a wider answer', async () => {
    const list = await lister();
    for (const query of [{ $or: [] }, { macro: 'x' }, { folderPath: '/' }, { oids: 'V2YZ' }, { sortIndex: 3 }]) expectError(await list(query), '400', 400);
  });
});

describe('empty classes', () => {
  test("a class with no objects is the empty set, not 404: the demo names the product client's Dokument", async () => {
    const service = await demoService({ access: demoAccess });
    const sessionId = await login(service);
    const answer = await call(service, 'GET', '/v1/objects/Dokument', { headers: { sessionId } });
    expect([answer.status, answer.body.status.internalStatus, answer.body.data]).toEqual([200, '0', { '~Count': 0, '~UnfilteredCount': 0, '~Elements': [] }]);
  });

  test('a name that is no class (not declared, not in the rules, no objects) is 404 on every route naming a class, as GET /v1/object/{name}', async () => {
    const service = await demoService({ schema: { Dokument: { fields: { Name: 'string' } } } });
    const sessionId = await login(service);
    const send = (method: string, path: string, json?: unknown) => call(service, method, path, { headers: { sessionId }, json });
    const query = `query=${encodeURIComponent('{"queryString":"Name = x"}')}`;
    for (const [method, path, json] of [
      ['GET', '/v1/objects/Costumer'],
      ['GET', `/v1/objects/Costumer?${query}`],
      ['GET', '/v1/object/Costumer'],
      ['PATCH', '/v1/objects/Costumer', { Name: 'x' }],
      ['POST', `/v1/action/Costumer?actions=${encodeURIComponent('[]')}`],
      ['POST', '/v2/objectdata/byQuery', [{ className: 'Costumer', query: 'Name = x' }]],
      ['POST', '/v2/objectdata/byid', [{ className: 'Costumer', ids: ['CUS00001'] }]],
    ] as const) {
      const answer = await send(method, path, json);
      expect([path, answer.status, answer.body.status.internalStatus]).toEqual([path, 404, '404']);
      expect(answer.body.status.statusMessage).toContain('Costumer');
    }
    // a filter matching nothing in a class that exists is still the empty set, and so is a declared class
    for (const path of [`/v1/objects/Customer?${query}`, '/v1/objects/Dokument']) {
      expect((await send('GET', path)).body.data, path).toEqual({ '~Count': 0, '~UnfilteredCount': 0, '~Elements': [] });
    }
  });

  test('every route naming a class answers an empty one as the empty set; GET /v1/object/{className} when the class is declared or has rules', async () => {
    const empty = { '~Count': 0, '~UnfilteredCount': 0, '~Elements': [] };
    const service = await demoService({
      schema: { Dokument: { fields: { Name: 'string' } } },
      access: { rules: { Dokument: { read: ['*'], update: ['*'] }, Akte: { read: ['*'] }, Geheim: { read: ['nobody'] } } },
    });
    const sessionId = await login(service);
    const send = (method: string, path: string, json?: unknown) => call(service, method, path, { headers: { sessionId }, json });
    for (const name of ['Dokument', 'Akte']) {
      for (const path of [`/v1/object/${name}`, `/v1/objects/${name}`, `/v1/object/${name}?query=${encodeURIComponent('{"queryString":"Name = x"}')}`]) {
        const answer = await send('GET', path);
        expect([path, answer.status, answer.body.data]).toEqual([path, 200, empty]);
      }
    }
    expect((await send('PATCH', '/v1/objects/Dokument', { Name: 'x' })).body.data).toEqual(empty);
    expect((await send('POST', '/v2/objectdata/byQuery', [{ className: 'Dokument', query: 'Name = x' }])).body.data).toEqual([empty]);
    expect((await send('POST', '/v2/objectdata/byid', [{ className: 'Dokument', ids: ['X'] }])).body.data).toEqual([empty]);
    // a class the session may not read: 403, on both forms
    expectError(await send('GET', '/v1/object/Geheim'), '403', 403);
    expectError(await send('GET', '/v1/objects/Geheim'), '403', 403);
    // a segment that names no class (undeclared, no rules, no objects) is an object id that is not there
    expectError(await send('GET', '/v1/object/NOSUCH01'), '404', 404);
  });
});

const postgres = await serverAvailable('PostgreSQL', 'the query text fuzz on PostgreSQL');

describe('fuzz: bad query text is 400 in bounded time, never 5xx', () => {
  /** The demo's objects as the store holds them, and the customers a filter selects, computed in process. */
  const objects = demoData().objects.map((o) => {
    const { '~ClassName': className, '~ObjectID': id, ...fields } = o as Record<string, unknown>;
    return { id: id as string, className: className as string, storeTime: 0, fields: fields as Fields };
  });
  const byId = new Map(objects.map((o) => [o.id, o]));
  const customers = objects.filter((o) => o.className === 'Customer');
  const expected = (text: string) => {
    const test = compileWhere(queryTextWhere(text), (id) => byId.get(id));
    return customers.filter((o) => test(o.fields, o)).map((o) => o.id);
  };

  const schema = `odbrest_fuzz_${RUN_ID}`;
  const store = postgres ? new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' }) : undefined;
  afterAll(async () => {
    await store?.close();
    if (postgres) await dropSchema(schema);
  });

  test.each([['memory', undefined], ...(store ? [['PostgreSQL', store]] : [])] as [string, ObjectStore | undefined][])(
    'random tokens, deep parentheses, 100 KB strings, unbalanced quotes (%s store): 400, or exactly the filter\'s answer',
    { timeout: 180_000 },
    async (_, store) => {
    const list = await lister(store);
    const pieces = ['(', ')', '"', "'", 'and', 'or', 'not', '=', '<>', '<', '>=', 'like', 'in', 'is', 'null', ',', '.', 'City', 'Name', 'Revenue',
      'AccountManager', 'Name1', '"Berlin"', "'B*'", '5', '1000', 'true', '\\', '~', ';', '||', '&&', 'query', '"\\"', '*', '?', '_x', '-1e400'];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const big = 'x'.repeat(100_000);
    const texts = [
      '('.repeat(5000),
      `${'('.repeat(40)}City = 1${')'.repeat(40)}`,
      `${'('.repeat(31)}City = Berlin${')'.repeat(31)}`,
      `${'not '.repeat(400)}City = 1`,
      `City = "${big}`,
      `City = "${big}"`,
      `City like '${big}'`,
      big,
      'é'.repeat(100_000),
      `City = "Berlin" ${'or City = "Berlin" '.repeat(70)}`,
      'City = "abc',
      "City = 'abc",
      'City = "a\\"',
      'City = "a\\',
      `City = "a" or Name = 'b`,
      '"',
      "'",
      'City = "\u0000"',
      'AccountManager.Name1.Bild.Name.X = 1',
      'AccountManager.Name1 = Alice',
      'City = "Berlin"; City = "Bonn"',
    ];
    for (let i = 0; i < 400; i++) texts.push(Array.from({ length: 1 + Math.floor(random() * 14) }, () => pieces[Math.floor(random() * pieces.length)]).join(random() < 0.5 ? ' ' : ''));
    let refused = 0;
    for (const text of texts) {
      const answer = await list({ queryString: text });
      const label = `${text.slice(0, 80)} (${text.length} characters)`;
      expect(answer.status, label).toBeLessThan(500);
      let want: string[] | undefined;
      try {
        want = expected(text);
      } catch {
        want = undefined; // the parser refuses it: so must the service
      }
      if (want === undefined) {
        expect([label, answer.status, answer.body.status.statusMessage]).toEqual([label, 400, expect.stringMatching(/^query text: expected .* at \d+$/)]);
        refused++;
      } else {
        expect([label, answer.status]).toEqual([label, 200]);
        expect([label, answer.body.data['~Elements'].map((o: { '~ObjectID': string }) => o['~ObjectID'])]).toEqual([label, want]);
      }
    }
    expect(refused).toBeGreaterThan(texts.length / 2);
    },
  );
});
