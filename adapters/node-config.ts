import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import * as v from 'valibot';
import { parse as parseYaml } from 'yaml';
import { hostname } from 'node:os';
import { jsonErrorLine, jsonRequestLog, type SeedData, type ServiceOptions } from '../src/index.js';
import { openBlobStore, openKeyValueStore, openObjectStore, loadMacros } from './config-modules.js';
import { ConfigSchema, describeIssue, ENV, isModulePath, type FileConfig } from './config-schema.js';
import { swaggerUiFiles } from './swagger-ui.js';
import { smtpMailer } from './smtp-mailer.js';
import { nodeCrypto } from './node-crypto.js';

export type { FileConfig } from './config-schema.js';

/**
 * Host configuration for the standalone server: `api-config.yml` (or the file named by
 * `ODBREST_CONFIG`), then environment variables, which win. Its groups are those of `ServiceOptions`
 * (see config-schema.ts); everything is turned into plain option values, so the core never touches
 * the file system. `loadConfig` reads and checks it; `openConfig` then opens the stores and the
 * macro module it names.
 */

/** The standalone server's configuration: service options plus where to listen. */
export interface HostConfig {
  /** The service options, without what `openConfig` opens (`store`, `kv`, `files.blobs`, `macros`). */
  options: ServiceOptions;
  port: number;
  hostname: string | undefined;
  /**
   * The checked file values after the ODBREST_* overrides, for hosts with settings of their own.
   * Everything the service reads (OAuth providers, the server key, the data file) is already in
   * `options`; nothing in odbrest reads this.
   */
  file: FileConfig;
  /** Directory relative paths in the config file are resolved against (`readFile` uses it too). */
  baseDir: string;
  /** The configuration file read, or `undefined` when there was none. */
  path: string | undefined;
}

/** Sets `raw[path...]`, making groups as needed (a group that is not a mapping is left for the schema to name). */
function setOption(raw: Record<string, unknown>, path: string[], value: unknown): void {
  let target = raw;
  for (const name of path.slice(0, -1)) {
    const next = target[name] ?? {};
    if (typeof next !== 'object' || next === null || Array.isArray(next)) return;
    target = target[name] = next as Record<string, unknown>;
  }
  target[path.at(-1)!] = value;
}

/** Groups whose file form differs from their option form (minutes and hours become milliseconds). */
const minutes = (value: number | undefined, ms: number) => (value === undefined ? undefined : value * ms);
const CONVERTED = {
  session: (session: NonNullable<FileConfig['session']>): ServiceOptions['session'] => ({
    jwtSecret: session.jwtSecret,
    maxPerUser: session.maxPerUser,
    idleTimeoutMs: minutes(session.idleTimeoutMinutes, 60_000),
    absoluteTimeoutMs: minutes(session.absoluteTimeoutHours, 3_600_000),
  }),
  // the file holds the rule table itself; in code it is `access.rules` beside the `authorize` function
  access: (rules: NonNullable<FileConfig['access']>): ServiceOptions['access'] => ({ rules }),
  // the blob store is opened by openConfig, like the object store
  files: ({ maxUploadBytes, className }: NonNullable<FileConfig['files']>): ServiceOptions['files'] => ({ maxUploadBytes, className }),
  events: (events: NonNullable<FileConfig['events']>): ServiceOptions['events'] => ({
    retainEvents: events.retainEvents,
    retainMs: minutes(events.retainMinutes, 60_000),
  }),
  loginLimit: (limit: NonNullable<FileConfig['loginLimit']>): ServiceOptions['loginLimit'] => ({
    perUser: limit.perUser,
    perAddress: limit.perAddress,
    windowMs: minutes(limit.windowMinutes, 60_000),
  }),
};
/** Top-level entries that configure the host, not a service option of the same name. */
const HOST_ENTRIES = ['port', 'hostname', 'dataFile', 'macros', 'requestLog', 'log', 'store', 'kv', 'secure', 'externalLogin', 'apiReference', 'mail'] as const;

