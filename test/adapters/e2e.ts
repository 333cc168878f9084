/**
 * The end-to-end suite every server kind runs (one `<kind>.e2e.test.ts` file each): the example app
 * as a real process, answering as the in-process service does. Each case sends the same request to
 * the server and to a reference service built by the same `createDemoService`, and compares the whole
 * envelopes (session ids, tokens and store times are checked for form, then masked).
 *
 * Secure login (PROTOCOL.md 3-4) runs twice: with the library's client (`odbrest/client`, as built in
 * dist/) and with the independent node:crypto client of test/secure, so that a mistake shared by the
 * library's client and server cannot pass unseen. Encrypted answers differ per session, so for those
 * the decrypted envelopes are compared, after each client checked counter and signature.
 */
import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { createClient, type FetchFunction, type OdbRestClient } from 'odbrest/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createDemoService } from '../../examples/demo-service.mjs';
import type { Service } from '../../src/index.js';
import { expectError, loginBody, parseOrUndefined, type CallResult } from '../helpers.js';
import { nodeCtr, nodeKeyPair, nodeSecureLogin, secureCall, secureRequest, sendSecure, type NodeLogin } from '../secure/node-client.js';
import { remoteService } from '../support/processes.js';
import { testNodes } from '../support/nodes.js';
import { buildNextExample, NODE_KINDS, startServer, type RunningServer, type ServerKind } from './servers.js';

const APP_KEY = 'e2e';
const REFERENCE_ADDRESS = '127.0.0.1';
/** The origin the example servers of the main suite allow (ODBREST_CORS_ORIGINS). */
const BROWSER_ORIGIN = 'http://app.e2e.test';
const OK = { internalStatus: '0', statusMessage: 'ok' };

interface Sent {
  /** Local address to connect from (any 127.x.y.z works on Linux), instead of 127.0.0.1. */
  from?: string;
  json?: unknown;
  body?: string;
  headers?: Record<string, string>;
  noAppKey?: boolean;
}
interface Answer {
  status: number;
  contentType: string | null;
  retryAfter: string | null;
  text: string;
  body: any;
}
type Side = 'server' | 'reference';
/** The reference service (built from dist/ by the examples' own module). */
type Reference = Pick<Service, 'fetch' | 'ready'>;

/** One exchange of `odbrest/client` as it went over the wire: the request as sent, the answer's headers. */
interface Exchange {
  url: string;
  init: RequestInit;
  status: number;
  headers: Headers;
}

/** Sends each request to the server under test and to the reference service. */
class Pair {
  constructor(
    readonly origin: string,
    private readonly reference: Reference,
  ) {}

  /** Where `side` answers: the API is under `${originOf(side)}/api`. */
  originOf(side: Side): string {
    return side === 'server' ? this.origin : 'http://reference';
  }

  /** A fetch reaching `side`: the server over HTTP, the reference service in process. */
  fetchOf(side: Side): FetchFunction {
    if (side === 'server') return (url, init) => fetch(url, init);
    return (url, init) => this.reference.fetch(new Request(url, init), { clientAddress: REFERENCE_ADDRESS });
  }

  /** `side` as a service rooted at `/api`, for the helpers written against `service.fetch` (node-client). */
  api(side: Side): Service {
    return remoteService(`${this.originOf(side)}/api`, this.fetchOf(side)) as unknown as Service;
  }

  /** `odbrest/client` for `side`; `exchanges` records what went over the wire. */
  client(side: Side): { client: OdbRestClient; exchanges: Exchange[] } {
    const exchanges: Exchange[] = [];
    const fetchSide = this.fetchOf(side);
    const client = createClient({
      baseUrl: `${this.originOf(side)}/api`,
      appKey: APP_KEY,
      fetch: async (url, init) => {
        const response = await fetchSide(url, init);
        exchanges.push({ url, init, status: response.status, headers: response.headers });
        return response;
      },
    });
    return { client, exchanges };
  }

  async send(side: Side, method: string, path: string, sent: Sent = {}): Promise<Answer> {
    const headers = new Headers(sent.headers);
    if (!sent.noAppKey) headers.set('appkey', APP_KEY);
    let body = sent.body;
    if (sent.json !== undefined) {
      body = JSON.stringify(sent.json);
      headers.set('content-type', 'application/json');
    }
    const init = { method, headers, body };
    const url = `${this.originOf(side)}${path}`;
    const response = side === 'server' && sent.from ? await requestFrom(sent.from, url, init) : await this.fetchOf(side)(url, init);
    const text = await response.text();
    return {
      status: response.status,
      contentType: response.headers.get('content-type'),
      retryAfter: response.headers.get('retry-after'),
      text,
      body: parseOrUndefined(text),
    };
  }

