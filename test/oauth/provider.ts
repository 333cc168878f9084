/** Test tooling for external login: the local provider process, a "browser" that follows the flow, odbrest over HTTP. */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportPKCS8, generateKeyPair } from 'jose';
import { readTextFile, serve } from '../../adapters/node.js';
import type { Fields, ProviderEndpoints, SeedObject, Service, ServiceOptions, Where } from '../../src/index.js';
import { expect } from 'vitest';
import { APP_KEY, USERS, call, demoData, demoService, loginBody, type CallResult } from '../helpers.js';
import { remoteService } from '../support/processes.js';
import { readme, readmeBlocks } from '../support/readme.js';

/**
 * The provider types the provider process serves and the shared flow tests run for (`oidc` runs
 * against a certified provider of its own: test/oauth/oidc.test.ts; `github` has its own tests).
 */
export const PROVIDER_TYPES = ['google', 'facebook', 'microsoft', 'apple'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];
/** What the provider process serves. */
export type ServedType = ProviderType | 'github';

/** The configured name the tests give each provider type (its lower case is the path segment). */
export const NAMES: Record<ServedType, string> = { google: 'Google', facebook: 'Facebook', microsoft: 'Microsoft', apple: 'Apple', github: 'GitHub' };

export interface ProviderUser {
  sub: string;
  email?: string;
  given_name?: string;
  family_name?: string;
  /** github: the profile's `name`, and the addresses `GET /user/emails` lists (`sub` is the numeric id). */
  name?: string;
  emails?: Array<{ email: string; primary: boolean; verified: boolean }>;
}

/** One provider served by the provider process. */
export interface LocalProvider {
  id: string;
  kind: ServedType;
  clientId: string;
  endpoints: ProviderEndpoints;
  issuer: string;
  /** Apple only: the key files the service reads. */
  apple?: { teamId: string; keyId: string; keyPath: string; clientIds: string[] };
}

/** A fresh ES256 key pair as Apple issues one: the private key as PKCS#8 PEM text (an AuthKey_*.p8 file's content). */
export async function appleKey(): Promise<{ pem: string; publicKey: CryptoKey }> {
  const key = await generateKeyPair('ES256', { extractable: true });
  return { pem: await exportPKCS8(key.privateKey), publicKey: key.publicKey };
}

/** Writes `pem` as `AuthKey_{keyId}.p8` into a new temporary folder and returns the file's path. */
export function appleKeyFile(keyId: string, pem: string): string {
  const keyPath = join(mkdtempSync(join(tmpdir(), 'odbrest-apple-')), `AuthKey_${keyId}.p8`);
  writeFileSync(keyPath, pem);
  return keyPath;
}

/** The provider process: started with `fork`, controlled over IPC, killed by its own handle. */
export class ProviderProcess {
  readonly #child: ChildProcess;
  readonly #waiting = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>();
  #next = 0;

  private constructor(child: ChildProcess) {
    this.#child = child;
    child.on('message', (message: { id?: number; result?: unknown; error?: string }) => {
      const waiter = message.id === undefined ? undefined : this.#waiting.get(message.id);
      if (!waiter) return;
      this.#waiting.delete(message.id!);
      if (message.error !== undefined) waiter.reject(new Error(message.error));
      else waiter.resolve(message.result);
    });
  }

