import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import * as v from 'valibot';
import { parse as parseYaml } from 'yaml';
import type { SeedData, ServiceOptions } from '../src/index.js';
import { nodeCrypto } from './node-crypto.js';

/**
 * Host configuration for the standalone server: `api-config.yml` (or the file named by
 * `ODBREST_CONFIG`), then environment variables, which win. Its groups are those of `ServiceOptions`;
 * everything is turned into plain option values, so the core never touches the file system.
 */
const text = (name: string) => v.string(`${name} must be a string`);
const number = (name: string) => v.number(`${name} must be a number`);
const positive = (name: string) => v.pipe(number(name), v.minValue(0.001, `${name} must be positive`));
const count = (name: string) => v.pipe(number(name), v.integer(`${name} must be an integer`), v.minValue(1, `${name} must be at least 1`));
const twoFactorKey = v.pipe(v.string('twoFactor.key must be a string'), v.minLength(32, 'twoFactor.key must be at least 32 characters'));
const group = <T extends v.ObjectEntries>(name: string, entries: T) => v.optional(v.strictObject(entries, `${name} must be a mapping`));

const ConfigSchema = v.strictObject({
  port: v.optional(v.pipe(number('port'), v.integer('port must be an integer'), v.minValue(0), v.maxValue(65535))),
  hostname: v.optional(text('hostname')),
  dataFile: v.optional(v.string('dataFile must be a path')),
  databaseName: v.optional(text('databaseName')),
  mount: group('mount', { basePath: v.optional(text('mount.basePath')), alias: v.optional(text('mount.alias')) }),
  appKeys: v.optional(v.array(v.string(), 'appKeys must be a list of strings')),
  trustProxy: v.optional(v.boolean('trustProxy must be true or false')),
  cors: group('cors', {
    origins: v.array(v.string(), 'cors.origins must be a list of origins such as https://app.example.com'),
    maxAgeSeconds: v.optional(v.pipe(number('cors.maxAgeSeconds'), v.integer('cors.maxAgeSeconds must be an integer'), v.minValue(0))),
  }),
  serviceCheck: group('serviceCheck', {
    applicationName: v.optional(text('serviceCheck.applicationName')),
    applicationVersion: v.optional(text('serviceCheck.applicationVersion')),
    timeoutMs: v.optional(positive('serviceCheck.timeoutMs')),
  }),
  maxBodyBytes: v.optional(count('maxBodyBytes')),
  session: group('session', {
    idleTimeoutMinutes: v.optional(positive('session.idleTimeoutMinutes')),
    absoluteTimeoutHours: v.optional(positive('session.absoluteTimeoutHours')),
    jwtSecret: v.optional(v.pipe(text('session.jwtSecret'), v.minLength(32, 'session.jwtSecret must be at least 32 characters'))),
  }),
  loginLimit: group('loginLimit', {
    perUser: v.optional(number('loginLimit.perUser')),
    perAddress: v.optional(number('loginLimit.perAddress')),
    windowMinutes: v.optional(number('loginLimit.windowMinutes')),
  }),
  twoFactor: group('twoFactor', {
    policies: v.optional(
      v.record(v.string(), v.picklist(['optional', 'forced'], 'twoFactor.policies: each policy must be optional or forced'), 'twoFactor.policies must map application names to optional or forced'),
    ),
    key: v.optional(v.union([twoFactorKey, v.pipe(v.array(twoFactorKey), v.minLength(1))], 'twoFactor.key must be a string of at least 32 characters, or a list of them')),
    issuer: v.optional(text('twoFactor.issuer')),
  }),
  users: group('users', { className: v.optional(text('users.className')), passwordIterations: v.optional(count('users.passwordIterations')) }),
  customLogin: group('customLogin', { className: v.optional(text('customLogin.className')) }),
  secure: group('secure', {
    serverKey: v.optional(v.string('secure.serverKey must be a PEM string')),
    serverKeyFile: v.optional(v.string('secure.serverKeyFile must be a path')),
  }),
  externalLogin: group('externalLogin', {
    publicUrl: v.optional(v.string('externalLogin.publicUrl must be a URL')),
    providers: v.optional(
      v.array(
        v.strictObject({
          name: text('externalLogin.providers[].name'),
          endpoints: v.optional(v.record(v.string(), v.string(), 'externalLogin.providers[].endpoints must map endpoint names to URLs')),
        }),
        'externalLogin.providers must be a list of {name: ...}',
      ),
    ),
  }),
  objects: group('objects', {
    serializationDepth: v.optional(v.pipe(number('objects.serializationDepth'), v.integer(), v.minValue(0))),
    internalClasses: v.optional(v.array(v.string(), 'objects.internalClasses must be a list of class names')),
  }),
  caches: group('caches', {
    sessions: v.optional(count('caches.sessions')),
    secureSessions: v.optional(count('caches.secureSessions')),
    storeTimes: v.optional(count('caches.storeTimes')),
  }),
});
export type FileConfig = v.InferOutput<typeof ConfigSchema>;