export function loadConfig(env: Record<string, string | undefined> = process.env, cwd = process.cwd()): HostConfig {
  const path = env.ODBREST_CONFIG ? resolve(cwd, env.ODBREST_CONFIG) : resolve(cwd, 'api-config.yml');
  const found = existsSync(path);
  let raw: Record<string, unknown> = {};
  if (found) {
    const parsed = parseYaml(readFileSync(path, 'utf8')) as unknown;
    if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) throw new Error(`${path}: expected a mapping of options`);
    raw = (parsed as Record<string, unknown>) ?? {};
  } else if (env.ODBREST_CONFIG) {
    throw new Error(`config file not found: ${path}`);
  }
  const baseDir = found ? dirname(path) : cwd;
  // `store: postgres://...` is short for `store: {url: postgres://...}` (ODBREST_STORE then sets the url)
  // `store: ./my-store.mjs` is short for `store: {module: ./my-store.mjs}`
  for (const name of ['store', 'kv']) if (typeof raw[name] === 'string') raw[name] = isModulePath(raw[name]) ? { module: raw[name] } : { url: raw[name] };
  // a store URL from the environment replaces the file's store, module or URL
  for (const [name, variable] of [['store', 'ODBREST_STORE'], ['kv', 'ODBREST_KV']] as const) {
    const group = raw[name] as Record<string, unknown> | undefined;
    if (env[variable] && typeof group === 'object' && group !== null) delete group.module;
  }
  const files = raw.files as Record<string, unknown> | undefined;
  if (typeof files === 'object' && files !== null && typeof files.blobs === 'string') files.blobs = { url: files.blobs };
  // A key from the environment replaces the file's key in either form; both key variables set at
  // once are then refused by readServerKey, as both forms in the file are.
  const secure = raw.secure as Record<string, unknown> | undefined;
  if ((env.ODBREST_SERVER_KEY || env.ODBREST_SERVER_KEY_FILE) && typeof secure === 'object' && secure !== null) {
    delete secure.serverKey;
    delete secure.serverKeyFile;
  }
  for (const [name, [option, convert]] of Object.entries(ENV)) {
    const value = env[name];
    if (value !== undefined && value !== '') setOption(raw, option, convert(value));
  }
  const result = v.safeParse(ConfigSchema, raw);
  if (!result.success) throw new Error(describeIssue(result.issues[0]));
  const file = result.output;
  for (const name of ['store', 'kv'] as const) {
    if (file[name]?.url !== undefined && file[name].module !== undefined) throw new Error(`invalid configuration (${name}): give ${name}.url or ${name}.module, not both`);
    if (file[name] && file[name].url === undefined && file[name].module === undefined) throw new Error(`invalid configuration (${name}): give ${name}.url or ${name}.module`);
    if (file[name]?.options !== undefined && file[name].module === undefined) throw new Error(`invalid configuration (${name}.options): options are for ${name}.module`);
  }
  const options: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(file)) {
    if (value === undefined || (HOST_ENTRIES as readonly string[]).includes(name)) continue;
    const convert = CONVERTED[name as keyof typeof CONVERTED] as ((value: unknown) => unknown) | undefined;
    options[name] = convert ? convert(value) : value;
  }
  const json = file.log?.format === 'json';
  const stdout = stdoutLines();
  const bindings = { pid: process.pid, hostname: hostname() };
  Object.assign(options, {
    secure: {
      serverKey: readServerKey(file.secure, baseDir),
      // Native AES-CTR and HMAC for the secure transport (the core's default is pure JS).
      symmetricCrypto: nodeCrypto,
    },
    externalLogin: {
      ...file.externalLogin,
      // Apple's key file (keyPath in the provider entry), relative paths from the config file's folder.
      readFile: (path: string) => readFile(resolve(baseDir, path), 'utf8'),
    },
    logger: file.requestLog === false ? undefined : json ? jsonRequestLog(stdout, bindings) : stdout,
  } satisfies ServiceOptions);
  // with the JSON log, an unexpected error is one line of it (pino's err, the request's reqId), not a text stack on stderr
  if (json) options.onError = (error: unknown, about?: { requestId?: string }) => stdout(jsonErrorLine(error, about?.requestId, Date.now(), bindings));
  if (file.dataFile) options.data = readSeedFile(resolve(baseDir, file.dataFile));
  return { options: options as ServiceOptions, port: file.port ?? 8080, hostname: file.hostname, file, baseDir, path: found ? path : undefined };
}

