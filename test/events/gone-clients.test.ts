/**
 * Issue 54: an event stream whose client has gone ends at once, on every runtime's adapter (the
 * example servers as real processes). Five streams of one session, their connections cut; the
 * sixth, asked for at once, is served (`200`), not refused with `429` as it was on Node, where the
 * dead streams stayed open for good.
 */
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loginBody } from '../helpers.js';
import { startServer, type RunningServer, type ServerKind } from '../adapters/servers.js';

const APP_KEY = 'e2e';
/** PROTOCOL.md 8: at most 5 streams per session. */
const PER_SESSION = 5;

/** Opens a stream and waits for its opening comment; resolves with the request (to cut) and the answer. */
function openStream(origin: string, sessionId: string): Promise<{ req: ClientRequest; res: IncomingMessage; status: number }> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}/api/v1/events?subscribe=${encodeURIComponent('[{"className":"Customer"}]')}`, {
      agent: false,
      headers: { appkey: APP_KEY, sessionId, accept: 'text/event-stream' },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return resolve({ req, res, status: res.statusCode ?? 0 });
      }
      res.once('data', () => resolve({ req, res, status: 200 }));
    });
    req.end();
  });
}

async function login(origin: string): Promise<string> {
  const response = await fetch(`${origin}/api/v1/login`, {
    method: 'POST',
    headers: { appkey: APP_KEY, 'content-type': 'application/json' },
    body: JSON.stringify(loginBody('alice', 'alice-secret')),
  });
  return ((await response.json()) as { data: { sessionId: string } }).data.sessionId;
}

/** The sixth stream, asked for until the server has heard of the cut connections (a few turns of its loop at most). */
async function sixth(origin: string, sessionId: string): Promise<number> {
  let status = 0;
  for (let attempt = 0; attempt < 20; attempt++) {
    const opened = await openStream(origin, sessionId);
    status = opened.status;
    opened.req.destroy();
    if (status === 200) return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return status;
}

for (const kind of ['node', 'bun', 'deno'] as ServerKind[]) {
  describe(`${kind}: a stream whose client has gone`, () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await startServer(kind);
    }, 60_000);
    afterAll(() => server?.stop());

    test('is closed at once: five streams cut, the sixth is served, not refused 429', async () => {
      const sessionId = await login(server.origin);
      const streams = [];
      for (let i = 0; i < PER_SESSION; i++) streams.push(await openStream(server.origin, sessionId));
      expect(streams.map((stream) => stream.status)).toEqual([200, 200, 200, 200, 200]);
      // while they are open, a sixth is refused (the limit holds)
      const refused = await openStream(server.origin, sessionId);
      refused.req.destroy();
      expect(refused.status).toBe(429);
      for (const stream of streams) stream.req.destroy();
      expect(await sixth(server.origin, sessionId)).toBe(200);
    });
  });
}
