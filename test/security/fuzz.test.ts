/**
 * A seeded fuzz run (issue 12): 10,000 generated malformed requests across every route, the secure
 * and hybrid logins and the secure transport included, against the real Node example process, with
 * a valid session, token and secure session mixed in so that requests get past the credential checks.
 * Every answer must be an envelope (a redirect, a sealed login answer or a HEAD excepted), none a
 * 5xx, none slower than 2 s, and the process must still answer afterwards. It prints its counts.
 */
import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Service } from '../../src/index.js';
import { startServer, type RunningServer } from '../adapters/servers.js';
import { loginBody, USERS } from '../helpers.js';
import { nodeKeyPair, nodeSecureLogin } from '../secure/node-client.js';
import { remoteService } from '../support/processes.js';
import { prng, type Prng } from '../support/prng.js';

const REQUESTS = 10_000;
const CONCURRENCY = 16;
const SEED = 0x0db7e57;


const PATHS = [
  '/v1/login', '/v2/login', '/v2/login/key', '/v2/login/secure', '/v2/login/secure/key', '/v1/auth/df', '/v1/auth/google',
  '/v1/google/callback', '/v1/extLogin', '/v1/logout', '/v1/object/CUS00001', '/v1/object/Customer', '/v1/object/USR00002',
  '/v1/objects/Customer', '/v1/objects/User', '/v1/execute/greet', '/v1/execute/xApi_FindObjects', '/_CheckSession',
  '/_CheckService', '/v1/versioninfo', '/v1/multi', '/v1/2fa/secret', '/v1/2fa/validate', '/v1/license/release',
  '/v1/uploadFile', '/v1/uploadFile/abcdefghijklmnopqrstuv', '/v1/file/DOC00001', '/v1/file/CUS00001', '/v1/file/NOSUCH01',
  '/openapi.json', '/v1/nothing', '/v3/login', '/', '/v1/object/', '/v1/objects/%FF', '/v1/object/..%2F..%2Fetc',
  // this turn's routes (issue 23 item 8): v2, model, bulk writes and actions, recycle bin, locks, object
  // security, events, accounts, passkeys, health, host routes
  '/v2/objectdata/byQuery', '/v2/objectdata/byid', '/v2/objectdata/byParentObject', '/v2/model/structure', '/v1/model/structure',
  '/v2/versionInfo', '/v2/appConfig', '/v2/view/load', '/v2/file/DOC00001', '/v1/action/Customer', '/v1/recycleBin',
  '/v1/recycleBin/CUS00001/restore', '/v1/personal/emptyRecycleBin', '/v1/lock/object/CUS00001', '/v1/setObjectSecurity/CUS00001',
  '/v1/events', '/v1/events/ticket', '/v1/user/password', '/v1/user/password/reset', '/v1/user/password/reset/confirm',
  '/v1/sessions', '/v1/sessions/abc', '/v1/users', '/v1/user', '/v1/user/bob', '/v1/passkey/login/options', '/v1/passkey/login',
  '/v1/passkey/register/options', '/v1/passkeys', '/_CheckLive', '/_CheckReady', '/v1/userSystemSettings', '/v1/userSetting/theme',
  '/v1/personal/unreadDocuments',
  // what the studio reads (PROTOCOL.md 6.11)
  '/v1/classes', '/v1/object/CUS00001/referencedBy', '/v1/object/NOSUCH01/referencedBy', '/v1/object/%FF/referencedBy',
  // the studio (issue 34): its page, its redirect, files that are not there, paths that try to leave it
  '/_studio', '/_studio/', '/_studio/index.html', '/_studio/main-00000000.js', '/_studio/%2e%2e/v1/objects/Customer', '/_studio/..%2F..%2Fpackage.json',
  '/_studio/%FF', '/_studio/' + 'a'.repeat(3000),
] as const;
const QUERIES = [
  '', '?', '?app=hr', '?appkey=%FF', '?query=%7B%22Name%22%3A%7B%22%24gt%22%3A1%7D%7D', '?query=%5B1%2C2', '?query=' + '%5B'.repeat(200),
  '?page=-1', '?perPage=100000', '?reverseOrder=maybe', '?orderBy=-Name', '?qb64=!!!', '?qb64=cGFnZT0x', '?appNames=crm&appNames=%00',
  '?state=x&code=y', '?replaceOID=DOC00001', '?replaceOID=%00', '?' + 'a=1&'.repeat(500),
  '?query=%7B%22queryString%22%3A%22Name%20like%20%5C%22A*%5C%22%22%7D', '?query=%7B%22queryString%22%3A%22((((%22%7D', '?serialization=%7B%22type%22%3A%22oid%22%7D',
  '?serialization=%7B%22type%22%3A%22nope%22%7D', '?storeMode=10', '?storeMode=7', '?actions=%5B%7B%22type%22%3A%22nope%22%7D%5D', '?moveToRecycler=true',
  '?subscribe=%5B', '?ticket=forged', '?username=bob', '?classes=Customer,User',
] as const;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'] as const;
const TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/text', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream', 'garbage/x;;==', undefined] as const;