  /** Sends to both sides (each with its own credential) and expects the same answer; returns both. */
  async both(method: string, path: string, sent: (side: Side) => Sent = () => ({})): Promise<Record<Side, Answer>> {
    const server = await this.send('server', method, path, sent('server'));
    const reference = await this.send('reference', method, path, sent('reference'));
    expect(normalize(server.body), `${method} ${path}: ${server.text.slice(0, 300)}`).toEqual(normalize(reference.body));
    expect({ status: server.status, contentType: server.contentType }).toEqual({ status: reference.status, contentType: reference.contentType });
    return { server, reference };
  }

  /** Plain (`/v1/login`) or token (`/v2/login`) login on both sides; returns each side's credential header. */
  async login(kind: 'session' | 'token', user = 'alice', password = 'alice-secret'): Promise<(side: Side) => Record<string, string>> {
    const path = kind === 'session' ? '/api/v1/login' : '/api/v2/login';
    const answers = await this.both('POST', path, () => ({ json: loginBody(user, password) }));
    expect(answers.server.body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
    return (side): Record<string, string> =>
      kind === 'session' ? { sessionId: answers[side].body.data.sessionId } : { authorization: `Bearer ${answers[side].body.data.token}` };
  }

  /** Secure login with the node:crypto client on both sides; expects the same decrypted answer. */
  async secureLogin(user: 'alice' | 'bob' = 'alice'): Promise<Record<Side, NodeLogin>> {
    const keys = nodeKeyPair();
    const logins = { server: await nodeSecureLogin(this.api('server'), keys, { user }), reference: await nodeSecureLogin(this.api('reference'), keys, { user }) };
    expect(normalize(logins.server.envelope)).toEqual(normalize(logins.reference.envelope));
    return logins;
  }

  /**
   * Message `n` through the secure transport on both sides (node:crypto client; `target` is relative to
   * the service root, as signed). Each answer must be encrypted, numbered `n` and correctly signed
   * (`openSecureResponse` throws otherwise); the decrypted envelopes and statuses must be the same.
   */
  async secureBoth(logins: Record<Side, NodeLogin>, n: number, method: string, target: string, json?: unknown) {
    const server = await secureCall(this.api('server'), logins.server, n, method, target, json);
    const reference = await secureCall(this.api('reference'), logins.reference, n, method, target, json);
    expect(normalize(server.envelope), `${method} ${target}`).toEqual(normalize(reference.envelope));
    expect(server.status).toBe(reference.status);
    return server;
  }

  /** Sends a message that must be refused to each side; expects the same refusal, in the clear, from both. */
  async refusedBoth(send: (side: Side) => Promise<CallResult>, code: string, httpStatus: number): Promise<CallResult> {
    const server = await send('server');
    const reference = await send('reference');
    expectError(server, code, httpStatus);
    expect(server.body).toEqual(reference.body);
    // Refusals of the message itself are answered in the clear (PROTOCOL.md 4).
    expect([server.headers.get('encrypted'), server.headers.get('content-type')]).toEqual([null, reference.headers.get('content-type')]);
    return server;
  }

  /** Sends a recorded `odbrest/client` request again, byte for byte. */
  async resend(side: Side, exchange: Exchange): Promise<CallResult> {
    const response = await this.fetchOf(side)(exchange.url, exchange.init);
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: parseOrUndefined(text) };
  }
}

/** `fetch` has no way to choose the local address; node:http does. */
function requestFrom(localAddress: string, url: string, init: { method: string; headers: Headers; body?: string }): Promise<Response> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: init.method, headers: Object.fromEntries(init.headers), localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers }));
      });
    });
    request.on('error', reject);
    request.end(init.body);
  });
}

/** Masks the values that differ between two services after checking their form. */
function normalize(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => normalize(item));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, normalize(item, name)]));
  }
  const forms: Record<string, RegExp> = {
    sessionId: /^[A-Za-z0-9_-]{22,}$/,
    token: /^[\w-]+\.[\w-]+\.[\w-]+$/,
    '~StoreTime': /^\d{8}T\d{6}[+-]\d{2}:\d{2}$/,
    expiresAt: /^\d{4}-\d{2}-\d{2}T/,
    symmetricKey: /^[A-Za-z0-9+/]{43}=$/,
  };
  const form = forms[key];
  if (!form) return value;
  expect(value, key).toMatch(form);
  return `<${key}>`;
}

interface E2eCase {
  name: string;
  /** Only for these kinds (the middleware kinds have app routes under /api). */
  only?: readonly ServerKind[];
  run(pair: Pair, kind: ServerKind): Promise<void>;
}
const MIDDLEWARE: readonly ServerKind[] = ['express', 'koa'];

