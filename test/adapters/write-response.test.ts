/**
 * `writeWebResponse` (exported from `odbrest/node` for hosts with their own server loop) with a client
 * that goes away while a large body is still being written.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import { writeWebResponse } from '../../adapters/node.js';

test('a client that disconnects mid-body ends the write and cancels the body stream', async () => {
  let cancelled!: () => void;
  const cancel = new Promise<void>((resolve) => (cancelled = resolve));
  const chunk = new Uint8Array(64 * 1024);
  let written!: Promise<unknown>;
  const server = createServer((_req, res) => {
    // endless: only a cancel stops it
    const body = new ReadableStream<Uint8Array>({ pull: (controller) => controller.enqueue(chunk), cancel: () => cancelled() });
    written = writeWebResponse(res, new Response(body)).then(
      () => 'settled',
      () => 'settled',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/' }, (res) => {
        res.once('data', () => {
          // stop reading, so the server's socket buffer fills and it waits to write, then go away
          res.pause();
          setTimeout(() => {
            req.destroy();
            resolve();
          }, 200);
        });
      });
      req.on('error', () => undefined);
      req.once('error', reject);
      req.end();
    });
    const within = (ms: number) => new Promise((resolve) => setTimeout(() => resolve('pending'), ms));
    expect(await Promise.race([cancel.then(() => 'cancelled'), within(5000)])).toBe('cancelled');
    expect(await Promise.race([written, within(5000)])).toBe('settled');
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