interface Credentials {
  sessionId: string;
  token: string;
  secureToken: string;
}

function body(r: Prng): string | Buffer | undefined {
  switch (r.int(12)) {
    case 0:
      return undefined;
    case 1:
      return JSON.stringify(loginBody('alice', r.pick(['alice-secret', 'wrong', '']), r.pick([['crm'], 'crm', [], [1], null] as never[])));
    case 2:
      return '['.repeat(r.int(200) + 1) + ']'.repeat(r.int(200));
    case 3:
      return '{"user":' + '"x'.repeat(r.int(50));
    case 4:
      return Buffer.from(Array.from({ length: r.int(4096) }, () => r.int(256)));
    case 5:
      return JSON.stringify({ user: 'a'.repeat(r.int(300_000)), pass: 1, appNames: {} });
    case 6:
      return JSON.stringify({ aesKey: 'A'.repeat(r.int(700)), data: 'B'.repeat(r.int(2000)), publicKey: r.pick(['', 'x', null, 5]) });
    case 7:
      return JSON.stringify({ credentials: Buffer.from(Array.from({ length: 256 * (r.int(4) + 1) }, () => r.int(256))).toString('base64'), publicKey: 'nope' });
    case 8:
      return JSON.stringify(Array.from({ length: r.int(120) }, () => ({ method: r.pick(METHODS), path: r.pick(PATHS) + r.pick(QUERIES), data: r.pick([undefined, {}, [], 'x', { token: '123456' }]) })));
    case 9:
      return '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"token":' + r.pick(['1', '"123456"', 'null', '[]']) + '}';
    case 10:
      return 'user=alice&pass=x&' + '%'.repeat(r.int(10));
    default:
      return JSON.stringify({ Name: 'x', [`$${r.int(9)}`]: 1, _secret: true, '~ObjectID': 'CUS00001', token: String(r.int(1e6)).padStart(6, '0') });
  }
}

function headers(r: Prng, credentials: Credentials): Record<string, string> {
  const out: Record<string, string> = {};
  const appKey = r.pick(['sec', 'sec', 'sec', '', ' ', 'x'.repeat(5000), undefined]);
  if (appKey !== undefined) out.appkey = appKey;
  switch (r.int(8)) {
    case 0:
      out.sessionId = credentials.sessionId;
      break;
    case 1:
      out.authorization = `Bearer ${r.pick([credentials.token, credentials.token.slice(0, -3) + 'abc', 'eyJhbGciOiJub25lIn0.e30.', 'x'])}`;
      break;
    case 2:
      out['secure-token'] = r.pick([credentials.secureToken, 'garbage', '']);
      out['secure-counter'] = r.pick(['1', '0', '-1', '99999999999999999999', 'x', String(r.int(100))]);
      out['secure-signature'] = r.pick(['', 'AAAA', '!!!', 'A'.repeat(44)]);
      break;
    case 3:
      out.sessionId = r.pick(['x'.repeat(300), credentials.secureToken, '%01 ; ,']);
      break;
    default:
      break;
  }
  if (r.int(4) === 0) out['x-forwarded-for'] = r.pick(['1.2.3.4', 'garbage', '::1, 5.6.7.8']);
  return out;
}

interface Outcome {
  status: number;
  contentType: string;
  text: string;
  ms: number;
}

function send(origin: string, agent: Agent, method: string, path: string, head: Record<string, string>, payload: string | Buffer | undefined, type: string | undefined): Promise<Outcome> {
  const { hostname, port } = new URL(origin);
  const started = performance.now();
  return new Promise((resolve) => {
    const headersOut: Record<string, string | number> = { ...head };
    if (type !== undefined) headersOut['content-type'] = type;
    if (payload !== undefined && method !== 'GET' && method !== 'HEAD') headersOut['content-length'] = Buffer.byteLength(payload);
    const req = httpRequest({ hostname, port, method, path, agent, headers: headersOut, timeout: Number(process.env.FUZZ_TIMEOUT ?? 2000) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, contentType: res.headers['content-type'] ?? '', text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
      res.on('error', () => resolve({ status: -1, contentType: '', text: 'response error', ms: performance.now() - started }));
    });
    req.on('timeout', () => {
      req.destroy();
      resolve({ status: -2, contentType: '', text: 'hang', ms: performance.now() - started });
    });
    req.on('error', (error) => resolve({ status: -1, contentType: '', text: `request error: ${error.message}`, ms: performance.now() - started }));
    if (payload !== undefined && method !== 'GET' && method !== 'HEAD') req.end(payload);
    else req.end();
  });
}

