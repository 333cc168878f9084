// Pieces the benches share: the demo data, a login, a logged-in GET, medians, alternating rates.
import { readFileSync } from 'node:fs';
import { clientPassValue } from '../dist/index.js';

export const APP_KEY = 'bench';

export const demoData = () => JSON.parse(readFileSync(new URL('../examples/demo-data.json', import.meta.url), 'utf8'));

export const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

export const ALICE_LOGIN = JSON.stringify({ user: 'alice', pass: clientPassValue('alice-secret'), appNames: ['crm'] });

/** Logs alice in through `POST /v1/login`; returns the session id. */
export async function loginAlice(service) {
  const response = await service.fetch(
    new Request('http://bench/v1/login', {
      method: 'POST',
      headers: { appkey: APP_KEY, 'content-type': 'application/json' },
      body: ALICE_LOGIN,
    }),
  );
  const body = await response.json();
  if (body.status.internalStatus !== '0') throw new Error(`bench login failed: ${JSON.stringify(body)}`);
  return body.data.sessionId;
}

/** An authenticated `GET path` through `service.fetch` (a plain session), checked and read. */
export async function loggedInGet(service, path = '/v1/object/CUS00001') {
  const headers = { appkey: APP_KEY, sessionId: await loginAlice(service) };
  return async () => {
    const response = await service.fetch(new Request(`http://bench${path}`, { headers }));
    if (response.status !== 200) throw new Error(`GET answered ${response.status}`);
    await response.text();
  };
}

/**
 * `a` against `b` in short alternating rounds of `rates` (so drifting machine load hits both alike).
 * Per kind (`wall`, `cpu`): the median rate of `a`, of `b`, and the median of the rounds' ratios a/b.
 */
export async function alternatingRates(rates, a, b, { rounds = 9, ms = 300, concurrency = 1, warmup = 100 } = {}) {
  const ofA = [];
  const ofB = [];
  for (let round = 0; round < rounds; round++) {
    ofA.push(await rates(a, { ms, concurrency, warmup }));
    ofB.push(await rates(b, { ms, concurrency, warmup }));
  }
  const summary = (kind) => ({
    a: median(ofA.map((r) => r[kind])),
    b: median(ofB.map((r) => r[kind])),
    ratio: median(ofA.map((r, i) => r[kind] / ofB[i][kind])),
  });
  return { wall: summary('wall'), cpu: summary('cpu') };
}

/** The median time in milliseconds of each of `fns`, from `runs` rounds that call each once, in turn. */
export async function alternatingMedians(fns, runs) {
  const times = fns.map(() => []);
  for (let i = 0; i < runs; i++) {
    for (const [k, fn] of fns.entries()) {
      const start = performance.now();
      await fn();
      times[k].push(performance.now() - start);
    }
  }
  return times.map(median);
}
