/** HTTP as an attacker sends it: any `Host`, any method, paths sent exactly as written. */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { parseOrUndefined } from '../helpers.js';

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  contentType: string | undefined;
  text: string;
  /** The parsed body, or undefined when it is not JSON (an HTML or plain-text error page). */
  body: any;
}

export interface RawRequest {
  method: string;
  /** Sent as the request-target, unchanged. */
  path: string;
  /** The `Host` header as sent (default: the server's own address). */
  host?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** Sends one request to `origin` (e.g. `http://127.0.0.1:40123`) over a fresh connection. */
export function rawRequest(origin: string, sent: RawRequest): Promise<RawAnswer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        hostname,
        port,
        method: sent.method,
        path: sent.path,
        setHost: false,
        agent: false,
        headers: { host: sent.host ?? `${hostname}:${port}`, connection: 'close', ...sent.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode!, headers: res.headers, contentType: res.headers['content-type'], text, body: parseOrUndefined(text) });
        });
        res.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(sent.body);
  });
}

/** The whole envelope of a failure with `data: {}`. */
export function failure(internalStatus: string, statusMessage: string) {
  return { status: { internalStatus, statusMessage }, data: {} };
}