const E2E_CASES: E2eCase[] = [
  {
    name: 'plain login, then an object with the session',
    async run(pair) {
      const credential = await pair.login('session');
      const { server } = await pair.both('GET', '/api/v1/object/USR00001', (side) => ({ headers: credential(side) }));
      expect(server.body.data).toMatchObject({ '~ClassName': 'User', Name: 'alice' });
    },
  },
  {
    name: 'token login, then an object with the token',
    async run(pair) {
      const credential = await pair.login('token');
      const { server } = await pair.both('GET', '/api/v1/object/EMP00001', (side) => ({ headers: credential(side) }));
      expect(server.body.data).toMatchObject({ '~ClassName': 'Employee', Name1: 'Alice' });
    },
  },
  {
    name: 'an object with its references',
    async run(pair) {
      const credential = await pair.login('session', 'bob', 'bob-secret');
      const { server } = await pair.both('GET', '/api/v1/object/CUS00001', (side) => ({ headers: credential(side) }));
      expect(server.body.data['~ObjectID']).toBe('CUS00001');
      expect(server.body.data.AccountManager['~ObjectID']).toBe('EMP00001');
    },
  },
  {
    name: 'a listing with query and paging',
    async run(pair) {
      const credential = await pair.login('session');
      const query = encodeURIComponent(JSON.stringify({ City: 'Berlin' }));
      const { server } = await pair.both('GET', `/api/v1/objects/Customer?page=1&perPage=3&query=${query}`, (side) => ({ headers: credential(side) }));
      expect(server.body.data['~Count']).toBe(3);
      expect(server.body.data['~Elements'].map((customer: { City: string }) => customer.City)).toEqual(['Berlin', 'Berlin', 'Berlin']);
    },
  },
  {
    name: 'a macro, with and without parameters',
    async run(pair) {
      const credential = await pair.login('session');
      const named = await pair.both('POST', '/api/v1/execute/greet', (side) => ({ headers: credential(side), json: { name: 'Ada' } }));
      expect(named.server.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { greeting: 'Hello, Ada!', user: 'alice' } });
      const plain = await pair.both('POST', '/api/v1/execute/greet', (side) => ({ headers: credential(side) }));
      expect(plain.server.body.data).toEqual({ greeting: 'Hello, alice!', user: 'alice' });
    },
  },
  {
    name: 'logout ends the session',
    async run(pair) {
      const credential = await pair.login('session');
      const out = await pair.both('POST', '/api/v1/logout', (side) => ({ headers: credential(side) }));
      expect(out.server.body.status.internalStatus).toBe('0');
      const after = await pair.both('GET', '/api/v1/object/USR00001', (side) => ({ headers: credential(side) }));
      expect([after.server.status, after.server.body.status.internalStatus]).toEqual([401, '201']);
    },
  },
  {
    name: 'secure login with encrypted requests (odbrest/client)',
    async run(pair) {
      const sides = { server: pair.client('server'), reference: pair.client('reference') };
      /** What the wire showed of the last exchange: the encryption headers, compared between the sides. */
      const wire = (side: Side) => {
        const { status, headers } = sides[side].exchanges.at(-1)!;
        return { status, contentType: headers.get('content-type'), encrypted: headers.get('encrypted'), counter: headers.get('secure-counter') };
      };
      /** The same call on both sides: same data (decrypted and signature-checked by the client), same wire headers. */
      const both = async <T>(what: string, act: (client: OdbRestClient) => Promise<T>): Promise<T> => {
        const server = await act(sides.server.client);
        const reference = await act(sides.reference.client);
        expect(normalize(server), what).toEqual(normalize(reference));
        expect(wire('server'), what).toEqual(wire('reference'));
        return server;
      };
      const secureWire = (n: number) => ({ status: 200, contentType: 'application/text', encrypted: 'true', counter: String(n) });

      const login = await both('loginSecure', (client) => client.loginSecure({ user: 'alice', password: 'alice-secret', appNames: ['crm'] }));
      expect([login.user.Name, login.databaseName]).toEqual(['alice', 'demo']);
      expect(wire('server')).toEqual({ status: 200, contentType: 'text/plain; charset=utf-8', encrypted: null, counter: null });

      const user = await both('getObject', (client) => client.getObject('USR00001'));
      expect(user).toMatchObject({ '~ClassName': 'User', Name: 'alice' });
      expect(wire('server')).toEqual(secureWire(1));
      const byId = sides.server.exchanges.at(-1)!;

      // The signed target carries the query as sent: JSON in a query string survives the adapter unchanged.
      const page = await both('listObjects', (client) => client.listObjects('Customer', { page: 1, perPage: 3, query: { City: 'Berlin' } }));
      expect([page['~Count'], page['~Elements'].map((customer) => customer.City)]).toEqual([3, ['Berlin', 'Berlin', 'Berlin']]);
      expect(wire('server')).toEqual(secureWire(2));

      // An encrypted request body (application/text) must reach the service as sent, past the app's body parser.
      const greeting = await both('execute', (client) => client.execute('greet', { name: 'Ada Grüße' }));
      expect(greeting).toEqual({ greeting: 'Hello, Ada Grüße!', user: 'alice' });
      expect(wire('server')).toEqual(secureWire(3));
      const macro = sides.server.exchanges.at(-1)!;
      expect(macro.init.body).not.toContain('Ada');

      // Replays of accepted messages, with and without a body: 205, in the clear.
      for (const index of [sides.server.exchanges.indexOf(macro), sides.server.exchanges.indexOf(byId)]) {
        await pair.refusedBoth((side) => pair.resend(side, sides[side].exchanges[index]!), '205', 401);
      }

      await both('logout', (client) => client.logout());
      expect(wire('server')).toEqual(secureWire(4));
      // The logged-out token is unknown from now on, whatever its message.
      await pair.refusedBoth((side) => pair.resend(side, sides[side].exchanges.at(-1)!), '201', 401);
    },
  },
  {
    name: 'secure login with encrypted requests (independent node:crypto client)',
    async run(pair) {
      const logins = await pair.secureLogin('bob');
      const customer = await pair.secureBoth(logins, 1, 'GET', '/v1/object/CUS00001?serialization=%7B%22type%22%3A%22full%22%7D');
      expect([customer.status, customer.envelope.status.internalStatus, customer.envelope.data['~ObjectID']]).toEqual([200, '0', 'CUS00001']);
      const listing = await pair.secureBoth(logins, 2, 'GET', `/v1/objects/Customer?perPage=2&query=${encodeURIComponent('{"City":"Hamburg"}')}`);
      expect(listing.envelope.data['~Elements'].map((item: { City: string }) => item.City)).toEqual(['Hamburg', 'Hamburg']);
      // Out of order within the window: 4 before 3.
      const named = await pair.secureBoth(logins, 4, 'POST', '/v1/execute/greet', { name: 'Ada' });
      expect(named.envelope).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { greeting: 'Hello, Ada!', user: 'bob' } });
      const plain = await pair.secureBoth(logins, 3, 'POST', '/v1/execute/greet');
      expect(plain.envelope.data).toEqual({ greeting: 'Hello, bob!', user: 'bob' });
      // An error is answered encrypted too: the message itself was accepted.
      const missing = await pair.secureBoth(logins, 5, 'GET', '/v1/object/NOPE0000');
      expect([missing.status, missing.envelope.status.internalStatus]).toEqual([404, '404']);

      const replayed = (side: Side) => sendSecure(pair.api(side), 'POST', '/v1/execute/greet', secureRequest(logins[side], 4, 'POST', '/v1/execute/greet', { name: 'Ada' }));
      await pair.refusedBoth(replayed, '205', 401);
      // Signed for /api/v1/... (the base path is not part of the target): refused, not served.
      const withBase = (side: Side) => sendSecure(pair.api(side), 'GET', '/v1/object/CUS00001', secureRequest(logins[side], 6, 'GET', '/api/v1/object/CUS00001'));
      await pair.refusedBoth(withBase, '205', 401);

      const out = await pair.secureBoth(logins, 7, 'POST', '/v1/logout');
      expect(out.envelope).toEqual({ status: { internalStatus: '0', statusMessage: 'logged out' }, data: {} });
      const after = (side: Side) => sendSecure(pair.api(side), 'GET', '/v1/object/CUS00001', secureRequest(logins[side], 8, 'GET', '/v1/object/CUS00001'));
      await pair.refusedBoth(after, '201', 401);
    },
  },
  {
    name: '/v1/multi: items in order with integer statuses, a failing item between two that succeed, refused items',
    async run(pair) {
      const credential = await pair.login('session');
      const items = [
        { method: 'GET', path: '/v1/object/USR00001' },
        { method: 'GET', path: '/v1/object/NOPE0000?' },
        { method: 'POST', path: '/v1/execute/greet', data: { name: 'Ada' } },
        { method: 'POST', path: '/v1/logout' },
        { method: 'POST', path: '/v1/multi', data: [] },
        { method: 'GET' },
        { method: 'GET', path: '/_CheckSession' },
      ];
      const { server } = await pair.both('POST', '/api/v1/multi', (side) => ({ headers: credential(side), json: items }));
      expect(server.body.status).toEqual(OK);
      expect(server.body.data.map((item: any) => [item.httpStatus, item.result.status.internalStatus])).toEqual([
        [200, '0'],
        [404, '404'],
        [200, '0'],
        [400, '400'],
        [400, '400'],
        [400, '400'],
        [200, '0'],
      ]);
      expect(server.body.data[2].result).toEqual({ status: OK, data: { greeting: 'Hello, Ada!', user: 'alice' } });
      const tooMany = await pair.both('POST', '/api/v1/multi', (side) => ({ headers: credential(side), json: Array(101).fill(items[0]) }));
      expect([tooMany.server.status, tooMany.server.body.status.internalStatus]).toEqual([400, '400']);
    },
  },
  {
    name: '/v1/multi through the secure transport: one encrypted message',
    async run(pair) {
      const logins = await pair.secureLogin('bob');
      const items = [
        { method: 'GET', path: '/v1/object/CUS00001' },
        { method: 'GET', path: '/v1/object/NOPE0000' },
        { method: 'POST', path: '/v1/execute/greet' },
      ];
      const batch = await pair.secureBoth(logins, 1, 'POST', '/v1/multi', items);
      expect(batch.envelope.data.map((item: any) => item.httpStatus)).toEqual([200, 404, 200]);
      expect(batch.envelope.data[2].result.data).toEqual({ greeting: 'Hello, bob!', user: 'bob' });
      // the items used no message numbers: number 2 is the next one accepted
      const check = await pair.secureBoth(logins, 2, 'GET', '/_CheckSession');
      expect(check.envelope).toEqual({ status: OK, data: {} });
    },
  },
  {
    name: '_CheckService without any header, _CheckSession and /v1/versioninfo with a session',
    async run(pair) {
      const service = await pair.both('GET', '/api/_CheckService', () => ({ noAppKey: true }));
      expect([service.server.status, service.server.body.data.applicationName]).toEqual([200, 'odbrest']);
      const credential = await pair.login('token');
      const session = await pair.both('GET', '/api/_CheckSession', (side) => ({ headers: credential(side) }));
      expect(session.server.body).toEqual({ status: OK, data: {} });
      const version = await pair.send('server', 'GET', '/api/v1/versioninfo', { headers: credential('server') });
      expect(version.body.data.webserviceVersion).toBe(service.server.body.data.webservice.version);
    },
  },
  {
    name: 'requests as the real clients send them: a bare ?, qb64, a GET with an empty JSON body, a DELETE with a JSON body, header names in any case',
    async run(pair) {
      const credential = await pair.login('session');
      const headers = (side: Side) => ({ SESSIONID: credential(side).sessionId!, APPKEY: APP_KEY });
      const plain = await pair.both('GET', '/api/v1/objects/Customer?perPage=2', (side) => ({ headers: headers(side) }));
      const bare = await pair.both('GET', '/api/v1/object/USR00001?', (side) => ({ headers: headers(side) }));
      expect(bare.server.body.data.Name).toBe('alice');
      const encoded = await pair.both('GET', `/api/v1/objects/Customer?qb64=${Buffer.from('perPage=2').toString('base64url')}`, (side) => ({ headers: headers(side) }));
      expect(encoded.server.body).toEqual(plain.server.body);
      // fetch cannot send a GET with a body; node:http can
      const emptyBody = await pair.send('server', 'GET', '/api/v1/object/USR00001', {
        from: '127.0.0.1',
        body: '',
        headers: { ...headers('server'), 'content-type': 'application/json', 'content-length': '0' },
      });
      expect([emptyBody.status, emptyBody.body.data.Name]).toEqual([200, 'alice']);
      // an id no object has, so that the answers can be compared and the demo data stays as it is
      const withBody = await pair.both('DELETE', '/api/v1/object/NOSUCH01', (side) => ({ headers: headers(side), json: { moveToRecycler: true } }));
      const without = await pair.both('DELETE', '/api/v1/object/NOSUCH01', (side) => ({ headers: headers(side) }));
      expect([withBody.server.status, withBody.server.body]).toEqual([without.server.status, without.server.body]);
      expect(withBody.server.body.status.internalStatus).toBe('404'); // not 400 or 415: the body is ignored
    },
  },
  {
    name: 'CORS: a preflight is answered without appkey, answers to the listed origin expose the headers, other origins get none',
    async run(pair) {
      const preflight = (origin: string) =>
        fetch(`${pair.origin}/api/v1/login`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'appkey, content-type' } });
      const allowed = await preflight(BROWSER_ORIGIN);
      expect([allowed.status, allowed.headers.get('access-control-allow-origin'), allowed.headers.get('access-control-allow-headers')]).toEqual([
        204,
        BROWSER_ORIGIN,
        'appkey, sessionId, Authorization, Content-Type, Secure-Token, Secure-Counter, Secure-Signature',
      ]);
      expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
      const refused = await preflight('http://other.e2e.test');
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      const answer = await fetch(`${pair.origin}/api/_CheckService`, { headers: { origin: BROWSER_ORIGIN } });
      expect([answer.status, answer.headers.get('access-control-allow-origin'), answer.headers.get('access-control-expose-headers')]).toEqual([
        200,
        BROWSER_ORIGIN,
        'Encrypted, Secure-Counter, Secure-Signature, Retry-After, Login-Signature',
      ]);
      expect(answer.headers.get('vary')).toMatch(/Origin/);
    },
  },
  {
    name: 'a bad request: a login member of the wrong type',
    async run(pair) {
      const { server } = await pair.both('POST', '/api/v1/login', () => ({ json: { user: 5, pass: 'x', appNames: ['crm'] } }));
      expect([server.status, server.body.status.internalStatus]).toEqual([400, '400']);
      expect(server.body.status.statusMessage).toMatch(/user/);
    },
  },
  {
    name: 'a request without app key',
    async run(pair) {
      const { server } = await pair.both('GET', '/api/v1/object/USR00001', () => ({ noAppKey: true }));
      expect([server.status, server.body.status.internalStatus]).toEqual([401, '100']);
    },
  },
  {
    name: "the app's own route still answers",
    async run(pair, kind) {
      const answer = await pair.send('server', 'GET', '/hello', { noAppKey: true });
      expect([answer.status, answer.body]).toEqual([200, { app: kind, message: 'hello from the app' }]);
    },
  },
  {
    name: 'an unknown path under /api is answered by the service',
    only: ['node', 'bun', 'deno', 'next'],
    async run(pair) {
      const { server } = await pair.both('GET', '/api/v1/nothing');
      expect([server.status, server.body.status.internalStatus]).toEqual([404, '404']);
    },
  },
  {
    name: 'a path under /api the service has no route for is left to the app',
    only: MIDDLEWARE,
    async run(pair, kind) {
      const answer = await pair.send('server', 'GET', '/api/status', { noAppKey: true });
      expect([answer.status, answer.body]).toEqual([200, { app: kind, status: 'up' }]);
    },
  },
  {
    name: 'files: the three upload steps (Dart multipart, raw, 0 bytes, a UTF-8 name), downloads with ranges and If-None-Match, 413 at the limit',
    async run(pair) {
      const credential = await pair.login('session');
      const file = async (side: Side, method: string, path: string, body?: BodyInit, headers: Record<string, string> = {}) => {
        const init = { method, headers: { appkey: APP_KEY, ...credential(side), ...headers }, body, duplex: 'half' } as RequestInit;
        const response = await pair.fetchOf(side)(`${pair.originOf(side)}/api${path}`, init);
        return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
      };
      const upload = async (side: Side, body: BodyInit, headers: Record<string, string>, query = '') => {
        const started = await pair.send(side, 'GET', '/api/v1/uploadFile', { headers: credential(side) });
        const id = started.body.data.uploadId;
        const sent = await file(side, 'POST', `/v1/uploadFile/${id}${query}`, body, headers);
        return { id, sent, finished: await pair.send(side, 'PATCH', `/api/v1/uploadFile/${id}`, { headers: credential(side) }) };
      };
      const boundary = 'dart-boundary-e2e';
      const dart = Buffer.from(`--${boundary}\r\ncontent-type: text/plain\r\ncontent-disposition: form-data; name=""; filename="Grüße €.txt"\r\n\r\nhello e2e\r\n--${boundary}--\r\n`);
      for (const side of ['server', 'reference'] as const) {
        const multipart = await upload(side, new Uint8Array(dart), { 'content-type': `multipart/form-data; boundary=${boundary}` });
        expect(multipart.finished.body.data).toMatchObject({ '~ClassName': 'Document', Name: 'Grüße €.txt', Size: 9, ContentType: 'text/plain' });
        const id = multipart.finished.body.data['~ObjectID'];
        const whole = await file(side, 'GET', `/v1/file/${id}`);
        expect([whole.status, whole.bytes.toString(), whole.headers.get('content-disposition')]).toEqual([200, 'hello e2e', `attachment; filename="Gr??e ?.txt"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%E2%82%AC.txt`]);
        const ranges = await Promise.all(['bytes=0-0', 'bytes=8-8', 'bytes=-3'].map((range) => file(side, 'GET', `/v1/file/${id}`, undefined, { range })));
        expect(ranges.map((r) => [r.status, r.bytes.toString(), r.headers.get('content-range')])).toEqual([[206, 'h', 'bytes 0-0/9'], [206, 'e', 'bytes 8-8/9'], [206, 'e2e', 'bytes 6-8/9']]);
        const past = await file(side, 'GET', `/v1/file/${id}`, undefined, { range: 'bytes=9-' });
        expect([past.status, past.headers.get('content-range')]).toEqual([416, 'bytes */9']);
        const cached = await file(side, 'GET', `/v1/file/${id}`, undefined, { 'if-none-match': whole.headers.get('etag')! });
        expect([cached.status, cached.bytes.length]).toEqual([304, 0]);
        const empty = await upload(side, new Uint8Array(0), { 'content-type': 'application/pdf' }, '?name=empty.pdf');
        expect(empty.finished.body.data).toMatchObject({ Name: 'empty.pdf', Size: 0, ContentType: 'application/pdf' });
        const demo = await file(side, 'GET', '/v1/file/DOC00001');
        expect([demo.status, demo.headers.get('content-type'), demo.bytes.toString().startsWith('Welcome')]).toEqual([200, 'text/plain; charset=utf-8', true]);
        // ODBREST_MAX_UPLOAD_BYTES is 4096 in this suite: one byte more is 413, nothing kept
        const tooLarge = await upload(side, new Uint8Array(4097), { 'content-type': 'application/octet-stream' });
        expect([tooLarge.sent.status, JSON.parse(tooLarge.sent.bytes.toString()).status.internalStatus]).toEqual([413, '413']);
        expect(tooLarge.finished.body.status.internalStatus).toBe('400');
      }
    },
  },
  {
    name: 'files through the secure transport (independent node:crypto client): raw ciphertext signed over its bytes',
    async run(pair) {
      const logins = await pair.secureLogin();
      for (const side of ['server', 'reference'] as const) {
        const login = logins[side];
        const target = '/v1/file/DOC00001';
        const message = secureRequest(login, 1, 'GET', target);
        const response = await pair.fetchOf(side)(`${pair.originOf(side)}/api${target}`, { method: 'GET', headers: message.headers });
        const ciphertext = Buffer.from(await response.arrayBuffer());
        expect([response.status, response.headers.get('encrypted'), response.headers.get('content-type'), response.headers.get('secure-counter')]).toEqual([200, 'true', 'application/octet-stream', '1']);
        expect(response.headers.get('secure-signature')).toBe(createHmac('sha256', login.mac).update('RES 1 200\n').update(ciphertext).digest('base64'));
        expect(nodeCtr(login.key, 1, 1, ciphertext).toString()).toMatch(/^Welcome to the odbrest demo/);
      }
    },
  },
  {
    name: 'change events stream through the server as they happen (GET /v1/events, not buffered)',
    async run(pair) {
      const login = await pair.send('server', 'POST', '/api/v1/login', { json: loginBody('alice', 'alice-secret') });
      const sessionId = login.body.data.sessionId as string;
      const subscribe = encodeURIComponent(JSON.stringify([{ className: 'Customer', query: { City: 'Streamed' } }]));
      const abort = new AbortController();
      const response = await fetch(`${pair.origin}/api/v1/events?subscribe=${subscribe}`, { headers: { appkey: APP_KEY, sessionId }, signal: abort.signal });
      expect([response.status, response.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
      const reader = response.body!.pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>).getReader();
      let text = '';
      // the opening comment arrives while the stream is open: nothing on the way holds it back
      while (!text.includes('\n\n')) text += (await reader.read()).value ?? '';
      expect(text).toBe(': odbrest events\n\n');
      const created = await pair.send('server', 'POST', '/api/v1/object/Customer', { headers: { sessionId }, json: { Name: 'Live', City: 'Streamed' } });
      const id = created.body.data['~ObjectID'];
      while (!text.includes('event: create')  || !text.slice(text.indexOf('event: create')).includes('\n\n')) text += (await reader.read()).value ?? '';
      const data = JSON.parse(/event: create\ndata: (.*)\n\n/.exec(text)![1]!);
      expect(data).toMatchObject({ className: 'Customer', '~ObjectID': id, object: { '~ObjectID': id, Name: 'Live', City: 'Streamed' } });
      abort.abort();
      await reader.cancel().catch(() => undefined);
    },
  },
  {
    name: "the app's body parser still serves the app's routes",
    only: MIDDLEWARE,
    async run(pair, kind) {
      const answer = await pair.send('server', 'POST', '/notes', { json: { note: 'kept' } });
      expect([answer.status, answer.body]).toEqual([200, { app: kind, received: { note: 'kept' } }]);
    },
  },
];

