// Targets now (issue 42): GET in process >= 0.8 of a bare fetch handler, over HTTP >= 0.6 of bare node:http
// (16 connections), under Bun and Deno >= 0.5 of their bare servers. Earlier issues' targets, for the record:
// The core's targets: an authenticated GET /v1/object/{id} through service.fetch at >= 0.5 of a bare
// fetch handler answering the same JSON, and < 1 KB of memory per live session (issue 2); the same GET
// over HTTP through the Node adapter at >= 0.5 of bare node:http, the adapter alone at >= 0.8 (issue 30);
// in process at >= 0.7 of the bare handler, and under Bun and Deno at >= 0.4 of their bare servers (issue 36).
// Runs on the built package (`npm run bench -- core`); node is started with --expose-gc.
import { clientPassValue, createService } from '../dist/index.js';
import { once } from 'node:events';
import { alternatingRates, APP_KEY, demoData, loginAlice, median } from './common.mjs';
import { existsSync } from 'node:fs';
import { CONNECTIONS, hasWrk, load, startCommand, startDemo, startServer } from './http-load.mjs';

const SESSIONS = 100_000;
const ROUNDS = 9;
const ROUND_MS = 300;

async function demoService(options = {}) {
  // The password hash cost is not what is measured here; a cheap hash keeps set-up short.
  const service = createService({ data: demoData(), users: { passwordIterations: 1 }, ...options });
  await service.ready;
  return service;
}


/** (a) Requests per second of GET /v1/object/CUS00001 against a bare handler with the same answer. */
async function objectThroughput(rates) {
  const service = await demoService();
  const sessionId = await loginAlice(service);
  const url = 'http://bench/v1/object/CUS00001';
  const headers = { appkey: APP_KEY, sessionid: sessionId };
  const first = await service.fetch(new Request(url, { headers }));
  const json = await first.text();
  const parsed = JSON.parse(json);
  if (parsed.status.internalStatus !== '0' || parsed.data.AccountManager?.['~ObjectID'] !== 'EMP00001') {
    throw new Error(`unexpected answer: ${json}`);
  }
  const responseHeaders = { 'content-type': first.headers.get('content-type') };
  const bare = async () => new Response(json, { headers: responseHeaders });

  const rows = [];
  const reused = new Request(url, { headers }); // a GET without body can be answered many times
  for (const concurrency of [1, 16]) {
    for (const [variant, makeRequest] of [
      ['new Request per call', () => new Request(url, { headers })],
      ['one reused Request', () => reused],
    ]) {
      const through = (handler) => async () => (await handler(makeRequest())).text();
      const measured = await alternatingRates(rates, through((request) => service.fetch(request)), through(bare), { rounds: ROUNDS, ms: ROUND_MS, concurrency });
      for (const [kind, unit] of [['wall', 'req/s'], ['cpu', 'req per CPU-s']]) {
        const { a, b, ratio } = measured[kind];
        rows.push({ name: `GET /v1/object/{id}, concurrency ${concurrency}, ${variant}`, value: a, unit, reference: b, ratio, target: '>= 0.8' });
      }
    }
  }
  return rows;
}

const HTTP_SECONDS = 3;
const HTTP_ROUNDS = 5; // after one warm-up round of each

/**
 * (c) GET /v1/object/{id} over HTTP (issue 30): `npm start`'s server (memory store) and the Node
 * adapter alone around a bare handler, each against the floor: bare node:http answering the same JSON
 * string from a Map, same response bytes. Each server runs in its own process, loaded in turn by wrk
 * (16 keep-alive connections, one thread); on this 2-core machine wrk and the server share the cores,
 * as they do for every server measured. Also the server's CPU time per request, steadier than the
 * rate when other work shares the machine.
 */
