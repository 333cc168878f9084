import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Service } from '../src/index.js';
import { respond } from './node-http.js';

// Node's `http` adapter: converts an IncomingMessage into a web Request (streaming the body), passes
// the socket's address, and writes the web Response back. Nothing else. The conversions themselves
// are public for hosts with their own server loop.
export { toWebRequest, writeWebResponse } from './node-http.js';

/** A `(req, res)` listener for `http.createServer`. */
export function createNodeHandler(service: Service): (req: IncomingMessage, res: ServerResponse) => void {
  const failed = (res: ServerResponse) => () => {
    if (!res.headersSent) res.statusCode = 500;
    res.end();
  };
  return (req, res) => respond(service, req, res, undefined, failed(res));
}

/** Starts an HTTP server for the service; resolves once it listens. */
export function serve(service: Service, options: { port?: number; hostname?: string } = {}): Promise<Server> {
  const server = createServer(createNodeHandler(service));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8080, options.hostname, () => resolve(server));
  });
}

/** The `readFile` service option on Node (reads Apple's `.p8` key named by a provider entry). */
export const readTextFile = (path: string): Promise<string> => readFile(path, 'utf8');

export { loadConfig, openConfig, readSeedFile, type HostConfig, type FileConfig } from './node-config.js';
export { openBlobStore } from './config-modules.js';
export { nodeCrypto } from './node-crypto.js';
export { swaggerUiFiles } from './swagger-ui.js';
export { smtpMailer, type SmtpMailer } from './smtp-mailer.js';