  /** `script` defaults to the provider process of the four fixed types; `execPath` runs it under another Node. */
  static async spawn(script = new URL('./provider-process.mjs', import.meta.url), execPath?: string): Promise<ProviderProcess> {
    const child = fork(script, [], { execArgv: [], execPath, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`provider process exited with ${code}`)));
    });
    return new ProviderProcess(child);
  }

  call<T = unknown>(cmd: string, args: Record<string, unknown> = {}): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#child.send({ id, cmd, args });
    });
  }

  /** Starts a provider of this kind; Apple gets a fresh ES256 key whose .p8 file the service reads. */
  async start(kind: ServedType, options: { tenant?: string } = {}): Promise<LocalProvider> {
    const clientId = `${kind}-client-${this.#next}`;
    if (kind === 'apple') {
      const key = await appleKey();
      const keyId = 'KEY123ABCD';
      const keyPath = appleKeyFile(keyId, key.pem);
      const apple = { teamId: 'TEAM123456', keyId, publicJwk: await exportJWK(key.publicKey) };
      const started = await this.call<{ id: string; endpoints: ProviderEndpoints; issuer: string }>('start', { kind, clientId, apple });
      return { ...started, kind, clientId, apple: { teamId: apple.teamId, keyId, keyPath, clientIds: [clientId, 'com.example.app'] } };
    }
    const started = await this.call<{ id: string; endpoints: ProviderEndpoints; issuer: string }>('start', {
      kind,
      clientId,
      clientSecret: `${clientId}-secret`,
      tenant: kind === 'microsoft' ? (options.tenant ?? 'tenant-a') : undefined,
    });
    return { ...started, kind, clientId };
  }

  user(provider: LocalProvider, user: ProviderUser): Promise<unknown> {
    return this.call('user', { id: provider.id, user });
  }

  next(
    provider: LocalProvider,
    shape: { idToken?: Record<string, unknown>; rogueKey?: boolean; tokenStatus?: number; tokenError?: string; userinfoStatus?: number },
  ): Promise<unknown> {
    return this.call('next', { id: provider.id, ...shape });
  }

  /** Counts since the provider started; `distinctSecrets`: how many different client secrets token requests carried. */
  stats(
    provider: LocalProvider,
  ): Promise<{ tokenRequests: number; verifiedSecrets: number; distinctSecrets: number; authorizations: Array<Record<string, string>> }> {
    return this.call('stats', { id: provider.id });
  }

  stop(provider: LocalProvider): Promise<unknown> {
    return this.call('stop', { id: provider.id });
  }

  close(): void {
    this.#child.kill();
  }
}

/** A provider process with one started provider of each kind asked for. */
export async function spawnProviders<K extends ServedType>(...kinds: K[]): Promise<{ idp: ProviderProcess; providers: Record<K, LocalProvider> }> {
  const idp = await ProviderProcess.spawn();
  try {
    const providers = {} as Record<K, LocalProvider>;
    for (const kind of kinds) providers[kind] = await idp.start(kind);
    return { idp, providers };
  } catch (error) {
    idp.close();
    throw error;
  }
}

/** The `OAuthProvider` database entry for a local provider. */
export function providerEntry(provider: LocalProvider, name: string, extra: { defaultUser?: string; serverAddress?: string } = {}): SeedObject {
  const additionalData = provider.apple
    ? {
        clientId: provider.apple.clientIds,
        serverAddress: extra.serverAddress,
        teamId: provider.apple.teamId,
        keyIdentifier: provider.apple.keyId,
        keyPath: provider.apple.keyPath,
        endpoints: provider.endpoints,
      }
    : { clientId: provider.clientId, clientSecret: `${provider.clientId}-secret`, endpoints: provider.endpoints };
  return {
    '~ClassName': 'OAuthProvider',
    name,
    type: provider.kind,
    additionalData: JSON.stringify(additionalData),
    ...(extra.defaultUser ? { defaultUser: extra.defaultUser } : {}),
  };
}

export interface RunningService {
  base: string;
  service: Service;
  close(): Promise<void>;
}

/**
 * odbrest on the demo database over real HTTP (port 0). The service is created once the port is
 * known, because its `publicUrl` (and Apple's `serverAddress`) must name it.
 */
export async function startService(
  providers: Array<{ provider: LocalProvider; name: string; defaultUser?: string }>,
  options: ServiceOptions = {},
): Promise<RunningService> {
  let service: Service | undefined;
  const server = await serve({ fetch: (request, context) => service!.fetch(request, context) } as Service, { port: 0, hostname: '127.0.0.1' });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const entries = providers.map(({ provider, name, defaultUser }) => providerEntry(provider, name, { defaultUser, serverAddress: base }));
  service = await demoService({
    data: { objects: [...demoData().objects, ...entries] },
    externalLogin: { publicUrl: base, providers: providers.map(({ name }) => ({ name })), readFile: readTextFile },
    ...options,
  });
  return { base, service, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The request the provider's redirect makes the browser send to the callback. */
export interface CallbackStep {
  method: 'GET' | 'POST';
  url: string;
  form?: URLSearchParams;
}

/**
 * odbrest at `base` as a `Service` for the shared `call` helper, over real HTTP. Redirects are
 * answers here (the start's 302 is what is tested), so they are not followed.
 */
export function overHttp(base: string): Service {
  return remoteService(base, (input, init) => fetch(input, { ...init, redirect: 'manual' })) as unknown as Service;
}

const unescapeHtml = (value: string) => value.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/**
 * What a browser does: GET /v1/auth/{name} (302), then the provider's page, which redirects back
 * (302 with the code in the query) or, for Apple, answers an auto-submitting form (form_post).
 */
export async function authorize(base: string, name: string, query = `appkey=${APP_KEY}`): Promise<CallbackStep> {
  const start = await fetch(`${base}/v1/auth/${name}?${query}`, { redirect: 'manual' });
  if (start.status !== 302) throw new Error(`expected a redirect, got ${start.status}: ${await start.text()}`);
  const page = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  if (page.status === 302) return { method: 'GET', url: page.headers.get('location')! };
  const html = await page.text();
  const action = /<form[^>]*action="([^"]*)"/.exec(html)?.[1];
  if (page.status !== 200 || action === undefined) throw new Error(`unexpected provider page ${page.status}: ${html.slice(0, 300)}`);
  const form = new URLSearchParams();
  for (const match of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) form.set(match[1]!, unescapeHtml(match[2]!));
  return { method: 'POST', url: unescapeHtml(action), form };
}

