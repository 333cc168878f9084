/**
 * The service reads a request's path and query off its URL string (it is already in the URL parser's
 * form): every shape of URL a web Request can carry routes and logs as `new URL` would read it.
 */
import { describe, expect, it } from 'vitest';
import { APP_KEY, demoService, login } from '../helpers.js';

describe('a request URL of any shape', () => {
  it('routes by its path and reads its query, as the URL parser reads them', async () => {
    const lines: string[] = [];
    const service = await demoService({ logger: (line) => lines.push(line) });
    const sessionId = await login(service, 'alice');
    const get = async (url: string) => {
      const response = await service.fetch(new Request(url, { headers: { appkey: APP_KEY, sessionId } }));
      return { status: response.status, body: JSON.parse(await response.text()), line: lines.at(-1) };
    };
    const cases: Array<[url: string, id: string | undefined, path: string]> = [
      ['http://h/v1/object/CUS00001', 'CUS00001', '/v1/object/CUS00001'],
      ['http://h/v1/object/CUS00001#fragment', 'CUS00001', '/v1/object/CUS00001'],
      ['http://h/v1/object/CUS00001#a?b=c/d', 'CUS00001', '/v1/object/CUS00001'],
      ['http://h/v1/object/CUS00001?', 'CUS00001', '/v1/object/CUS00001'],
      ['http://h:8080/v1/object/CUS00001', 'CUS00001', '/v1/object/CUS00001'],
      ['http://[::1]:81/v1/object/CUS00001?x=1#y', 'CUS00001', '/v1/object/CUS00001?x=***'],
      ['http://h/v1/object/../object/./CUS00001', 'CUS00001', '/v1/object/CUS00001'],
      ['http://h/v1/object/CUS%30%30001', undefined, '/v1/object/CUS%30%30001'],
    ];
    for (const [url, id, logged] of cases) {
      const { status, body, line } = await get(url);
      expect(line, url).toMatch(new RegExp(`^\\S+ GET ${logged.replace(/[?*.]/g, '\\$&')} `));
      if (id) expect([status, body.data['~ObjectID']], url).toEqual([200, id]);
      else expect(status, url).not.toBe(500);
    }
    // the query as the URL parser splits it: what follows '#' is no part of it
    const listed = await get(`http://h/v1/objects/Customer?perPage=2#perPage=5`);
    expect(listed.body.data['~Elements']).toHaveLength(2);
    expect(listed.line).toMatch(/^\S+ GET \/v1\/objects\/Customer\?perPage=\*\*\* 200 /);
  });
});
