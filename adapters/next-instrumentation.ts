import { AsyncLocalStorage } from 'node:async_hooks';
import { Server, type IncomingMessage } from 'node:http';
import { CLIENT_ADDRESS_KEY } from './next-client-address.js';

/**
 * Makes the connection's address visible to `createRouteHandlers` under `next start` (Node runtime).
 * Call it from `instrumentation.ts`:
 *
 *     export async function register() {
 *       if (process.env.NEXT_RUNTIME === 'nodejs') (await import('odbrest/next/instrumentation')).trackClientAddress();
 *     }
 *
 * Why: Next gives route handlers a web Request without the socket, and its server fills in
 * `X-Forwarded-For` with the socket address only when the client did not send one, so that header
 * cannot tell the real address. This runs each HTTP request of the process inside an
 * AsyncLocalStorage holding `req.socket.remoteAddress`; no header is involved, so nothing a client
 * sends can change it. Idempotent.
 */
export function trackClientAddress(): void {
  const global = globalThis as Record<symbol, unknown>;
  if (global[CLIENT_ADDRESS_KEY]) return;
  const storage = new AsyncLocalStorage<string | undefined>();
  global[CLIENT_ADDRESS_KEY] = storage;
  const emit = Server.prototype.emit as (this: Server, event: string | symbol, ...args: unknown[]) => boolean;
  Server.prototype.emit = function emitWithClientAddress(this: Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event !== 'request') return emit.call(this, event, ...args);
    const address = (args[0] as IncomingMessage).socket?.remoteAddress;
    return storage.run(address, () => emit.call(this, event, ...args));
  };
}