async function objectOverHttp() {
  const name = `GET /v1/object/{id} over HTTP, wrk -c${CONNECTIONS}`;
  if (!hasWrk()) return [{ name, value: 'skipped: wrk is not installed (Debian: apt-get install wrk)', unit: '' }];
  const started = [];
  try {
    const demo = await startDemo();
    started.push(demo.server);
    const sessionId = await loginAlice({ fetch: (request) => fetch(request) }, demo.base);
    const ids = ['CUS00001', 'CUS00002', 'EMP00001'];
    const answers = {};
    let type;
    for (const id of ids) {
      const response = await fetch(`${demo.base}/v1/object/${id}`, { headers: { appkey: APP_KEY, sessionid: sessionId } });
      answers[id] = await response.text();
      type = response.headers.get('content-type');
      if (JSON.parse(answers[id]).status.internalStatus !== '0') throw new Error(`unexpected answer: ${answers[id]}`);
    }
    const env = { ODBREST_BENCH_ANSWERS: JSON.stringify(answers), ODBREST_BENCH_TYPE: type };
    const script = new URL('./get-servers.mjs', import.meta.url).pathname;
    const servers = { odbrest: demo };
    for (const kind of ['floor', 'adapter', 'web', 'srvx', 'hono']) {
      servers[kind] = await startServer(script, env, [kind]);
      started.push(servers[kind].server);
    }
    // the same demo without its request log (npm start writes a line per request), to show what the log costs
    servers.unlogged = await startServer(new URL('../examples/node/server.mjs', import.meta.url).pathname, { ODBREST_REQUEST_LOG: 'false' });
    started.push(servers.unlogged.server);
    const headers = (session) => ['-H', `appkey: ${APP_KEY}`, '-H', `sessionId: ${session}`];
    const args = { unlogged: headers(await loginAlice({ fetch: (request) => fetch(request) }, servers.unlogged.base)) };
    const round = (kind) => load(servers[kind].server.pid, `${servers[kind].base}/v1/object/CUS00001`, args[kind] ?? headers(sessionId), HTTP_SECONDS);
    const kinds = Object.keys(servers);
    const measured = Object.fromEntries(kinds.map((kind) => [kind, []]));
    for (const kind of kinds) round(kind);
    for (let i = 0; i < HTTP_ROUNDS; i++) for (const kind of kinds) measured[kind].push(round(kind));
    const floor = measured.floor;
    const rows = [];
    for (const [kind, label, target] of [
      ['odbrest', "odbrest (npm start's server, memory store, its request log on)", '>= 0.6'],
      ['adapter', "odbrest's Node adapter around a bare Map handler", '>= 0.8'],
      ['web', "odbrest's Node adapter around a bare Map handler answering a web Response", undefined],
      ['srvx', 'srvx (toNodeHandler) around that web handler', undefined],
      ['hono', '@hono/node-server (getRequestListener) around that web handler', undefined],
      ['unlogged', "odbrest (npm start's server with its request log off)", undefined],
    ]) {
      const runs = measured[kind];
      rows.push({ name: `${name}, ${label}, vs. bare node:http`, value: median(runs.map((r) => r.rate)), unit: 'req/s', reference: median(floor.map((r) => r.rate)), ratio: median(runs.map((r, i) => r.rate / floor[i].rate)), target });
      if (runs[0].cpuPerRequest !== undefined) {
        rows.push({ name: `${name}, ${label}, server CPU per request (ratio: floor / this)`, value: median(runs.map((r) => r.cpuPerRequest)), unit: 'µs', reference: median(floor.map((r) => r.cpuPerRequest)), ratio: median(runs.map((r, i) => floor[i].cpuPerRequest / r.cpuPerRequest)) });
      }
    }
    return rows;
  } finally {
    for (const server of started) {
      server.kill();
      await once(server, 'exit');
    }
  }
}

const RUNTIMES = {
  bun: { floor: 'Bun.serve', args: (script) => [script] },
  deno: { floor: 'Deno.serve', args: (script) => ['run', '--allow-net', '--allow-read', '--allow-env', script] },
};

/**
 * (d) The same GET under Bun and Deno (issue 36): each runtime's example server (the demo service under
 * `/api`, the runtime's own server, no conversion) against the runtime's bare server answering the same
 * bytes from a Map (bench/get-servers-web.mjs), loaded in turn by wrk, with the server's CPU time per
 * request. The runtimes are the package's dev dependencies (node_modules/.bin).
 */
async function objectOverRuntimes() {
  const rows = [];
  for (const [runtime, { floor, args }] of Object.entries(RUNTIMES)) {
    const name = `GET /v1/object/{id} over HTTP under ${runtime}, wrk -c${CONNECTIONS}, the ${runtime} example vs. bare ${floor}`;
    const command = new URL(`../node_modules/.bin/${runtime}`, import.meta.url).pathname;
    if (!hasWrk() || !existsSync(command)) {
      rows.push({ name, value: `skipped: ${hasWrk() ? `${runtime} is not installed (npm ci installs it)` : 'wrk is not installed'}`, unit: '' });
      continue;
    }
    const started = [];
    try {
      const example = await startCommand(command, args(new URL(`../examples/${runtime}/server.mjs`, import.meta.url).pathname), { PORT: '0', HOST: '127.0.0.1' });
      started.push(example.server);
      const base = `${example.base}/api`;
      const sessionId = await loginAlice({ fetch: (request) => fetch(request) }, base);
      const response = await fetch(`${base}/v1/object/CUS00001`, { headers: { appkey: APP_KEY, sessionid: sessionId } });
      const text = await response.text();
      if (JSON.parse(text).status.internalStatus !== '0') throw new Error(`unexpected answer: ${text}`);
      const env = { PORT: '0', ODBREST_BENCH_ANSWERS: JSON.stringify({ CUS00001: text }), ODBREST_BENCH_TYPE: response.headers.get('content-type') };
      const bare = await startCommand(command, args(new URL('./get-servers-web.mjs', import.meta.url).pathname), env);
      started.push(bare.server);
      const headers = ['-H', `appkey: ${APP_KEY}`, '-H', `sessionId: ${sessionId}`];
      const round = (server) => load(server.server.pid, `${server.base}${server === example ? '/api' : ''}/v1/object/CUS00001`, headers, HTTP_SECONDS);
      round(example);
      round(bare);
      const ofExample = [];
      const ofBare = [];
      for (let i = 0; i < HTTP_ROUNDS; i++) {
        ofExample.push(round(example));
        ofBare.push(round(bare));
      }
      rows.push({ name, value: median(ofExample.map((r) => r.rate)), unit: 'req/s', reference: median(ofBare.map((r) => r.rate)), ratio: median(ofExample.map((r, i) => r.rate / ofBare[i].rate)), target: '>= 0.5' });
      if (ofExample[0].cpuPerRequest !== undefined) {
        rows.push({ name: `${name}, server CPU per request (ratio: floor / this)`, value: median(ofExample.map((r) => r.cpuPerRequest)), unit: 'µs', reference: median(ofBare.map((r) => r.cpuPerRequest)), ratio: median(ofExample.map((r, i) => ofBare[i].cpuPerRequest / r.cpuPerRequest)) });
      }
    } finally {
      for (const server of started) {
        server.kill();
        await once(server, 'exit');
      }
    }
  }
  return rows;
}

