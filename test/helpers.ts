/** Shared test tooling: a service on the demo database and fetch-shaped calls that return whole envelopes. */
import { readFileSync } from 'node:fs';
import { clientPassValue, createService, type Service, type ServiceOptions, type SeedData, type SymmetricCrypto } from '../src/index.js';

export const APP_KEY = 'test-app';
export const demoData = (): SeedData =>
  JSON.parse(readFileSync(new URL('../examples/demo-data.json', import.meta.url), 'utf8')) as SeedData;

/** Demo users and their plaintext passwords (the client sends `clientPassValue(password)`). */
export const USERS = {
  alice: 'alice-secret', // licences crm, shop, hr
  bob: 'bob-secret', // licences crm, hr, and shop with one seat
  dave: 'dave-secret', // no licences
  extern: 'extern-secret', // shared service user, licence crm
} as const;
export const CONTACTS = { carol: 'carol-secret', dan: 'dan-secret' } as const;

/** A clock tests can move. */
export function testClock(start = Date.UTC(2026, 0, 15, 9, 0, 0)) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

/** A service on the demo database with cheap password hashing. */
export async function demoService(options: ServiceOptions = {}): Promise<Service> {
  const service = createService({ data: demoData(), onError: () => undefined, ...options, users: { passwordIterations: 1000, ...options.users } });
  await service.ready;
  return service;
}

export interface CallOptions {
  headers?: Record<string, string>;
  /** A JSON body (sent with `Content-Type: application/json`). */
  json?: unknown;
  /** A raw body, sent as is. */
  body?: BodyInit;
  /** Leave out the appkey header. */
  noAppKey?: boolean;
  clientAddress?: string;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  body: any;
}

export async function call(service: Service, method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
  const headers = new Headers(options.headers);
  if (!options.noAppKey && !headers.has('appkey')) headers.set('appkey', APP_KEY);
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  }
  const url = path.startsWith('http') ? path : `http://odbrest.test${path}`;
  const response = await service.fetch(new Request(url, { method, headers, body }), { clientAddress: options.clientAddress ?? '127.0.0.1' });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: parseOrUndefined(text) };
}

/** The parsed JSON text, or undefined when it is not JSON (an HTML error page, say). */
export function parseOrUndefined(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function loginBody(user: string, password: string, appNames: string[] | string = ['crm']) {
  return { user, pass: clientPassValue(password), appNames };
}

/** Plain login; returns the session id. */
export async function login(service: Service, user: keyof typeof USERS = 'alice', appNames: string[] | string = ['crm']): Promise<string> {
  const result = await call(service, 'POST', '/v1/login', { json: loginBody(user, USERS[user], appNames) });
  if (result.body?.status?.internalStatus !== '0') throw new Error(`login failed: ${result.text}`);
  return result.body.data.sessionId as string;
}

/** Token login; returns the JWT. */
export async function loginToken(service: Service, user: keyof typeof USERS = 'alice', appNames: string[] | string = ['crm']): Promise<string> {
  const result = await call(service, 'POST', '/v2/login', { json: loginBody(user, USERS[user], appNames) });
  if (result.body?.status?.internalStatus !== '0') throw new Error(`token login failed: ${result.text}`);
  return result.body.data.token as string;
}

/** Asserts an error envelope of exactly this shape. */
export function expectError(result: CallResult, code: string, httpStatus: number): void {
  const ok =
    result.status === httpStatus &&
    result.body?.status?.internalStatus === code &&
    typeof result.body?.status?.statusMessage === 'string' &&
    result.body.status.statusMessage.length > 0 &&
    JSON.stringify(result.body?.data) === '{}';
  if (!ok) throw new Error(`expected ${code}/${httpStatus} error envelope, got ${result.status}: ${result.text.slice(0, 500)}`);
}

/** A SymmetricCrypto that counts the keys prepared through it, to show a service or client uses the one it was given. */
export function countingCrypto(provider: SymmetricCrypto): { symmetric: SymmetricCrypto; prepared: { aesCtr: number; hmacSha256: number } } {
  const prepared = { aesCtr: 0, hmacSha256: 0 };
  const symmetric: SymmetricCrypto = {
    aesCtr: (key) => (prepared.aesCtr++, provider.aesCtr(key)),
    hmacSha256: (key) => (prepared.hmacSha256++, provider.hmacSha256(key)),
  };
  return { symmetric, prepared };
}

/** A view of `target` (a store) that counts the calls made through it, by method name. */
export function countingCalls<T extends object>(target: T): { view: T; calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  const view = new Proxy(target, {
    get(of, name: string) {
      const member = Reflect.get(of, name) as unknown;
      if (typeof member !== 'function') return member;
      return (...args: unknown[]) => {
        calls[name] = (calls[name] ?? 0) + 1;
        return (member as (...a: unknown[]) => unknown).apply(of, args);
      };
    },
  });
  return { view, calls };
}
