/** Listings with the filter language and ordering (PROTOCOL.md 6.2), through `service.fetch`. */
import { describe, expect, test } from 'vitest';
import { call, demoService, expectError, login } from '../helpers.js';

async function session() {
  const service = await demoService();
  const headers = { sessionId: await login(service) };
  const list = async (params: Record<string, unknown>) => {
    const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    return call(service, 'GET', `/v1/objects/Customer?${query}`, { headers });
  };
  const numbers = async (params: Record<string, unknown>) => {
    const result = await list(params);
    expect(result.status).toBe(200);
    return { total: result.body.data['~UnfilteredCount'] as number, numbers: result.body.data['~Elements'].map((o: { Number: number }) => o.Number) as number[] };
  };
  return { service, headers, list, numbers };
}

describe('query operators', () => {
  test.each([
    ['$ne', { Number: { $ne: 1 } }, (n: number) => n !== 1],
    ['$gt number', { Number: { $gt: 295 } }, (n: number) => n > 295],
    ['$gte number', { Number: { $gte: 295 } }, (n: number) => n >= 295],
    ['$lt number', { Number: { $lt: 4 } }, (n: number) => n < 4],
    ['$lte number', { Number: { $lte: 4 } }, (n: number) => n <= 4],
    ['$in', { Number: { $in: [3, 5, 400, 'x', null] } }, (n: number) => n === 3 || n === 5],
    ['$gt and $lt together', { Number: { $gt: 10, $lt: 14 } }, (n: number) => n > 10 && n < 14],
  ])('%s', async (_name, query, holds) => {
    const { numbers } = await session();
    const all = Array.from({ length: 300 }, (_, i) => i + 1).filter(holds);
    expect(await numbers({ query, perPage: '1000' })).toEqual({ total: all.length, numbers: all });
  });

  test('string operators compare by code point; $prefix and $exists', async () => {
    const { numbers } = await session();
    expect((await numbers({ query: { Name: { $prefix: 'Anna W' } } })).numbers).toEqual([90, 190, 290]);
    expect((await numbers({ query: { City: { $gte: 'Zurich' }, Number: { $lte: 20 } } })).numbers).toEqual([5, 11, 17]);
    expect((await numbers({ query: { City: { $lt: 'C' }, Number: { $lte: 6 } } })).numbers).toEqual([6]);
    expect((await numbers({ query: { Revenue: { $exists: true }, Number: { $lt: 3 } } })).numbers).toEqual([1, 2]);
    expect((await numbers({ query: { Nickname: { $exists: false }, Number: { $lt: 3 } } })).numbers).toEqual([1, 2]);
    expect((await numbers({ query: { Nickname: { $exists: true } } })).total).toBe(0);
  });

  test('a reference filter finds objects referencing that object', async () => {
    const { numbers } = await session();
    const found = await numbers({ query: { AccountManager: { '~ObjectID': 'EMP00002' }, Number: { $lte: 8 } } });
    expect(found).toEqual({ total: 4, numbers: [2, 4, 6, 8] });
  });

  test.each([
    [{ Number: { $foo: 1 } }, 'query member Number: unknown operator $foo (use $ne, $gt, $gte, $lt, $lte, $in, $prefix, $exists)'],
    [{ Number: { $ne: [1] } }, 'query member Number: $ne takes a string, number, boolean or null'],
    [{ Number: { $gt: true } }, 'query member Number: $gt takes a number or a string'],
    [{ Number: { $gte: null } }, 'query member Number: $gte takes a number or a string'],
    [{ Number: { $lt: {} } }, 'query member Number: $lt takes a number or a string'],
    [{ Number: { $lte: [2] } }, 'query member Number: $lte takes a number or a string'],
    [{ Number: { $in: 3 } }, 'query member Number: $in takes a list of at most 100 strings, numbers, booleans or nulls'],
    [{ Number: { $in: [[3]] } }, 'query member Number: $in takes a list of at most 100 strings, numbers, booleans or nulls'],
    [{ Number: { $in: Array.from({ length: 101 }, (_, i) => i) } }, 'query member Number: $in takes a list of at most 100 strings, numbers, booleans or nulls'],
    [{ Name: { $prefix: 1 } }, 'query member Name: $prefix takes a string'],
    [{ Name: { $exists: 'yes' } }, 'query member Name: $exists takes true or false'],
    [{ Name: {} }, 'query member Name holds no operator'],
    [{ Name: [] }, 'query member Name must be a scalar, a reference {"~ObjectID": ...} or an object of operators'],
    [{ AccountManager: { '~ObjectID': 7 } }, 'query member AccountManager: ~ObjectID must be an object id'],
    [{ _licences: { $exists: true } }, 'query member _licences may not name internal field _licences'],
    [{ '': 1 }, 'query member  must name a field of 1 to 128 characters'],
  ])('%j is 400', async (query, message) => {
    const { list } = await session();
    const result = await list({ query });
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe(message);
  });

  test('$in with exactly 100 values is accepted', async () => {
    const { numbers } = await session();
    expect((await numbers({ query: { Number: { $in: Array.from({ length: 100 }, (_, i) => i + 1) } }, perPage: '1000' })).total).toBe(100);
  });
});

describe('orderBy and reverseOrder', () => {
  test('ascending and descending by a number field', async () => {
    const { numbers } = await session();
    const up = await numbers({ orderBy: 'Revenue', perPage: '1000', query: { Number: { $lte: 20 } } });
    const down = await numbers({ orderBy: '-Revenue', perPage: '1000', query: { Number: { $lte: 20 } } });
    expect(up.numbers).toHaveLength(20);
    expect(down.numbers).toEqual([...up.numbers].reverse());
  });

  test('ties keep creation order; reverseOrder reverses the whole order, ties included', async () => {
    const { numbers } = await session();
    const query = { Number: { $lte: 12 } };
    // cities repeat every 6 customers (Hamburg, Munich, Cologne, Vienna, Zurich, Berlin)
    const byCity = await numbers({ query, orderBy: 'City', perPage: '100' });
    expect(byCity.numbers).toEqual([6, 12, 3, 9, 1, 7, 2, 8, 4, 10, 5, 11]);
    const byCityDown = await numbers({ query, orderBy: '-City', perPage: '100' });
    expect(byCityDown.numbers).toEqual([5, 11, 4, 10, 2, 8, 1, 7, 3, 9, 6, 12]);
    const reversed = await numbers({ query, orderBy: 'City', reverseOrder: 'true', perPage: '100' });
    expect(reversed.numbers).toEqual([...byCity.numbers].reverse());
  });

  test('paging over a filtered, ordered listing', async () => {
    const { numbers } = await session();
    const query = { City: 'Berlin', Active: true };
    const whole = await numbers({ query, orderBy: '-Revenue', perPage: '1000' });
    const pages: number[] = [];
    for (let page = 0; page * 7 < whole.total; page++) {
      const part = await numbers({ query, orderBy: '-Revenue', perPage: '7', page: String(page) });
      expect(part.total).toBe(whole.total);
      pages.push(...part.numbers);
    }
    expect(pages).toEqual(whole.numbers);
    expect(whole.total).toBeGreaterThan(7);
  });

  test.each([
    ['_passwordHash', 'orderBy may not name internal field _passwordHash'],
    ['-', 'orderBy must name a field of 1 to 128 characters'],
    ['x'.repeat(129), 'orderBy must name a field of 1 to 128 characters'],
  ])('orderBy=%s is 400', async (orderBy, message) => {
    const { list } = await session();
    const result = await list({ orderBy });
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe(message);
  });
});