/** Sends the callback as the browser would (no app key: the provider's redirect carries none). */
export function finish(step: CallbackStep): Promise<CallResult> {
  const url = new URL(step.url);
  const form = step.method === 'POST' ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: step.form!.toString() } : {};
  return call(overHttp(url.origin), step.method, `${url.pathname}${url.search}`, { noAppKey: true, ...form });
}

/** A callback step's parameters, for tests that tamper with them. */
export function params(step: CallbackStep): URLSearchParams {
  return step.method === 'GET' ? new URL(step.url).searchParams : step.form!;
}

/** The same step with changed parameters (or sent to another provider's callback). */
export function tampered(step: CallbackStep, change: (params: URLSearchParams) => void, path?: string): CallbackStep {
  const url = new URL(step.url);
  if (path !== undefined) url.pathname = path;
  if (step.method === 'GET') {
    change(url.searchParams);
    return { method: 'GET', url: url.href };
  }
  const form = new URLSearchParams(step.form);
  change(form);
  return { method: 'POST', url: url.href, form };
}

/** The `data` `/v1/login` answers for this user, sessionId and expiresAt left open: to compare other logins with. */
export async function loginData(base: string, user: keyof typeof USERS, appNames: string[]) {
  const answer = await postJson(base, '/v1/login', loginBody(user, USERS[user], appNames));
  if (answer.body?.status?.internalStatus !== '0') throw new Error(`login failed: ${JSON.stringify(answer.body)}`);
  return { ...answer.body.data, sessionId: expect.stringMatching(/^[\w-]{22,}$/), expiresAt: expect.any(String) };
}

/** POST JSON to the service with the app key. */
export function postJson(base: string, path: string, json: unknown): Promise<CallResult> {
  return call(overHttp(base), 'POST', path, { json });
}

/** GET with the app key. */
export function getJson(base: string, path: string, headers: Record<string, string> = {}): Promise<CallResult> {
  return call(overHttp(base), 'GET', path, { headers });
}

/** Asserts a whole error envelope. */
export function expectRejected(answer: Pick<CallResult, 'status' | 'body'>, code: string, status: number, message: string | RegExp): void {
  expect(answer.status).toBe(status);
  const statusMessage = typeof message === 'string' ? message : expect.stringMatching(message);
  expect(answer.body).toEqual({ status: { internalStatus: code, statusMessage }, data: {} });
}

/** The fields of the identity links (`ExternalIdentity` objects) matching `where`. */
export async function identityLinks(service: Service, where: Where): Promise<Fields[]> {
  return (await service.store.find({ className: 'ExternalIdentity', where })).objects.map((object) => object.fields);
}

/** A provider process serving every provider type, and odbrest configured for all four (see `startService`). */
export interface AllProviders {
  idp: ProviderProcess;
  providers: Record<ProviderType, LocalProvider>;
  running: RunningService;
}

export async function startAllProviders(): Promise<AllProviders> {
  const { idp, providers } = await spawnProviders(...PROVIDER_TYPES);
  const running = await startService(PROVIDER_TYPES.map((kind) => ({ provider: providers[kind], name: NAMES[kind] })));
  return { idp, providers, running };
}

export async function stopAllProviders(setup: Partial<AllProviders>): Promise<void> {
  await setup.running?.close();
  setup.idp?.close();
}

/** The `OAuthProvider` entries docs/external-login.md prints as the one JSON block under `section`. */
export function documentedEntries(section: string): Array<SeedObject & { additionalData: Record<string, unknown> }> {
  const file = 'docs/external-login.md';
  const blocks = readmeBlocks(readme(file), file).filter((block) => block.section === section && block.language === 'json');
  if (blocks.length !== 1) throw new Error(`${file} has ${blocks.length} json blocks under "${section}", not one`);
  const parsed = JSON.parse(blocks[0]!.code);
  return Array.isArray(parsed) ? parsed : [parsed];
}