/** An answer the service may give besides an envelope. */
function exempt(method: string, path: string, outcome: Outcome): boolean {
  if (method === 'HEAD' || outcome.status === 302 || outcome.status === 304) return true;
  if (outcome.status === 200 && new URL(path, 'http://x').pathname === '/api/openapi.json') return isOpenApi(outcome.text); // the API description
  if (new URL(path, 'http://x').pathname.startsWith('/api/_studio')) return isStudioFile(outcome); // the studio's page and files
  return outcome.status === 200 && outcome.contentType.startsWith('text/plain'); // a sealed login answer
}

/** The studio's page (200), its redirect to the path with a slash (308): with its CSP, never anything else. */
function isStudioFile(outcome: Outcome): boolean {
  if (outcome.status === 308) return true;
  return outcome.status === 200 && outcome.contentType === 'text/html; charset=utf-8' && outcome.text.includes('<div id="studio">');
}

function isOpenApi(text: string): boolean {
  try {
    return JSON.parse(text).openapi === '3.1.0';
  } catch {
    return false;
  }
}

function isEnvelope(text: string): boolean {
  try {
    const parsed = JSON.parse(text);
    return typeof parsed?.status?.internalStatus === 'string' && typeof parsed.status.statusMessage === 'string' && 'data' in parsed;
  } catch {
    return false;
  }
}

let server: RunningServer;
let credentials: Credentials;

beforeAll(async () => {
  server = await startServer('node', { ODBREST_LOGIN_PER_USER: '1000000', ODBREST_LOGIN_PER_ADDRESS: '1000000' });
  const remote = remoteService(`${server.origin}/api`, (input, init) =>
    fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init.headers)), appkey: 'sec' } }),
  ) as unknown as Service;
  const post = async (path: string, json: unknown) =>
    (await remote.fetch(new Request(`http://x${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) }))).json();
  const plain = await post('/v1/login', loginBody('alice', USERS.alice));
  const token = await post('/v2/login', loginBody('alice', USERS.alice));
  const secure = await nodeSecureLogin(remote, nodeKeyPair());
  credentials = { sessionId: plain.data.sessionId, token: token.data.token, secureToken: secure.token };
}, 120_000);
afterAll(() => server?.stop());

test(`${REQUESTS} seeded malformed requests: envelopes only, no 5xx, no hang, no crash`, { timeout: 300_000 }, async () => {
  const r = prng(SEED);
  const plan = Array.from({ length: REQUESTS }, () => {
    const method = r.pick(METHODS);
    return { method, path: `/api${r.pick(PATHS)}${r.pick(QUERIES)}`, head: headers(r, credentials), payload: body(r), type: r.pick(TYPES) };
  });
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const statuses = new Map<number, number>();
  const problems: string[] = [];
  let next = 0;
  let slowest = 0;
  const worker = async () => {
    while (next < plan.length) {
      const { method, path, head, payload, type } = plan[next++]!;
      const outcome = await send(server.origin, agent, method, path, head, payload, type);
      statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
      slowest = Math.max(slowest, outcome.ms);
      const where = `${method} ${path.slice(0, 80)}`;
      if (outcome.status < 0) problems.push(`${where}: ${outcome.text}`);
      else if (outcome.status >= 500) problems.push(`${where}: HTTP ${outcome.status} ${outcome.text.slice(0, 200)}`);
      else if (!exempt(method, path, outcome) && !isEnvelope(outcome.text)) problems.push(`${where}: not an envelope (${outcome.status}) ${outcome.text.slice(0, 120)}`);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  agent.destroy();
  const alive = await send(server.origin, new Agent(), 'GET', '/api/_CheckService', {}, undefined, undefined);
  const counts = [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`).join(', ');
  console.log(`fuzz (seed ${SEED}): ${REQUESTS} requests in ${((performance.now() - started) / 1000).toFixed(1)} s; by HTTP status ${counts}; slowest ${slowest.toFixed(0)} ms; ${problems.length} problems`);
  expect(problems.slice(0, 20)).toEqual([]);
  expect(alive.status).toBe(200);
});