/** `count` failed logins with distinct user names, each with its own `X-Forwarded-For` unless `forwardedFor` is given. */
async function failLogins(pair: Pair, count: number, prefix: string, forwardedFor?: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const answer = await pair.send('server', 'POST', '/api/v1/login', {
      json: loginBody(`${prefix}-${i}`, 'wrong'),
      headers: { 'x-forwarded-for': forwardedFor ?? `10.${i}.0.1` },
    });
    expect([answer.status, answer.body?.status?.internalStatus]).toEqual([401, '302']);
  }
}

async function aliceLogin(pair: Pair, headers: Record<string, string> = {}): Promise<Answer> {
  return pair.send('server', 'POST', '/api/v1/login', { json: loginBody('alice', 'alice-secret'), headers });
}

function expectLimited(answer: Answer): void {
  expect([answer.status, answer.body?.status?.internalStatus, answer.body?.data]).toEqual([429, '303', {}]);
  expect(Number(answer.retryAfter)).toBeGreaterThan(0);
}

/**
 * Defines the whole suite for one server kind; the Node kinds run it once under each Node
 * (test/support/nodes.ts), each run with a fresh reference service and servers of its own.
 */
export function describeServerKind(kind: ServerKind): void {
  if (kind === 'next') {
    // built once (by the Node on the PATH) for the runs under each Node
    beforeAll(async () => {
      const { ms, bundler } = await buildNextExample();
      console.log(`next build of examples/next (${bundler}): ${(ms / 1000).toFixed(1)} s`);
    });
  }
  if (!NODE_KINDS.includes(kind)) describe(kind, () => describeServers(kind));
  else for (const node of testNodes()) describe(`${kind} under ${node.name}`, () => describeServers(kind, node.path));
}

