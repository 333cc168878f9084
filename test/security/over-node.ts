/** A service behind the real Node adapter (`serve` from odbrest/node) on a loopback port, for the security tests. */
import type { Server } from 'node:http';
import { serve } from '../../adapters/node.js';
import type { Service } from '../../src/index.js';
import { remoteService } from '../support/processes.js';

export interface OverNode {
  /** `call`-able: every request crosses a real socket and the Node adapter. */
  remote: Service;
  origin: string;
  close(): Promise<void>;
}

export async function overNode(service: Service): Promise<OverNode> {
  const server: Server = await serve(service, { port: 0, hostname: '127.0.0.1' });
  const { port } = server.address() as { port: number };
  const origin = `http://127.0.0.1:${port}`;
  return {
    // redirects are answers to check, not to follow
    remote: remoteService(origin, (input, init) => fetch(input, { ...init, redirect: 'manual' })) as unknown as Service,
    origin,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
