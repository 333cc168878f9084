/**
 * JSON answers through the Node adapter are written as their text in one write (issue 30), and the
 * light Response the service gives such an adapter still behaves as a web Response to anything that
 * uses it as one (a host's wrapper, a framework).
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import { createNodeHandler, writeWebResponse } from '../../adapters/node.js';
import { lightAnswer, type Service } from '../../src/index.js';
import { APP_KEY, demoService, login } from '../helpers.js';
import { nodeKeyPair, nodeSecureLogin, openSecureResponse, secureRequest } from '../secure/node-client.js';

const APP = 'https://app.example.com';
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('a JSON answer over the Node adapter has its length and the same bytes as service.fetch answers; CORS headers reach the wire', async () => {
  const service = await demoService({ cors: { origins: [APP] } });
  const sessionId = await login(service);
  const base = await listen(createNodeHandler(service));
  const headers = { appkey: APP_KEY, sessionid: sessionId, origin: APP };
  for (const path of ['/v1/object/CUS00001', '/v1/object/NOPE0001', '/v1/nothing-here']) {
    const response = await fetch(base + path, { headers });
    const text = await response.text();
    const direct = await service.fetch(new Request(`http://localhost${path}`, { headers }));
    expect(text).toBe(await direct.text());
    expect(response.status).toBe(direct.status);
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(response.headers.get('transfer-encoding')).toBeNull();
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
    expect(response.headers.get('vary')).toBe('Origin');
  }
  // HEAD goes the same way (the route answers 405): the status without a body
  const head = await fetch(`${base}/v1/object/CUS00001`, { method: 'HEAD', headers });
  expect(head.status).toBe((await service.fetch(new Request('http://localhost/v1/object/CUS00001', { method: 'HEAD', headers }))).status);
  expect(await head.text()).toBe('');
});

/** The head of the first answer on a raw connection to `base` (one request, kept alive), as its lines. */
async function answerHead(base: string, request: string): Promise<string[]> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  let received = '';
  try {
    socket.write(request);
    for await (const chunk of socket) {
      received += (chunk as Buffer).toString('latin1');
      if (received.includes('\r\n\r\n')) break;
    }
  } finally {
    socket.destroy();
  }
  return received.slice(0, received.indexOf('\r\n\r\n')).split('\r\n');
}

test('a JSON answer is written with writeHead and one end: its headers and length first, then what Node adds', async () => {
  const service = await demoService();
  const sessionId = await login(service);
  const base = await listen(createNodeHandler(service));
  const head = await answerHead(base, `GET /v1/object/CUS00001 HTTP/1.1\r\nhost: localhost\r\nappkey: ${APP_KEY}\r\nsessionid: ${sessionId}\r\n\r\n`);
  expect(head[0]).toBe('HTTP/1.1 200 OK');
  // the service's headers as given, the length after them; Node's own (Date, keep-alive) follow
  expect(head.slice(1).map((line) => line.slice(0, line.indexOf(':')))).toEqual(['content-type', 'x-request-id', 'content-length', 'Date', 'Connection', 'Keep-Alive']);
});

test('an encrypted answer over the Node adapter is written as its sealed bytes, with its length (an independent node:crypto client opens it)', async () => {
  const service = await demoService();
  const secure = await nodeSecureLogin(service, nodeKeyPair());
  const base = await listen(createNodeHandler(service));
  for (const [n, path] of [[1, '/v1/object/CUS00001'], [2, '/v1/object/NOPE0001']] as const) {
    const message = secureRequest(secure, n, 'GET', path);
    const response = await fetch(base + path, { headers: message.headers });
    const text = await response.text();
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(response.headers.get('transfer-encoding')).toBeNull();
    const envelope = openSecureResponse(secure, n, response.status, response.headers, text);
    expect(envelope.status.internalStatus).toBe(n === 1 ? '0' : '404');
    if (n === 1) expect(envelope.data['~ObjectID']).toBe('CUS00001');
  }
});

/** The service's answer with `lightResponses`, as the Node adapter gets it. */
async function lightGet(service: Service, sessionId: string): Promise<Response> {
  return service.fetch(new Request('http://localhost/v1/object/CUS00001', { headers: { appkey: APP_KEY, sessionid: sessionId } }), { lightResponses: true });
}

test('a light response used as a web Response behaves as one: body, clone, headers; once used it is written as a web Response', async () => {
  const service = await demoService();
  const sessionId = await login(service);
  const plain = await (await service.fetch(new Request('http://localhost/v1/object/CUS00001', { headers: { appkey: APP_KEY, sessionid: sessionId } }))).text();

  const light = await lightGet(service, sessionId);
  expect(light).toBeInstanceOf(Response);
  expect(lightAnswer(light)?.text).toBe(plain);
  expect([light.status, light.ok, light.statusText, light.type, light.bodyUsed]).toEqual([200, true, '', 'default', false]);
  light.headers.set('x-host', 'wrapped');
  expect(await light.clone().json()).toEqual(JSON.parse(plain));
  expect(await new Response(light.body).text()).toBe(plain);
  expect(light.bodyUsed).toBe(true);
  expect(lightAnswer(light)).toBeUndefined();
  await expect(light.text()).rejects.toThrow();

  // a host that wraps the answer (headers added, body read into a new Response) gets what it wrote
  const wrapped = await lightGet(service, sessionId);
  wrapped.headers.set('x-host', 'wrapped');
  const base = await listen((_req, res) => void writeWebResponse(res, wrapped));
  const response = await fetch(base);
  expect(response.headers.get('x-host')).toBe('wrapped');
  expect(await response.text()).toBe(plain);
});
