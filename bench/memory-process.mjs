// One odbrest process for the memory rows of `postgres-listing.bench.mjs`, run as a child (with
// --expose-gc) so that its RSS is the whole process's: a service with the in-memory store holding the
// demo's seed data and `count` more customers shaped like the demo's, loaded the way a host loads
// them, then the listing indexes built by a few listings through `service.fetch`; printed as one JSON
// line: RSS and heap after collecting garbage, and the peak RSS.
//   node --expose-gc bench/memory-process.mjs <count> seed    the customers in the seed data (`data`), parsed from JSON text
//   node --expose-gc bench/memory-process.mjs <count> posts   the demo's seed data, then one `POST /v1/object/Customer` per customer
// A third argument, seconds, measures again after the process has been idle that long (`idleRss`):
// V8 gives back memory it kept after a load only once allocation has calmed down.
// With HEAP_SNAPSHOT=<file> it also writes a heap snapshot there at the end (what holds the bytes).
import { readFileSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';
import { createService } from '../dist/index.js';
import { demoAccess } from '../examples/demo-access.mjs';
import { APP_KEY, customer, loginAlice } from './common.mjs';

const count = Number(process.argv[2] ?? 0);
const mode = process.argv[3] ?? 'seed';
const idleSeconds = Number(process.argv[4] ?? 0);
const berlin = encodeURIComponent('{"City":"Berlin"}');
const LISTINGS = ['perPage=50', 'perPage=50&page=1000', `perPage=50&query=${berlin}`, `perPage=50&page=100&query=${berlin}`, `perPage=50&orderBy=Revenue&query=${berlin}`];

/** The seed data as a host has it: JSON text (the demo's objects, and in `seed` mode the customers), parsed. */
function seedData() {
  const demo = readFileSync(new URL('../examples/demo-data.json', import.meta.url), 'utf8');
  if (mode !== 'seed' || count === 0) return JSON.parse(demo);
  const customers = [];
  for (let i = 0; i < count; i++) customers.push(JSON.stringify({ '~ClassName': 'Customer', '~ObjectID': `CUS${String(i).padStart(6, '0')}`, ...customer(i) }));
  return JSON.parse(demo.replace(/\]\s*\}\s*$/, `,${customers.join(',')}]}`));
}

async function settled() {
  for (let i = 0; i < 4; i++) globalThis.gc?.();
  await new Promise((resolve) => setTimeout(resolve, 100));
  globalThis.gc?.();
  return process.memoryUsage();
}

const service = createService({ data: seedData(), users: { passwordIterations: 1 }, access: demoAccess });
await service.ready;
const headers = { appkey: APP_KEY, sessionId: await loginAlice(service) };
const call = async (method, path, body) => {
  const response = await service.fetch(new Request(`http://bench${path}`, { method, headers: { ...headers, 'content-type': 'application/json' }, body }));
  const answer = await response.json();
  if (answer.status.internalStatus !== '0') throw new Error(`${method} ${path}: ${JSON.stringify(answer.status)}`);
  return answer.data;
};
// a client writes references as {"~ObjectID": id}; the demo has three employees
const body = (i) => JSON.stringify({ ...customer(i), AccountManager: { '~ObjectID': `EMP0000${(i % 3) + 1}` } });
if (mode === 'posts') for (let i = 0; i < count; i++) await call('POST', '/v1/object/Customer', body(i));
for (const listing of LISTINGS) await call('GET', `/v1/objects/Customer?${listing}`);
const { rss, heapUsed, heapTotal } = await settled();
const total = (await call('GET', '/v1/objects/Customer?perPage=0'))['~UnfilteredCount'];
const maxRss = process.resourceUsage().maxRSS * 1024;
let idle = {};
if (idleSeconds > 0) {
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
  const settledAgain = await settled();
  idle = { idleRss: settledAgain.rss, idleHeapUsed: settledAgain.heapUsed };
}
console.log(JSON.stringify({ count, mode, total, rss, heapUsed, heapTotal, maxRss, ...idle }));
if (process.env.HEAP_SNAPSHOT) writeHeapSnapshot(process.env.HEAP_SNAPSHOT);
await service.ready; // the service stays alive until here