/** The servers of one run (the Node kinds' under `node`), compared with a reference service of their own. */
function describeServers(kind: ServerKind, node?: string): void {
  const servers: RunningServer[] = [];
  let reference: Reference;

  beforeAll(async () => {
    reference = createDemoService({ ODBREST_PASSWORD_ITERATIONS: '1000', ODBREST_CORS_ORIGINS: BROWSER_ORIGIN, ODBREST_MAX_UPLOAD_BYTES: '4096' });
    await reference.ready;
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
  });
  const start = async (env: Record<string, string> = {}) => {
    const server = await startServer(kind, env, node);
    servers.push(server);
    return new Pair(server.origin, reference);
  };

  describe('the example app as a real process', () => {
    let pair: Pair;
    beforeAll(async () => {
      pair = await start({ ODBREST_CORS_ORIGINS: BROWSER_ORIGIN, ODBREST_MAX_UPLOAD_BYTES: '4096' });
    });
    for (const item of E2E_CASES.filter((candidate) => !candidate.only || candidate.only.includes(kind))) {
      test(item.name, () => item.run(pair, kind));
    }
    // Last: it uses up this server's failed-login budget for 127.0.0.1.
    test('the failed-login limit counts the connection address and ignores X-Forwarded-For', async () => {
      await failLogins(pair, 20, 'nobody');
      expectLimited(await aliceLogin(pair, { 'x-forwarded-for': '10.99.0.1' }));
      // Another connection address still has its budget: the address is the connection's, per request.
      const other = await pair.send('server', 'POST', '/api/v1/login', { json: loginBody('alice', 'alice-secret'), from: '127.0.0.2' });
      expect([other.status, other.body.status.internalStatus]).toEqual([200, '0']);
    });
  });

  describe('with trustProxy and the limits from ODBREST_LOGIN_PER_ADDRESS/PER_USER', () => {
    let pair: Pair;
    beforeAll(async () => {
      pair = await start({ ODBREST_TRUST_PROXY: 'true', ODBREST_LOGIN_PER_ADDRESS: '5', ODBREST_LOGIN_PER_USER: '2' });
    });
    test('each X-Forwarded-For address has its own failed-login budget', async () => {
      await failLogins(pair, 5, 'spread');
      const answer = await aliceLogin(pair, { 'x-forwarded-for': '10.200.0.1' });
      expect([answer.status, answer.body.status.internalStatus]).toEqual([200, '0']);
    });
    test('the X-Forwarded-For address is the one limited', async () => {
      await failLogins(pair, 5, 'same', '10.201.0.1'); // the configured 5, not the default 20
      expectLimited(await aliceLogin(pair, { 'x-forwarded-for': '10.201.0.1' }));
      const other = await aliceLogin(pair, { 'x-forwarded-for': '10.201.0.2' });
      expect([other.status, other.body.status.internalStatus]).toEqual([200, '0']);
    });
    test('the configured per-user limit (2) blocks a user from any address', async () => {
      for (const address of ['10.202.0.1', '10.202.0.2']) {
        const failed = await pair.send('server', 'POST', '/api/v1/login', { json: loginBody('bob', 'wrong'), headers: { 'x-forwarded-for': address } });
        expect([failed.status, failed.body?.status?.internalStatus]).toEqual([401, '302']);
      }
      const blocked = await pair.send('server', 'POST', '/api/v1/login', { json: loginBody('bob', 'bob-secret'), headers: { 'x-forwarded-for': '10.202.0.3' } });
      expectLimited(blocked);
    });
  });
}
