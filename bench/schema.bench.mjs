// Declared classes (issue 26): what a write to a declared class costs against the same write to a
// schemaless one. Two services on memory stores with the demo's data and rules, one declaring the
// demo's classes (examples/demo-schema.mjs: Customer with six checked fields, a reference whose
// target's class is checked), one not; creates (`POST /v1/object/Customer`) and updates (`PATCH` of
// one field: the merged object is checked) in alternating rounds. The ratio is the cost ratio
// (schemaless writes per second / declared writes per second); the target is at most 1.15.
import { createService } from '../dist/index.js';
import { demoAccess } from '../examples/demo-access.mjs';
import { demoSchema } from '../examples/demo-schema.mjs';
import { alternatingRates, APP_KEY, customer, demoData, loginAlice } from './common.mjs';

const written = (i) => ({ ...customer(i), Number: i + 1, AccountManager: { '~ObjectID': 'EMP00001' } });

async function serviceWith(schema) {
  const service = createService({ data: demoData(), access: demoAccess, schema, users: { passwordIterations: 1000 } });
  await service.ready;
  const headers = { appkey: APP_KEY, sessionId: await loginAlice(service), 'content-type': 'application/json' };
  return async (method, path, json) => {
    const response = await service.fetch(new Request(`http://bench${path}`, { method, headers, body: JSON.stringify(json) }));
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 200)}`);
  };
}

export default async function ({ rates }) {
  const declared = await serviceWith(demoSchema);
  const schemaless = await serviceWith(undefined);
  let n = 0;
  const creates = await alternatingRates(rates, () => schemaless('POST', '/v1/object/Customer', written(n++)), () => declared('POST', '/v1/object/Customer', written(n++)));
  let k = 0;
  const updates = await alternatingRates(rates, () => schemaless('PATCH', `/v1/object/CUS00${String((k % 200) + 1).padStart(3, '0')}`, { Revenue: k++ }), () =>
    declared('PATCH', `/v1/object/CUS00${String((k % 200) + 1).padStart(3, '0')}`, { Revenue: k++ }),
  );
  const row = (what, { a, b, ratio }) => ({ name: `${what} of a declared class (reference: the same write, schemaless), cost ratio`, value: b, unit: 'ops/s', reference: a, ratio, target: '<= 1.15' });
  return [row('creates', creates.cpu), row('updates', updates.cpu)];
}
