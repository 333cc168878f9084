// Secure login and the secure transport (PROTOCOL.md 3 and 4), against references measured in the same run:
// - a secure login through service.fetch vs. the RSA operations it needs done directly with WebCrypto
//   (decrypt the credentials, import the client key, encrypt the answer's blocks); target within 1.5x;
// - GET /v1/object/{id} through the encrypted transport vs. with a plain session, both through the
//   library client on service.fetch (so both include the client's work); target at least 0.7.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { clientPassValue, createService } from '../dist/index.js';
import { createClient } from '../dist/client.js';

const OAEP = { name: 'RSA-OAEP', hash: 'SHA-1' };
const subtle = globalThis.crypto.subtle;
const b64 = (bytes) => Buffer.from(bytes).toString('base64');
const pem = (label, der) => `-----BEGIN ${label}-----\n${b64(der).replace(/(.{64})/g, '$1\n')}\n-----END ${label}-----\n`;
const rsaPair = () => subtle.generateKey({ ...OAEP, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }, true, ['encrypt', 'decrypt']);

/** The login envelope from the block-encrypted answer (256-byte blocks for a 2048-bit client key). */
async function openLoginAnswer(text, privateKey) {
  const sealed = Buffer.from(text, 'base64');
  const parts = [];
  for (let i = 0; i < sealed.length; i += 256) parts.push(Buffer.from(await subtle.decrypt(OAEP, privateKey, sealed.subarray(i, i + 256))));
  return Buffer.concat(parts).toString('utf8');
}

/** Rates of `a` and `b` measured in alternating short slices, so drifting machine load hits both alike. */
async function interleaved(opsPerSecond, a, b, { concurrency = 1, rounds = 8, ms = 300 } = {}) {
  let sumA = 0;
  let sumB = 0;
  for (let i = 0; i < rounds; i++) {
    sumA += await opsPerSecond(a, { ms, concurrency, warmup: 50 });
    sumB += await opsPerSecond(b, { ms, concurrency, warmup: 50 });
  }
  return [sumA / rounds, sumB / rounds];
}

/** Medians of `a` and `b` from alternating calls. */
async function interleavedMedians(a, b, runs = 300) {
  const times = [[], []];
  for (let i = 0; i < runs; i++) {
    for (const [k, fn] of [a, b].entries()) {
      const start = performance.now();
      await fn();
      times[k].push(performance.now() - start);
    }
  }
  return times.map((list) => list.sort((x, y) => x - y)[Math.floor(list.length / 2)]);
}

