/**
 * The Bun and Deno handlers hand their server the `Response` itself where the service answers at once
 * (the read path): Bun writes such an answer without a promise turn (issue 53). A request that has to
 * wait is answered with a promise, and a malformed one still with its envelope.
 */
import { expect, test } from 'vitest';
import { createBunHandler } from '../../adapters/bun.js';
import { createDenoHandler } from '../../adapters/deno.js';
import { APP_KEY, demoService, login } from '../helpers.js';

test('a GET read at once is answered with the Response itself, the same bytes as service.fetch; a malformed Host with its 400 envelope', async () => {
  const service = await demoService();
  const sessionId = await login(service);
  const headers = { appkey: APP_KEY, sessionid: sessionId, 'x-request-id': 'runtime-handlers' };
  const request = () => new Request('http://localhost/v1/object/CUS00001', { headers });
  const expected = await (await service.fetch(request())).text();
  const handlers = [
    (r: Request) => createBunHandler(service)(r, { requestIP: () => ({ address: '127.0.0.1' }) }),
    (r: Request) => createDenoHandler(service)(r, { remoteAddr: { transport: 'tcp', hostname: '127.0.0.1' } }),
  ];
  for (const handler of handlers) {
    const answer = handler(request());
    expect(answer).toBeInstanceOf(Response);
    const response = answer as Response;
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.text()).toBe(expected);
    const refused = await handler(new Request('http://localhost/v1/object/CUS00001', { headers: { ...headers, host: 'a/b' } }));
    expect(refused.status).toBe(400);
    expect((await refused.json()).status.internalStatus).toBe('400');
  }
});
