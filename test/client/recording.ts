/** A typed client of an in-process service whose every exchange is recorded, for the client tests. */
import { createClient, type OdbRestClient } from '../../src/client/index.js';
import type { Service } from '../../src/index.js';
import { APP_KEY } from '../helpers.js';

export interface Sent {
  method: string;
  path: string;
  headers: Headers;
  body: string | undefined;
  status: number;
  contentType: string | null;
  text: string;
}

/** A client of `service` (through `service.fetch`) whose every exchange is recorded. */
export function recordingClient(service: Service, relogin = false): { client: OdbRestClient; sent: Sent[] } {
  const sent: Sent[] = [];
  const client = createClient({
    baseUrl: 'http://odbrest.test/',
    appKey: APP_KEY,
    relogin,
    fetch: async (url, init) => {
      const response = await service.fetch(new Request(url, init), { clientAddress: '10.1.0.1' });
      const text = await response.clone().text();
      const headers = new Headers(init.headers);
      sent.push({ method: init.method ?? 'GET', path: new URL(url).pathname, headers, body: init.body as string | undefined, status: response.status, contentType: response.headers.get('content-type'), text });
      return response;
    },
  });
  return { client, sent };
}

/** `METHOD /path` of each exchange. */
export const requests = (sent: Sent[]): string[] => sent.map((exchange) => `${exchange.method} ${exchange.path}`);
