/**
 * Issue 25: the product's TypeScript and C# samples, their request sequences replayed byte for byte
 * as they send them (test/interop/clients.ts builds their bodies): the key fetched with no headers,
 * the password in plain text (the C# sample), the hybrid login, a request with the session, and the
 * C# sample's check for `Session is invalid` after logout. Each sample's `acls` is read as the Dart
 * client casts it.
 */
import { describe, expect, test } from 'vitest';
import type { Service } from '../../src/index.js';
import { APP_KEY, demoService, USERS } from '../helpers.js';
import { csharpClient, typescriptClient, type Connection, type InteropClient } from './clients.js';
import { KEY } from './vectors.js';

async function connection(): Promise<{ service: Service; connection: Connection; seen: string[] }> {
  const service = await demoService({ secure: { serverKey: KEY.privateKey } });
  const seen: string[] = [];
  return {
    service,
    seen,
    connection: {
      transport: (url, init) => {
        const headers = new Headers(init.headers);
        seen.push(`${init.method ?? 'GET'} ${new URL(url).pathname} appkey=${headers.get('appkey') ?? '-'}`);
        return service.fetch(new Request(url, init));
      },
      baseUrl: 'http://odbrest.test',
      appKey: APP_KEY,
    },
  };
}

/** The Dart client's strict casts of one `acls` element. */
function castAcl(entry: Record<string, unknown>) {
  const string = (v: unknown) => (typeof v === 'string' ? v : fail(v));
  const int = (v: unknown) => (Number.isInteger(v) ? v : fail(v));
  const bool = (v: unknown) => (typeof v === 'boolean' ? v : fail(v));
  const nullableString = (v: unknown) => (v === null || typeof v === 'string' ? v : fail(v));
  const fail = (v: unknown): never => {
    throw new TypeError(`cast failed: ${JSON.stringify(v)}`);
  };
  const addOns = entry.AddOns as { '~Count': unknown; '~Elements': unknown[] };
  return {
    oid: string(entry.Oid),
    status: int(entry.Status),
    userName: string(entry.UserName),
    deviceId: nullableString(entry.DeviceID),
    licenseKey: string(entry.LicenseKey),
    licenseLevel: nullableString(entry.LicenseLevel),
    parallel: int(entry.ParallelConnections),
    tfaActivated: bool(entry.TFAActivated),
    tfaConfirmed: bool(entry.TFAConfirmed),
    application: string(entry.Application),
    addOns: [int(addOns['~Count']), addOns['~Elements'].map(string)],
  };
}

const SAMPLES: Record<string, () => Promise<InteropClient>> = {
  'TypeScript sample (no headers on the key fetch)': () => typescriptClient({ bareKeyFetch: true, plainPassword: true }),
  'C# sample (password in plain text, no appkey on the key fetch)': () => csharpClient({ bareKeyFetch: true, plainPassword: true }),
};

describe.each(Object.keys(SAMPLES))('%s', (name) => {
  test('key, hybrid login, a request with the session, logout, then "Session is invalid"', { timeout: 60_000 }, async () => {
    const { connection: conn, seen } = await connection();
    const client = await SAMPLES[name]!();
    const login = await client.login(conn, { user: 'bob', password: USERS.bob, appNames: ['crm'] });
    expect(login.envelope.status, JSON.stringify(login.envelope)).toEqual({ internalStatus: '0', statusMessage: 'ok' });
    expect(login.sealed).toBe(true);
    expect(login.envelope.data.user.Name).toBe('bob');
    expect(login.envelope.data.acls['~Count']).toBe(1);
    expect(castAcl(login.envelope.data.acls['~Elements'][0]).application).toBe('crm');

    const customers = await client.request(conn, 'GET', '/v1/objects/Customer?perPage=1', { sessionId: login.sessionId });
    expect((await customers.json()).status.internalStatus).toBe('0');
    expect((await (await client.request(conn, 'POST', '/v1/logout', { sessionId: login.sessionId })).json()).status.internalStatus).toBe('0');
    const after = await client.request(conn, 'GET', '/v1/objects/Customer?perPage=1', { sessionId: login.sessionId });
    expect([after.status, await after.json()]).toEqual([401, { status: { internalStatus: '201', statusMessage: 'Session is invalid' }, data: {} }]);
    expect(seen[0]).toBe('GET /v2/login/key appkey=-');
  });
});