export default async function bench({ opsPerSecond }) {
  const data = JSON.parse(readFileSync(new URL('../examples/demo-data.json', import.meta.url), 'utf8'));
  const serverPair = await rsaPair();
  const clientPair = await rsaPair();
  const service = createService({
    data,
    passwordIterations: 1, // the host's password-hash cost is not what is measured here
    serverKey: pem('PRIVATE KEY', await subtle.exportKey('pkcs8', serverPair.privateKey)),
    loginLimit: { perUser: 1e9, perAddress: 1e9 },
    onError: (error) => console.error(error),
  });
  await service.ready;
  const rows = [];

  // --- secure login -------------------------------------------------------------------------
  const clientSpki = await subtle.exportKey('spki', clientPair.publicKey);
  const credentialsPlain = new TextEncoder().encode(JSON.stringify({ user: 'alice', pass: clientPassValue('alice-secret'), appNames: ['crm'] }));
  const credentials = b64(await subtle.encrypt(OAEP, serverPair.publicKey, credentialsPlain));
  const loginBody = JSON.stringify({ credentials, publicKey: pem('PUBLIC KEY', clientSpki) });
  const secureLogin = async () => {
    const response = await service.fetch(
      new Request('http://bench/v2/login/secure', { method: 'POST', headers: { appkey: 'bench', 'content-type': 'application/json' }, body: loginBody }),
    );
    const text = await response.text();
    if (response.status !== 200) throw new Error(`secure login failed: ${text}`);
    return text;
  };
  const answerBlocks = Buffer.from(await secureLogin(), 'base64').length / 256;
  const chunk = new Uint8Array(214);
  const credentialBytes = Buffer.from(credentials, 'base64');
  // The same RSA operations with the same overlap as the service: decrypt and key import together, then the answer's blocks.
  const rawRsa = async () => {
    const [, key] = await Promise.all([
      subtle.decrypt(OAEP, serverPair.privateKey, credentialBytes),
      subtle.importKey('spki', clientSpki, OAEP, false, ['encrypt']),
    ]);
    await Promise.all(Array.from({ length: answerBlocks }, () => subtle.encrypt(OAEP, key, chunk)));
  };

  const [loginMedian, rawMedian] = await interleavedMedians(secureLogin, rawRsa);
  rows.push({ name: 'secure login, median of one', value: loginMedian, unit: 'ms', reference: rawMedian, ratio: loginMedian / rawMedian, target: '<= 1.5 (vs. its RSA operations in WebCrypto)' });
  const [loginRate, rawRate] = await interleaved(opsPerSecond, secureLogin, rawRsa);
  rows.push({ name: `secure logins per second (answer: ${answerBlocks} RSA blocks)`, value: loginRate, unit: 'ops/s', reference: rawRate, ratio: rawRate / loginRate, target: '<= 1.5' });

  // --- encrypted vs plain GET /v1/object/{id}, server side -------------------------------------
  // Requests are prepared before the clock starts (signed with fresh counters, or carrying the session
  // id), so only service.fetch and reading the answer are timed.
  const target = '/v1/object/USR00001';
  const answer = JSON.parse(await openLoginAnswer(await secureLogin(), clientPair.privateKey));
  const key = Buffer.from(answer.data.symmetricKey, 'base64');
  const mac = createHmac('sha256', key).update('odbrest secure transport mac').digest();
  let counter = 0;
  const signedHeaders = Array.from({ length: 120_000 }, () => {
    const n = ++counter;
    return {
      appkey: 'bench',
      'secure-token': answer.data.sessionId,
      'secure-counter': String(n),
      'secure-signature': createHmac('sha256', mac).update(`REQ ${n} GET ${target}\n`).digest('base64'),
    };
  });
  const sessionHeaders = { appkey: 'bench', sessionId: JSON.parse(await (await service.fetch(
    new Request('http://bench/v1/login', { method: 'POST', headers: { appkey: 'bench', 'content-type': 'application/json' }, body: JSON.stringify({ user: 'alice', pass: clientPassValue('alice-secret'), appNames: ['crm'] }) }),
  )).text()).data.sessionId };
  let next = 0;
  const getSecureServer = async () => {
    const headers = signedHeaders[next++];
    if (!headers) throw new Error('bench ran out of prepared secure requests');
    const response = await service.fetch(new Request(`http://bench${target}`, { headers }));
    await response.text();
    if (response.status !== 200) throw new Error(`encrypted GET failed: ${response.status}`);
  };
  const getPlainServer = async () => {
    const response = await service.fetch(new Request(`http://bench${target}`, { headers: sessionHeaders }));
    await response.text();
    if (response.status !== 200) throw new Error(`plain GET failed: ${response.status}`);
  };
  for (const concurrency of [1, 16]) {
    const [secureRate, plainRate] = await interleaved(opsPerSecond, getSecureServer, getPlainServer, { concurrency });
    rows.push({ name: `encrypted GET /v1/object/{id}, server, concurrency ${concurrency}`, value: secureRate, unit: 'req/s', reference: plainRate, ratio: secureRate / plainRate, target: '>= 0.7 (vs. a plain session)' });
  }

  // --- the same through the library client on both ends ------------------------------------------
  const viaService = (url, init) => service.fetch(new Request(url, init));
  const credentialsOf = { user: 'alice', password: 'alice-secret', appNames: ['crm'] };
  const plain = createClient({ baseUrl: 'http://bench', appKey: 'bench', fetch: viaService });
  await plain.login(credentialsOf);
  const secure = createClient({ baseUrl: 'http://bench', appKey: 'bench', fetch: viaService });
  await secure.loginSecure(credentialsOf, { keyPair: clientPair });
  const [secureRate, plainRate] = await interleaved(opsPerSecond, () => secure.getObject('USR00001'), () => plain.getObject('USR00001'));
  rows.push({ name: 'encrypted GET /v1/object/{id}, client and server (informative)', value: secureRate, unit: 'req/s', reference: plainRate, ratio: secureRate / plainRate });
  return rows;
}
