/**
 * A body far over `maxBodyBytes` through a real `node:http` server (the Node example, its own
 * process): the service answers `413` before reading it all and the connection closes. The adapter
 * reads on (and drops) what follows for a while before it closes, so the kernel does not reset the
 * connection under the answer (a reset sent with bytes unread can overtake the `413`: the client sees
 * a network error instead).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { APP_KEY } from '../helpers.js';
import { startServer, type RunningServer } from './servers.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer('node');
}, 90_000);
afterAll(() => server?.stop());

test('a 10 MiB body to a route with the default 1 MiB limit is answered 413, every time', async () => {
  const body = new Uint8Array(10 * 1024 * 1024).fill(0x78);
  const outcomes: string[] = [];
  for (let i = 0; i < 20; i++) {
    try {
      const response = await fetch(`${server.origin}/api/v1/object/Customer`, { method: 'POST', headers: { appkey: APP_KEY, 'content-type': 'application/json' }, body });
      const envelope = (await response.json()) as { status: { internalStatus: string } };
      outcomes.push(`${response.status} ${envelope.status.internalStatus} ${response.headers.get('connection')}`);
    } catch (error) {
      outcomes.push(`network error: ${String((error as Error).cause ?? error)}`);
    }
  }
  expect(outcomes).toEqual(Array(20).fill('413 413 close'));
}, 120_000);
