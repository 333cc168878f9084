/**
 * The Node adapter joins a request's URL from `Host` and the request-target without parsing it when
 * both are already in the URL parser's form. Whatever the pair, the service must see exactly the URL
 * that `new URL` makes of it, or the adapter's 400 where the parser refuses it or changes the path.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHandler } from '../../adapters/node.js';
import type { Service } from '../../src/index.js';

const seen: string[] = [];
const service = {
  draining: false,
  // an adapter's refusal reaches the service as `context.refused` (so it is logged and identified); answered 400 as the service does
  fetch: async (request: Request, context?: { refused?: Error }) => {
    if (context?.refused) return new Response('refused', { status: 400 });
    seen.push(request.url);
    return new Response('ok');
  },
} as unknown as Service;
const server = createServer(createNodeHandler(service));
let port = 0;

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
afterAll(() => server.close());

/** Sends one raw request; answers the status and the URL the service saw (if it was asked). */
async function send(host: string | undefined, target: string): Promise<{ status: number; url: string | undefined }> {
  const before = seen.length;
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  // HTTP/1.0 where no Host is sent (Node refuses an HTTP/1.1 request without one)
  socket.write(host === undefined ? `GET ${target} HTTP/1.0\r\n\r\n` : `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  let text = '';
  for await (const chunk of socket) text += chunk.toString('latin1');
  return { status: Number(text.slice(9, 12)), url: seen.length > before ? seen.at(-1) : undefined };
}

/** What the URL parser makes of the pair: the URL, or undefined where the adapter must refuse it. */
function parsed(host: string | undefined, target: string): string | undefined {
  try {
    const url = new URL(`http://${host ?? 'localhost'}${target}`);
    if (url.pathname !== target.split(/[?#]/, 1)[0]) return undefined;
    if (host !== undefined && !/^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(host)) return undefined;
    return url.href;
  } catch {
    return undefined;
  }
}

const HOSTS = [undefined, 'localhost', 'localhost:8080', 'example.com', 'a-b.example.com:65535', 'LOCALHOST', 'Example.com:8080', 'localhost:80', 'localhost:080', 'localhost:65536', '127.0.0.1', '127.0.0.1:3000', '127.1', '0x7f.0.0.1', '1.2.3.04', '255.255.255.255', '256.1.1.1', 'xn--nxasmq6b.com', 'xn--a.com', 'under_score.com', 'trailing.dot.', '[::1]:8080', 'a..b', '-lead.com', 'x.1', 'x.0x10'];
const TARGETS = ['/v1/object/CUS00001', '/', '/v1/objects/Customer?perPage=2&page=1', '/a/./b', '/a/../b', '/a/%2e/b', '/a/.%2E/b', '/a/.b/..c', '/a/b/..', '/a?x=/../y', "/a?q='x'", '/a?q="x"', '/a%zz', '/a%2Fb', '/a/~!$&()*+,;=:@', '/a?q=%27', '/%C3%A9t%C3%A9', '/a b', '/a\\b', '/a|b', '/a^b', '/a`b', '/a{b}'];

describe('the Node adapter, every Host and request-target', () => {
  it(`hands the service what new URL makes of them (${HOSTS.length} x ${TARGETS.length} pairs), or refuses with 400`, async () => {
    const wrong: string[] = [];
    for (const host of HOSTS) {
      for (const target of TARGETS) {
        const { status, url } = await send(host, target);
        if (status === 400 && url === undefined) {
          // the adapter refused; Node's own parser refuses some targets too (a space)
          if (parsed(host, target) !== undefined) wrong.push(`${host} ${target}: refused, URL parser reads ${parsed(host, target)}`);
        } else if (url !== parsed(host, target)) wrong.push(`${host} ${target}: saw ${url}, URL parser reads ${parsed(host, target)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