function settle() {
  for (let i = 0; i < 4; i++) globalThis.gc?.();
  return new Promise((resolve) => setTimeout(resolve, 50)).then(() => {
    globalThis.gc?.();
    return process.memoryUsage();
  });
}

/**
 * The sessions of the memory bench belong to `USERS` users, `SESSIONS / USERS` each: a user may hold
 * at most `session.maxPerUser` (default 1000) live sessions, and each user's list of them is part of
 * what a session costs.
 */
const USERS = 100;
const benchUser = (i) => `bench${String(i).padStart(3, '0')}`;
const benchUsers = () =>
  Array.from({ length: USERS }, (_, i) => ({ '~ClassName': 'User', Name: benchUser(i), _password: 'bench-secret', _licences: ['crm'] }));
const benchLogin = (i) => JSON.stringify({ user: benchUser(i % USERS), pass: clientPassValue('bench-secret'), appNames: ['crm'] });

async function login(service, body) {
  const response = await service.fetch(
    new Request('http://bench/v1/login', { method: 'POST', headers: { appkey: APP_KEY, 'content-type': 'application/json' }, body }),
  );
  const answer = await response.json();
  if (answer.status.internalStatus !== '0') throw new Error(`bench login failed: ${JSON.stringify(answer)}`);
  return answer.data.sessionId;
}

async function loginMany(service, count) {
  const ids = [];
  for (let done = 0; done < count; done += 256) {
    const made = await Promise.all(Array.from({ length: Math.min(256, count - done) }, (_, i) => login(service, benchLogin(done + i))));
    for (const id of made) ids.push(id);
  }
  return ids;
}

/**
 * (b) Memory per live session: 100,000 logins through the public POST /v1/login, measured after
 * forced GC. RSS keeps pages the allocator got for the garbage of earlier requests, so the baseline is
 * taken after the same churn on a service that is then dropped: what remains is the sessions.
 */
async function sessionMemory() {
  if (!globalThis.gc) throw new Error('run with --expose-gc (npm run bench does)');
  const options = { loginLimit: { perUser: 1e9, perAddress: 1e9 }, data: { objects: [...demoData().objects, ...benchUsers()] } };
  let churn = await demoService(options);
  await loginMany(churn, SESSIONS);
  churn = undefined;
  const service = await demoService(options);
  await login(service, benchLogin(0)); // warm every code path once before the baseline
  const before = await settle();
  const started = performance.now();
  const ids = await loginMany(service, SESSIONS);
  const loginRate = (SESSIONS * 1000) / (performance.now() - started);
  // every session must still be live, or the measurement would be of a shrinking store
  const last = await service.fetch(new Request('http://bench/v1/objects/Customer?perPage=1', { headers: { appkey: APP_KEY, sessionid: ids[0] } }));
  if ((await last.json()).status.internalStatus !== '0') throw new Error('the first session is gone');
  const live = service.kv.size; // the sessions, one list per user, and the counters
  if (live < SESSIONS + USERS) throw new Error(`only ${live} entries live`);
  ids.length = 0; // the bench's own copies of the ids are not the service's memory
  const after = await settle();
  return [
    { name: 'logins through POST /v1/login (PBKDF2 at 1 iteration)', value: loginRate, unit: 'logins/s' },
    { name: `heapUsed per live session (${SESSIONS} sessions of ${USERS} users)`, value: (after.heapUsed - before.heapUsed) / SESSIONS, unit: 'bytes', target: '< 1024' },
    { name: `RSS per live session (${SESSIONS} sessions of ${USERS} users, baseline after equal churn)`, value: (after.rss - before.rss) / SESSIONS, unit: 'bytes', target: '< 1024' },
  ];
}

// CORE_BENCH=throughput, CORE_BENCH=http, CORE_BENCH=runtimes or CORE_BENCH=sessions runs one part (handy while profiling).
export default async function ({ rates }) {
  const only = process.env.CORE_BENCH;
  return [
    ...(!only || only === 'throughput' ? await objectThroughput(rates) : []),
    ...(!only || only === 'http' ? await objectOverHttp() : []),
    ...(!only || only === 'runtimes' ? await objectOverRuntimes() : []),
    ...(!only || only === 'sessions' ? await sessionMemory() : []),
  ];
}
