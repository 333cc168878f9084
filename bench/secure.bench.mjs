// Secure login and the secure transport (PROTOCOL.md 3 and 4), against references measured in the same run:
// - a secure login through service.fetch vs. the RSA operations it needs done directly with WebCrypto
//   (decrypt the credentials, import the client key, encrypt the answer's blocks); target within 1.5x;
// - GET /v1/object/{id} through the encrypted transport vs. with a plain session on the same service,
//   server side only, with the default AES-CTR and HMAC (`defaultCrypto`: node:crypto's, found
//   through process.getBuiltinModule on Node, Bun and Deno); target at least 0.6 (issue 30). Then,
//   for information, with `portableCrypto` (pure JS, what runtimes without node:crypto get), and the
//   same through the library client.
import { ALICE_LOGIN, alternatingMedians, alternatingRates, APP_KEY, b64, demoData, loggedInGet, loginAlice, OAEP, pem, rsaPair, secureSession, signedGetHeaders } from './common.mjs';
import { createService, portableCrypto } from '../dist/index.js';
import { createClient } from '../dist/client.js';
import { nodeCrypto } from '../dist/node.js';

const subtle = globalThis.crypto.subtle;

export default async function bench({ rates }) {
  const data = demoData();
  const serverPair = await rsaPair();
  const clientPair = await rsaPair();
  const serverKey = pem('PRIVATE KEY', await subtle.exportKey('pkcs8', serverPair.privateKey));
  const serviceWith = async (symmetricCrypto) => {
    const made = createService({
      data,
      users: { passwordIterations: 1 }, // the host's password-hash cost is not what is measured here
      secure: { serverKey, symmetricCrypto },
      loginLimit: { perUser: 1e9, perAddress: 1e9 },
      onError: (error) => console.error(error),
    });
    await made.ready;
    return made;
  };
  const service = await serviceWith(undefined);
  const rows = [];

  // --- secure login -------------------------------------------------------------------------
  const clientSpki = await subtle.exportKey('spki', clientPair.publicKey);
  const credentialsPlain = new TextEncoder().encode(ALICE_LOGIN);
  const credentials = b64(await subtle.encrypt(OAEP, serverPair.publicKey, credentialsPlain));
  const loginBody = JSON.stringify({ credentials, publicKey: pem('PUBLIC KEY', clientSpki) });
  const secureLoginOn = (on) => async () => {
    const response = await on.fetch(
      new Request('http://bench/v2/login/secure', { method: 'POST', headers: { appkey: APP_KEY, 'content-type': 'application/json' }, body: loginBody }),
    );
    const text = await response.text();
    if (response.status !== 200) throw new Error(`secure login failed: ${text}`);
    return text;
  };
  const secureLogin = secureLoginOn(service);
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

  const [loginMedian, rawMedian, plainMedian] = await alternatingMedians([secureLogin, rawRsa, () => loginAlice(service)], 300);
  rows.push({ name: 'secure login, median of one', value: loginMedian, unit: 'ms', reference: rawMedian, ratio: loginMedian / rawMedian, target: '<= 1.5 (vs. its RSA operations in WebCrypto)' });
  // What the secure login costs beyond a plain login's work plus its RSA operations.
  rows.push({ name: 'secure login vs. a plain POST /v1/login plus the RSA operations', value: loginMedian, unit: 'ms', reference: plainMedian + rawMedian, ratio: loginMedian / (plainMedian + rawMedian), target: '<= 1.2 (issue 16)' });
  const logins = (await alternatingRates(rates, rawRsa, secureLogin)).wall;
  rows.push({ name: `secure logins per second (answer: ${answerBlocks} RSA blocks; ratio: RSA rate / login rate)`, value: logins.b, unit: 'ops/s', reference: logins.a, ratio: logins.ratio, target: '<= 1.5' });

  // --- encrypted vs plain GET /v1/object/{id}, server side -------------------------------------
  // Requests are prepared before the clock starts (signed with fresh counters, or carrying the session
  // id), so only service.fetch and reading the answer are timed.
  const target = '/v1/object/USR00001';
  const encryptedVsPlain = async (label, on, concurrencies, goal) => {
    const session = await secureSession((url, init) => on.fetch(new Request(url, init)), 'http://bench', clientPair);
    const signedHeaders = Array.from({ length: 150_000 }, (_, i) => signedGetHeaders(session, i + 1, target));
    let next = 0;
    const getSecure = async () => {
      const headers = signedHeaders[next++];
      if (!headers) throw new Error('bench ran out of prepared secure requests');
      const response = await on.fetch(new Request(`http://bench${target}`, { headers }));
      await response.text();
      if (response.status !== 200) throw new Error(`encrypted GET failed: ${response.status}`);
    };
    const getPlain = await loggedInGet(on, target);
    for (const concurrency of concurrencies) {
      const { a, b, ratio } = (await alternatingRates(rates, getSecure, getPlain, { concurrency })).wall;
      rows.push({ name: `encrypted GET /v1/object/{id}, ${label}, concurrency ${concurrency}`, value: a, unit: 'req/s', reference: b, ratio, target: goal });
    }
  };
  await encryptedVsPlain('defaultCrypto (native here)', service, [1, 16], '>= 0.6 (vs. a plain session; issue 30)');
  await encryptedVsPlain('portableCrypto (runtimes without node:crypto; informative)', await serviceWith(portableCrypto), [16]);
  const native = await serviceWith(nodeCrypto);

  // --- the same through the library client on both ends ------------------------------------------
  const viaService = (url, init) => native.fetch(new Request(url, init));
  const credentialsOf = { user: 'alice', password: 'alice-secret', appNames: ['crm'] };
  const plain = createClient({ baseUrl: 'http://bench', appKey: APP_KEY, fetch: viaService });
  await plain.login(credentialsOf);
  const secure = createClient({ baseUrl: 'http://bench', appKey: APP_KEY, fetch: viaService, symmetricCrypto: nodeCrypto });
  await secure.loginSecure(credentialsOf, { keyPair: clientPair });
  const viaClients = (await alternatingRates(rates, () => secure.getObject('USR00001'), () => plain.getObject('USR00001'))).wall;
  rows.push({ name: 'encrypted GET /v1/object/{id}, client and server, both nodeCrypto (informative)', value: viaClients.a, unit: 'req/s', reference: viaClients.b, ratio: viaClients.ratio });
  return rows;
}
