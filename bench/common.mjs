// Pieces the benches share: the demo data, a login, a logged-in GET, medians, alternating rates.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { clientPassValue } from '../dist/index.js';

export const APP_KEY = 'bench';

export const demoData = () => JSON.parse(readFileSync(new URL('../examples/demo-data.json', import.meta.url), 'utf8'));

/** Whether `check` (a connection attempt) succeeds. */
export async function reachable(check) {
  try {
    await check();
    return true;
  } catch {
    return false;
  }
}

export const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

export const ALICE_LOGIN = JSON.stringify({ user: 'alice', pass: clientPassValue('alice-secret'), appNames: ['crm'] });

/** Logs alice in through `POST /v1/login` of `service` (anything with `fetch(request)`) at `base`; returns the session id. */
export async function loginAlice(service, base = 'http://bench') {
  const response = await service.fetch(
    new Request(`${base}/v1/login`, {
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

// --- secure login and signed requests, as a client in another language would make them ----------

/** RSA-OAEP with SHA-1, as the protocol's secure login uses it. */
export const OAEP = { name: 'RSA-OAEP', hash: 'SHA-1' };
const subtle = globalThis.crypto.subtle;
/** Standard base64 of bytes. */
export const b64 = (bytes) => Buffer.from(bytes).toString('base64');

/** A 2048-bit RSA-OAEP (SHA-1) key pair, extractable. */
export const rsaPair = () => subtle.generateKey({ ...OAEP, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }, true, ['encrypt', 'decrypt']);

/** A PEM of DER bytes under `label`. */
export const pem = (label, der) => `-----BEGIN ${label}-----\n${b64(der).replace(/(.{64})/g, '$1\n')}\n-----END ${label}-----\n`;

/** The login envelope from the block-encrypted answer (256-byte blocks for a 2048-bit client key). */
async function openLoginAnswer(text, privateKey) {
  const sealed = Buffer.from(text, 'base64');
  const parts = [];
  for (let i = 0; i < sealed.length; i += 256) parts.push(Buffer.from(await subtle.decrypt(OAEP, privateKey, sealed.subarray(i, i + 256))));
  return JSON.parse(Buffer.concat(parts).toString('utf8'));
}

/**
 * Alice's secure login through `fetchFn(url, init)` (the server key read from `/v2/login/secure/key`);
 * returns what signing requests needs: `token` (the Secure-Token) and `mac` (the signing key M).
 */
export async function secureSession(fetchFn, base, clientPair) {
  const keyAnswer = await (await fetchFn(`${base}/v2/login/secure/key`, { headers: { appkey: APP_KEY } })).json();
  const der = Buffer.from(keyAnswer.data.key.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const serverKey = await subtle.importKey('spki', der, OAEP, false, ['encrypt']);
  const credentials = b64(await subtle.encrypt(OAEP, serverKey, new TextEncoder().encode(ALICE_LOGIN)));
  const publicKey = pem('PUBLIC KEY', await subtle.exportKey('spki', clientPair.publicKey));
  const response = await fetchFn(`${base}/v2/login/secure`, {
    method: 'POST',
    headers: { appkey: APP_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ credentials, publicKey }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`secure login failed: ${text}`);
  const { data } = await openLoginAnswer(text, clientPair.privateKey);
  const mac = createHmac('sha256', Buffer.from(data.symmetricKey, 'base64')).update('odbrest secure transport mac').digest();
  return { token: data.sessionId, mac };
}

/** The `Secure-Signature` of a bodiless secure `GET target` numbered `n`. */
export const getSignature = (session, n, target) => createHmac('sha256', session.mac).update(`REQ ${n} GET ${target}\n`).digest('base64');

/** The headers of a bodiless secure `GET target` numbered `n`. */
export function signedGetHeaders(session, n, target) {
  return { appkey: APP_KEY, 'secure-token': session.token, 'secure-counter': String(n), 'secure-signature': getSignature(session, n, target) };
}

// --- 100,000 customers in PostgreSQL, seeded in bulk (the listing and write benches) ---------------

export const CITIES = ['Hamburg', 'Munich', 'Berlin', 'Cologne', 'Frankfurt', 'Stuttgart', 'Leipzig', 'Dresden', 'Bremen', 'Hanover'];

/** The i-th customer's fields, in the order the demo writes them (`seedCustomers` builds the same in SQL). */
export const customer = (i) => ({
  Name: `Customer ${i}`,
  Number: i,
  City: CITIES[i % 10],
  Active: i % 3 !== 0,
  Revenue: (i * 7919) % 100_000,
  AccountManager: { $ref: `EMP${String(i % 40).padStart(5, '0')}` },
});

const sqlArray = (values) => `array[${values.map((value) => `'${value}'`).join(', ')}]`;

/**
 * Fills a PostgresObjectStore's table `"schema".objects` (created already: call `store.count` first)
 * with `count` customers (ids `CUS000000`...) and every fifth as an `Order` sharing the table, in
 * bulk SQL (the store's triggers keep the totals); and a table `"schema".floor` with a column per
 * field and the best btree indexes for the listings, the reference of `floorPage`. Then what
 * autovacuum does in steady state: statistics, and the visibility map index-only scans need.
 */
export async function seedCustomers(admin, schema, count) {
  const fields = `json_build_object('Name', 'Customer ' || i, 'Number', i, 'City', (${sqlArray(CITIES)})[i % 10 + 1], 'Active', i % 3 <> 0,
    'Revenue', (i::int8 * 7919) % 100000, 'AccountManager', json_build_object('$ref', 'EMP' || lpad((i % 40)::text, 5, '0')))::text`;
  await admin.query(`INSERT INTO "${schema}".objects (id, class_name, store_time, data, body)
    SELECT id, c, 1767225600000, f::jsonb, f FROM (
      SELECT CASE WHEN c = 'Customer' THEN 'CUS' ELSE 'ORD' END || lpad(i::text, 6, '0') AS id, c, ${fields} AS f
      FROM generate_series(0, ${count - 1}) i, unnest(array['Customer', 'Order']) c WHERE c = 'Customer' OR i % 5 = 0 ORDER BY i, c) rows`);
  await admin.query(`CREATE TABLE "${schema}".floor (seq int8 PRIMARY KEY, id text NOT NULL, city text NOT NULL, revenue int8 NOT NULL, body text NOT NULL)`);
  await admin.query(`INSERT INTO "${schema}".floor SELECT i, 'CUS' || lpad(i::text, 6, '0'), (${sqlArray(CITIES)})[i % 10 + 1], (i::int8 * 7919) % 100000, ${fields}
    FROM generate_series(0, ${count - 1}) i`);
  await admin.query(`CREATE INDEX ON "${schema}".floor (city, seq)`);
  await admin.query(`CREATE INDEX ON "${schema}".floor (city, revenue, seq)`);
  await admin.query(`VACUUM ANALYZE "${schema}".objects, "${schema}".floor`);
}

/**
 * The floor of a listing page of `seedCustomers`' customers: page of 50 and total in one statement
 * straight through `pg` on the floor table. `city` filters by equality, `order` is SQL (`seq`,
 * `revenue, seq`). Answers `{ total, objects: [{ id, fields }] }`.
 */
export async function floorPage(pool, schema, { city, order, offset }) {
  const where = city ? 'WHERE city = $1' : '';
  const { rows } = await pool.query({
    text: `SELECT t.total, p.id, p.body FROM (SELECT count(*) AS total FROM "${schema}".floor ${where}) t
      LEFT JOIN LATERAL (SELECT id, body FROM "${schema}".floor ${where} ORDER BY ${order} OFFSET ${offset} LIMIT 50) p ON true`,
    values: city ? [city] : [],
  });
  return { total: Number(rows[0].total), objects: rows.filter((row) => row.id !== null).map((row) => ({ id: row.id, fields: JSON.parse(row.body) })) };
}
