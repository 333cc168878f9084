// What telemetry costs a host that installed no OpenTelemetry SDK (issue 29: under 2% on the GET
// benchmark): an authenticated GET /v1/object/{id} through service.fetch with the default (telemetry
// on: stores wrapped, a no-op span and no-op instruments per request and store call) against the same
// service built with `telemetry: false`, alternating rounds in one run.
import { createService } from '../dist/index.js';
import { alternatingRates, APP_KEY, demoData, loginAlice } from './common.mjs';

async function getOf(options) {
  const service = createService({ data: demoData(), users: { passwordIterations: 1 }, ...options });
  await service.ready;
  const sessionId = await loginAlice(service);
  const request = () => new Request('http://bench/v1/object/CUS00001', { headers: { appkey: APP_KEY, sessionid: sessionId } });
  const first = await (await service.fetch(request())).json();
  if (first.status.internalStatus !== '0') throw new Error(`unexpected answer: ${JSON.stringify(first)}`);
  return async () => (await service.fetch(request())).text();
}

export default async function ({ rates }) {
  const withTelemetry = await getOf({});
  const without = await getOf({ telemetry: false });
  const rows = [];
  for (const concurrency of [1, 16]) {
    const measured = await alternatingRates(rates, withTelemetry, without, { rounds: 11, ms: 300, concurrency });
    for (const [kind, unit] of [['wall', 'req/s'], ['cpu', 'req per CPU-s']]) {
      const { a, b, ratio } = measured[kind];
      rows.push({ name: `GET /v1/object/{id} with telemetry and no SDK, concurrency ${concurrency}`, value: a, unit, reference: b, ratio, target: '>= 0.98' });
    }
  }
  return rows;
}