/**
 * The complete service options of a configuration: `options` with the stores its URLs choose and
 * the macros of its module (after `extra`, the host's own, which the module's may not replace).
 * Seed data goes into a durable store only while the store holds none of its classes, so a restart
 * never overwrites what the service has written since.
 */
export async function openConfig(config: HostConfig, extra: Pick<ServiceOptions, 'macros'> = {}): Promise<ServiceOptions> {
  const { file, baseDir } = config;
  const moduleMacros = file.macros === undefined ? {} : await loadMacros(file.macros, baseDir);
  for (const name of Object.keys(moduleMacros)) {
    if (extra.macros && name in extra.macros) throw new Error(`macros module ${file.macros}: ${name} is already a macro of this server`);
  }
  const store = await openObjectStore(file.store, baseDir);
  let kv, blobs, apiReference: ServiceOptions['apiReference'], mail: ServiceOptions['mail'];
  try {
    kv = await openKeyValueStore(file.kv, baseDir);
    if (file.mail) {
      const { url, ...rest } = file.mail;
      mail = { ...rest, mailer: await smtpMailer(url) };
    }
    blobs = await openBlobStore(file.files?.blobs, baseDir);
    if (file.apiReference) {
      const { path } = file.apiReference === true ? {} : file.apiReference;
      apiReference = { path, swaggerUi: await swaggerUiFiles() };
    }
  } catch (error) {
    await Promise.all([store?.close?.(), kv?.close?.()]);
    throw error;
  }
  let data = config.options.data;
  if (store && data && (await holdsAny(store, data))) data = undefined;
  const files = blobs ? { ...config.options.files, blobs } : config.options.files;
  return { ...config.options, data, store, kv, files, apiReference, mail, macros: { ...extra.macros, ...moduleMacros } };
}

/** Whether `store` holds an object of a class the seed data has. */
async function holdsAny(store: NonNullable<ServiceOptions['store']>, data: SeedData): Promise<boolean> {
  const classes = new Set(data.objects.map((object) => object['~ClassName']));
  for (const className of classes) if ((await store.count(className)) > 0) return true;
  return false;
}

/** The secure-login key as a PEM value: given inline (`serverKey`) or read from `serverKeyFile`. */
function readServerKey(secure: FileConfig['secure'], baseDir: string): string | undefined {
  if (secure?.serverKey !== undefined && secure.serverKeyFile !== undefined) {
    throw new Error('invalid configuration: give secure.serverKey or secure.serverKeyFile, not both');
  }
  if (secure?.serverKeyFile === undefined) return secure?.serverKey;
  const path = resolve(baseDir, secure.serverKeyFile);
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read server key file ${path}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
}

export function readSeedFile(path: string): SeedData {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read data file ${path}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as SeedData;
  } catch (error) {
    throw new Error(`data file ${path} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Request log lines to standard output, gathered and written once per turn of the event loop: under
 * load one write per request cost more than the request itself (a synchronous write to a terminal,
 * file or pipe per line); lines still waiting when the process exits are written then. A standard
 * output nobody reads any more (a closed pipe: `EPIPE`) drops the log, as `console.log` does, and
 * never stops the service.
 */
function stdoutLines(): (line: string) => void {
  let pending: string[] = [];
  let broken = false;
  process.stdout.on('error', () => {
    broken = true;
    pending = [];
  });
  const flush = () => {
    if (pending.length === 0 || broken) return;
    const text = `${pending.join('\n')}\n`;
    pending = [];
    process.stdout.write(text);
  };
  process.once('exit', flush);
  return (line) => {
    if (!broken && pending.push(line) === 1) setImmediate(flush);
  };
}
