// Pieces the benches share: the demo data, a login, a median.
import { readFileSync } from 'node:fs';
import { clientPassValue } from '../dist/index.js';

export const APP_KEY = 'bench';

export const demoData = () => JSON.parse(readFileSync(new URL('../examples/demo-data.json', import.meta.url), 'utf8'));

export const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

const ALICE_LOGIN = JSON.stringify({ user: 'alice', pass: clientPassValue('alice-secret'), appNames: ['crm'] });

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
