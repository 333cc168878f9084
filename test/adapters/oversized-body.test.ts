/**
 * A body far over `maxBodyBytes` through a real `node:http` server (`npm start`'s demo, its own
 * process): the service answers `413` before reading it all and the connection closes. The adapter
 * reads on (and drops) what follows for a while before it closes, so the kernel does not reset the
 * connection under the answer (a reset sent with bytes unread can overtake the `413`: the client sees
 * a network error instead).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Service } from '../../src/index.js';
import { APP_KEY, login } from '../helpers.js';
import { remoteService, spawnLines, type LineProcess } from '../support/processes.js';
import { ROOT } from './servers.js';

let demo: LineProcess;
let api: string;
beforeAll(async () => {
  // `npm start`'s server: its GET by id is answered in the request's own turn
  demo = spawnLines(process.execPath, ['examples/node/server.mjs'], { PORT: '0', ODBREST_HOSTNAME: '127.0.0.1', ODBREST_REQUEST_LOG: 'false', ODBREST_PASSWORD_ITERATIONS: '1000' }, { cwd: ROOT });
  const port = /listening on http:\/\/[^:]+:(\d+)/.exec(await demo.waitFor((line) => line.includes('listening on'), 60_000))![1];
  api = `http://127.0.0.1:${port}`;
}, 90_000);
afterAll(() => demo?.stop());

test('a 10 MiB body to a route with the default 1 MiB limit is answered 413, every time', async () => {
  const body = new Uint8Array(10 * 1024 * 1024).fill(0x78);
  const outcomes: string[] = [];
  for (let i = 0; i < 20; i++) {
    try {
      const response = await fetch(`${api}/v1/object/Customer`, { method: 'POST', headers: { appkey: APP_KEY, 'content-type': 'application/json' }, body });
      const envelope = (await response.json()) as { status: { internalStatus: string } };
      outcomes.push(`${response.status} ${envelope.status.internalStatus} ${response.headers.get('connection')}`);
    } catch (error) {
      outcomes.push(`network error: ${String((error as Error).cause ?? error)}`);
    }
  }
  expect(outcomes).toEqual(Array(20).fill('413 413 close'));
}, 120_000);

test('a GET read at once and a small POST are answered on a connection kept open', async () => {
  const sessionId = await login(remoteService(api) as unknown as Service);
  const headers = { appkey: APP_KEY, sessionid: sessionId };
  for (const init of [{ headers }, { method: 'POST', body: '{}', headers: { ...headers, 'content-type': 'application/json' } }]) {
    const response = await fetch(`${api}/v1/object/CUS00001`, init);
    await response.arrayBuffer();
    expect(response.headers.get('connection')).toBe('keep-alive');
  }
});
