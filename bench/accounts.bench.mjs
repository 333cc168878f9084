// Accounts (PROTOCOL.md 2.8): what a password change and a reset confirmation cost beside a login, in
// slow hashes (PBKDF2 runs, counted at crypto.subtle.deriveBits) and in time; and whether a reset
// request tells a known user from an unknown one by its time, measured over HTTP as an attacker's
// probe would: many requests each, interleaved, their distributions compared.
import { clientPassValue, createService } from '../dist/index.js';
import { serve } from '../dist/node.js';
import { alternatingMedians, APP_KEY, demoData, median } from './common.mjs';

const subtle = globalThis.crypto.subtle;
let slowHashes = 0;
const deriveBits = subtle.deriveBits.bind(subtle);
subtle.deriveBits = (algorithm, ...rest) => {
  if (algorithm?.name === 'PBKDF2') slowHashes++;
  return deriveBits(algorithm, ...rest);
};

const post = async (service, path, body, headers = {}, clientAddress = '127.0.0.1') => {
  const response = await service.fetch(
    new Request(`http://bench${path}`, { method: 'POST', headers: { appkey: APP_KEY, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }),
    { clientAddress },
  );
  const envelope = await response.json();
  if (envelope.status.internalStatus !== '0') throw new Error(`${path}: ${JSON.stringify(envelope.status)}`);
  return envelope.data;
};

/** Slow hashes and milliseconds of one call of `fn`, medians of `runs`. */
async function cost(fn, runs) {
  const hashes = [];
  const [ms] = await alternatingMedians(
    [
      async () => {
        const before = slowHashes;
        await fn();
        hashes.push(slowHashes - before);
      },
    ],
    runs,
  );
  return { ms, hashes: Math.max(...hashes) };
}

export default async function () {
  const rows = [];
  // --- hashes per operation, at the default 210,000 PBKDF2 iterations --------------------------------
  const tokens = [];
  const users = Array.from({ length: 40 }, (_, i) => ({ '~ClassName': 'User', Name: `u${i}`, _password: 'start password', _licences: ['crm'] }));
  const service = createService({ data: { objects: [...demoData().objects, ...users] }, users: { sendPasswordReset: ({ token }) => void tokens.push(token) } });
  await service.ready;
  const runs = 12;
  const login = await cost(() => post(service, '/v1/login', { user: 'alice', pass: clientPassValue('alice-secret'), appNames: ['crm'] }), runs);
  const sessionId = (await post(service, '/v1/login', { user: 'bob', pass: clientPassValue('bob-secret'), appNames: ['crm'] })).sessionId;
  let password = 'bob-secret';
  const change = await cost(async () => {
    const next = password === 'bob-secret' ? 'bob second secret' : 'bob-secret';
    await post(service, '/v1/user/password', { pass: password, newPass: clientPassValue(next) }, { sessionId });
    password = next;
  }, runs);
  let n = 0;
  const confirm = await cost(async () => {
    await post(service, '/v1/user/password/reset', { user: `u${n++}` }, {}, `10.0.${n}.1`);
    await new Promise((resolve) => setTimeout(resolve, 1)); // the token is delivered after the answer
    await post(service, '/v1/user/password/reset/confirm', { token: tokens.shift(), newPass: 'a brand new password' });
  }, runs);
  rows.push({ name: 'login (POST /v1/login)', value: login.ms, unit: 'ms' });
  rows.push({ name: 'password change: slow hashes (current checked beside the new one hashed)', value: change.hashes, unit: 'PBKDF2 runs', reference: login.hashes, target: 'login + 1' });
  rows.push({ name: 'password change: time', value: change.ms, unit: 'ms', reference: login.ms, ratio: change.ms / login.ms, target: 'about one slow hash' });
  rows.push({ name: 'reset request + confirm: slow hashes', value: confirm.hashes, unit: 'PBKDF2 runs', reference: login.hashes, target: '<= 1' });
  rows.push({ name: 'reset request + confirm: time', value: confirm.ms, unit: 'ms', reference: login.ms, ratio: confirm.ms / login.ms });
  await service.close();

  // --- a reset request's time for known and unknown users, over HTTP ----------------------------------
  const known = Array.from({ length: 150 }, (_, i) => ({ '~ClassName': 'User', Name: `known${i}`, _password: 'whatever password', _licences: [] }));
  // the host's delivery takes 30 ms (a mail server): it runs after the answer
  const probed = createService({ data: { objects: known }, users: { passwordIterations: 1000, sendPasswordReset: () => new Promise((resolve) => setTimeout(resolve, 30)) }, trustProxy: true });
  await probed.ready;
  const server = await serve(probed, { port: 0, hostname: '127.0.0.1' });
  const base = `http://127.0.0.1:${server.address().port}`;
  const timeOne = async (user, i) => {
    const start = performance.now();
    const response = await fetch(`${base}/v1/user/password/reset`, {
      method: 'POST',
      headers: { appkey: APP_KEY, 'content-type': 'application/json', 'x-forwarded-for': `10.9.${i >> 8}.${i & 255}` },
      body: JSON.stringify({ user }),
    });
    await response.text();
    if (response.status !== 200) throw new Error(`reset answered ${response.status}`);
    return performance.now() - start;
  };
  const ofKnown = [];
  const ofUnknown = [];
  for (let i = 0; i < 300; i++) {
    // interleaved, so that drifting load hits both alike; each known user twice (its limit is 3)
    ofKnown.push(await timeOne(`known${i % 150}`, 2 * i));
    ofUnknown.push(await timeOne(`unknown${i}`, 2 * i + 1));
  }
  await new Promise((resolve) => server.close(resolve));
  const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.floor(q * (values.length - 1))];
  // Kolmogorov-Smirnov: the largest gap between the two distributions (0 = the same; 0.11 is the 5% critical value at 300+300)
  const all = [...ofKnown, ...ofUnknown].sort((a, b) => a - b);
  const cdf = (values, x) => values.filter((v) => v <= x).length / values.length;
  const ks = Math.max(...all.map((x) => Math.abs(cdf(ofKnown, x) - cdf(ofUnknown, x))));
  for (const [name, values] of [
    ['known', ofKnown],
    ['unknown', ofUnknown],
  ]) {
    rows.push({ name: `reset request, ${name} user: median (p10-p90 ${quantile(values, 0.1).toFixed(3)}-${quantile(values, 0.9).toFixed(3)} ms)`, value: median(values), unit: 'ms' });
  }
  rows.push({ name: 'reset request, known against unknown: median ratio', value: median(ofKnown) / median(ofUnknown), unit: 'x', target: '1' });
  rows.push({ name: 'reset request, known against unknown: Kolmogorov-Smirnov D (300 each)', value: ks, unit: '', target: '< 0.11 (no difference at 5%)' });
  return rows;
}