/** The standalone server's configuration: service options plus where to listen. */
export interface HostConfig {
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
}

/** Each variable and the option (group, name) it sets, with its conversion. */
const ENV: Record<string, [string[], (value: string) => unknown]> = {
  ODBREST_PORT: [['port'], Number],
  PORT: [['port'], Number],
  ODBREST_HOSTNAME: [['hostname'], String],
  ODBREST_DATA: [['dataFile'], String],
  ODBREST_DATABASE_NAME: [['databaseName'], String],
  ODBREST_BASE_PATH: [['mount', 'basePath'], String],
  ODBREST_ALIAS: [['mount', 'alias'], String],
  ODBREST_APP_KEYS: [['appKeys'], (x) => x.split(',').map((key) => key.trim()).filter(Boolean)],
  ODBREST_JWT_SECRET: [['session', 'jwtSecret'], String],
  ODBREST_IDLE_MINUTES: [['session', 'idleTimeoutMinutes'], Number],
  ODBREST_ABSOLUTE_HOURS: [['session', 'absoluteTimeoutHours'], Number],
  ODBREST_MAX_BODY_BYTES: [['maxBodyBytes'], Number],
  // Anything but true/1/false/0 goes through as a string, so the schema's trustProxy message names it.
  ODBREST_TRUST_PROXY: [['trustProxy'], (x) => (x === 'true' || x === '1' ? true : x === 'false' || x === '0' ? false : x)],
  ODBREST_CORS_ORIGINS: [['cors', 'origins'], (x) => x.split(',').map((origin) => origin.trim()).filter(Boolean)],
  ODBREST_PUBLIC_URL: [['externalLogin', 'publicUrl'], String],
  ODBREST_SERVER_KEY_FILE: [['secure', 'serverKeyFile'], String],
  ODBREST_SERVER_KEY: [['secure', 'serverKey'], String],
  ODBREST_2FA_KEY: [['twoFactor', 'key'], String],
};

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
  if (!result.success) {
    const issue = result.issues[0];
    const where = issue.path?.map((item) => String(item.key)).join('.') ?? 'config';
    throw new Error(`invalid configuration (${where}): ${issue.message}`);
  }
  const file = result.output;
  const minutes = (value: number | undefined, ms: number) => (value === undefined ? undefined : value * ms);
  const options: ServiceOptions = {
    databaseName: file.databaseName,
    mount: file.mount,
    appKeys: file.appKeys,
    trustProxy: file.trustProxy,
    cors: file.cors,
    serviceCheck: file.serviceCheck,
    maxBodyBytes: file.maxBodyBytes,
    session: file.session && {
      jwtSecret: file.session.jwtSecret,
      idleTimeoutMs: minutes(file.session.idleTimeoutMinutes, 60_000),
      absoluteTimeoutMs: minutes(file.session.absoluteTimeoutHours, 3_600_000),
    },
    loginLimit: file.loginLimit && {
      perUser: file.loginLimit.perUser,
      perAddress: file.loginLimit.perAddress,
      windowMs: minutes(file.loginLimit.windowMinutes, 60_000),
    },
    twoFactor: file.twoFactor,
    users: file.users,
    customLogin: file.customLogin,
    secure: {
      serverKey: readServerKey(file.secure, baseDir),
      // Native AES-CTR and HMAC for the secure transport (the core's default is pure JS).
      symmetricCrypto: nodeCrypto,
    },
    externalLogin: {
      ...file.externalLogin,
      // Apple's key file (keyPath in the provider entry), relative paths from the config file's folder.
      readFile: (path) => readFile(resolve(baseDir, path), 'utf8'),
    },
    objects: file.objects,
    caches: file.caches,
  };
  if (file.dataFile) options.data = readSeedFile(resolve(baseDir, file.dataFile));
  return { options, port: file.port ?? 8080, hostname: file.hostname, file, baseDir };
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
