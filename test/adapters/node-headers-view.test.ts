/**
 * A GET's headers reach the service as a view over Node's header record (no copy per request): they
 * must read as the web `Headers` copy read, including what a host's own code wrote into the record.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHandler } from '../../adapters/node.js';
import { ApiError, type Service } from '../../src/index.js';

let read: (headers: Headers) => unknown = () => null;
const service = {
  draining: false,
  fetch: async (request: Request) => {
    try {
      return Response.json({ read: read(request.headers) });
    } catch (error) {
      if (error instanceof ApiError) return Response.json({ refused: error.code }, { status: 400 });
      throw error;
    }
  },
} as unknown as Service;
const handle = createNodeHandler(service);
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  // what a host's middleware may write into the record before the service sees the request
  req.headers['x-host-set'] = '  padded\t';
  if (req.url?.includes('bad')) req.headers['x-host-bad'] = 'line\r\nbreak';
  handle(req, res);
});
let base = '';
beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

async function answer(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, { headers });
  return { status: response.status, body: await response.json() };
}

describe("a GET's headers, read through the view", () => {
  it('answer get and has as Headers would, by any case of the name', async () => {
    read = (headers) => [headers instanceof Headers, headers.get('AppKey'), headers.get('x-host-set'), headers.has('SESSIONID'), headers.has('x-none'), headers.get('x-none')];
    expect((await answer('/', { appkey: 'demo', sessionId: 's1' })).body.read).toEqual([true, 'demo', 'padded', true, false, null]);
  });

  it('iterate, copy and change as a web Headers', async () => {
    read = (headers) => {
      const copy = new Headers(headers);
      headers.set('x-added', '1');
      return [copy.get('appkey'), [...headers].some(([name]) => name === 'x-host-set'), headers.get('x-added'), headers.get('appkey')];
    };
    expect((await answer('/', { appkey: 'demo' })).body.read).toEqual(['demo', true, '1', 'demo']);
  });

  it('refuse a value no HTTP parser lets through, once it is read (400)', async () => {
    read = (headers) => headers.get('x-host-bad');
    expect(await answer('/bad')).toEqual({ status: 400, body: { refused: '400' } });
    read = (headers) => headers.get('appkey');
    expect((await answer('/bad', { appkey: 'demo' })).body.read).toBe('demo');
  });
});
