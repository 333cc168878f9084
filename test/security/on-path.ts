/** An attacker on the path between `odbrest/client` and a real server: forwards, or answers itself. */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the attacker does with one request: `undefined` forwards it; a Response is answered instead. */
export type Interception = (request: { method: string; path: string; headers: Headers; body: Buffer }) => Response | Headers | undefined;

export interface OnPath {
  /** Where clients connect instead of the server. */
  origin: string;
  /** Replaces the attacker's behaviour (a returned `Headers` is forwarded in place of the client's). */
  intercept(interception: Interception | undefined): void;
  /** Every request body that passed, by path. */
  seen: Array<{ path: string; body: string }>;
  close(): Promise<void>;
}

const HOP_BY_HOP = ['connection', 'content-length', 'transfer-encoding', 'keep-alive', 'host'];

export async function onPath(target: string): Promise<OnPath> {
  let interception: Interception | undefined;
  const seen: OnPath['seen'] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const path = req.url ?? '/';
      seen.push({ path, body: body.toString('utf8') });
      let headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && !HOP_BY_HOP.includes(name)) headers.set(name, value);
      const decided = interception?.({ method: req.method!, path, headers, body });
      if (decided instanceof Headers) headers = decided;
      try {
        const response = decided instanceof Response ? decided : await forward(target, req.method!, path, headers, body);
        res.statusCode = response.status;
        response.headers.forEach((value, name) => {
          if (!HOP_BY_HOP.includes(name)) res.setHeader(name, value);
        });
        res.end(Buffer.from(await response.arrayBuffer()));
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    intercept: (next) => void (interception = next),
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * One request to the server over its own connection (a server that answers `413` before reading the
 * body closes the connection; a pooled one would fail the next request).
 */
function forward(target: string, method: string, path: string, headers: Headers, body: Buffer): Promise<Response> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${target}${path}`, { method, headers: Object.fromEntries(headers), agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') answer.set(name, value);
        resolve(new Response(res.statusCode === 204 ? null : Buffer.concat(chunks), { status: res.statusCode, headers: answer }));
      });
    });
    request.on('error', reject);
    request.end(body.length > 0 ? body : undefined);
  });
}
