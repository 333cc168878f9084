import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Service } from '../src/index.js';

/**
 * Node's `http` adapter: converts an IncomingMessage into a web Request (streaming the body),
 * passes the socket's address, and writes the web Response back. Nothing else.
 */
export function toWebRequest(req: IncomingMessage, body?: BodyInit | null): Request {
  const host = req.headers.host ?? 'localhost';
  const protocol = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(`${protocol}://${host}${req.url ?? '/'}`, {
    method,
    headers,
    body: hasBody ? (body !== undefined ? body : (Readable.toWeb(req) as ReadableStream<Uint8Array>)) : undefined,
    // @ts-expect-error: Node's fetch needs duplex for streamed bodies; not yet in the DOM types
    duplex: hasBody ? 'half' : undefined,
  });
}

export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (!response.body) {
    res.end();
    return;
  }
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
  res.end();
}

/** A `(req, res)` listener for `http.createServer`. */
export function createNodeHandler(service: Service): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const request = toWebRequest(req);
    service
      .fetch(request, { clientAddress: req.socket.remoteAddress })
      .then((response) => writeWebResponse(res, response))
      .catch(() => {
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      });
  };
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

export { loadConfig, readSeedFile, type HostConfig } from '../src/cli/config.js';
