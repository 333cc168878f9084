import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import * as v from 'valibot';
import { parse as parseYaml } from 'yaml';
import { nodeCrypto } from '../../adapters/node-crypto.js';
import type { ServiceOptions } from '../options.js';
import type { SeedData } from '../storage/seed.js';

/**
 * Host configuration for the standalone server: `api-config.yml` (or the file named by
 * `ODBREST_CONFIG`), then environment variables, which win. Everything here is turned into plain
 * `ServiceOptions` values; the core never touches the file system.
 */
const ConfigSchema = v.strictObject({
  port: v.optional(v.pipe(v.number('port must be a number'), v.integer('port must be an integer'), v.minValue(0), v.maxValue(65535))),
  hostname: v.optional(v.string('hostname must be a string')),
  dataFile: v.optional(v.string('dataFile must be a path')),
  databaseName: v.optional(v.string('databaseName must be a string')),
  basePath: v.optional(v.string('basePath must be a string')),
  alias: v.optional(v.string('alias must be a string')),
  appKeys: v.optional(v.array(v.string(), 'appKeys must be a list of strings')),
  jwtSecret: v.optional(v.pipe(v.string('jwtSecret must be a string'), v.minLength(32, 'jwtSecret must be at least 32 characters'))),
  idleTimeoutMinutes: v.optional(v.pipe(v.number('idleTimeoutMinutes must be a number'), v.minValue(0.01))),
  absoluteTimeoutHours: v.optional(v.pipe(v.number('absoluteTimeoutHours must be a number'), v.minValue(0.001))),
  maxBodyBytes: v.optional(v.pipe(v.number('maxBodyBytes must be a number'), v.integer(), v.minValue(1))),
  serializationDepth: v.optional(v.pipe(v.number('serializationDepth must be a number'), v.integer(), v.minValue(0))),
  trustProxy: v.optional(v.boolean('trustProxy must be true or false')),
  publicUrl: v.optional(v.string('publicUrl must be a URL')),
  loginLimit: v.optional(
    v.strictObject({
      perUser: v.optional(v.number('loginLimit.perUser must be a number')),
      perAddress: v.optional(v.number('loginLimit.perAddress must be a number')),
      windowMinutes: v.optional(v.number('loginLimit.windowMinutes must be a number')),
    }),
  ),
  oAuthProviders: v.optional(
    v.array(
      v.strictObject({
        name: v.string('oAuthProviders[].name must be a string'),
        endpoints: v.optional(v.record(v.string(), v.string(), 'oAuthProviders[].endpoints must map endpoint names to URLs')),
      }),
      'oAuthProviders must be a list of {name: ...}',
    ),
  ),
  serverKey: v.optional(v.string('serverKey must be a PEM string')),
  serverKeyFile: v.optional(v.string('serverKeyFile must be a path')),
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
  /** Directory relative paths in the config file are resolved against (`options.readFile` uses it too). */
  baseDir: string;
}

const ENV: Record<string, (value: string) => [keyof FileConfig, unknown]> = {
  ODBREST_PORT: (x) => ['port', Number(x)],
  PORT: (x) => ['port', Number(x)],
  ODBREST_HOSTNAME: (x) => ['hostname', x],
  ODBREST_DATA: (x) => ['dataFile', x],
  ODBREST_DATABASE_NAME: (x) => ['databaseName', x],
  ODBREST_BASE_PATH: (x) => ['basePath', x],
  ODBREST_ALIAS: (x) => ['alias', x],
  ODBREST_APP_KEYS: (x) => ['appKeys', x.split(',').map((key) => key.trim()).filter(Boolean)],
  ODBREST_JWT_SECRET: (x) => ['jwtSecret', x],
  ODBREST_IDLE_MINUTES: (x) => ['idleTimeoutMinutes', Number(x)],
  ODBREST_ABSOLUTE_HOURS: (x) => ['absoluteTimeoutHours', Number(x)],
  ODBREST_MAX_BODY_BYTES: (x) => ['maxBodyBytes', Number(x)],
  // Anything but true/1/false/0 goes through as a string, so the schema's trustProxy message names it.
  ODBREST_TRUST_PROXY: (x) => ['trustProxy', x === 'true' || x === '1' ? true : x === 'false' || x === '0' ? false : x],
  ODBREST_PUBLIC_URL: (x) => ['publicUrl', x],
  ODBREST_SERVER_KEY_FILE: (x) => ['serverKeyFile', x],
  ODBREST_SERVER_KEY: (x) => ['serverKey', x],
};

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
  if (env.ODBREST_SERVER_KEY || env.ODBREST_SERVER_KEY_FILE) {
    delete raw.serverKey;
    delete raw.serverKeyFile;
  }
  for (const [name, toEntry] of Object.entries(ENV)) {
    const value = env[name];
    if (value !== undefined && value !== '') {
      const [key, converted] = toEntry(value);
      raw[key] = converted;
    }
  }
  const result = v.safeParse(ConfigSchema, raw);
  if (!result.success) {
    const issue = result.issues[0];
    const where = issue.path?.map((item) => String(item.key)).join('.') ?? 'config';
    throw new Error(`invalid configuration (${where}): ${issue.message}`);
  }
  const file = result.output;
  const options: ServiceOptions = {
    databaseName: file.databaseName,
    basePath: file.basePath,
    alias: file.alias,
    appKeys: file.appKeys,
    jwtSecret: file.jwtSecret,
    idleTimeoutMs: file.idleTimeoutMinutes === undefined ? undefined : file.idleTimeoutMinutes * 60_000,
    absoluteTimeoutMs: file.absoluteTimeoutHours === undefined ? undefined : file.absoluteTimeoutHours * 3_600_000,
    maxBodyBytes: file.maxBodyBytes,
    serializationDepth: file.serializationDepth,
    trustProxy: file.trustProxy,
    publicUrl: file.publicUrl,
    oAuthProviders: file.oAuthProviders,
    // Apple's key file (keyPath in the provider entry), relative paths from the config file's folder.
    readFile: (path) => readFile(resolve(baseDir, path), 'utf8'),
    // Native AES-CTR and HMAC for the secure transport (the core's default is pure JS).
    symmetricCrypto: nodeCrypto,
    loginLimit: file.loginLimit && {
      perUser: file.loginLimit.perUser,
      perAddress: file.loginLimit.perAddress,
      windowMs: file.loginLimit.windowMinutes === undefined ? undefined : file.loginLimit.windowMinutes * 60_000,
    },
  };
  if (file.dataFile) options.data = readSeedFile(resolve(baseDir, file.dataFile));
  options.serverKey = readServerKey(file, baseDir);
  return { options, port: file.port ?? 8080, hostname: file.hostname, file, baseDir };
}

/** The secure-login key as a PEM value: given inline (`serverKey`) or read from `serverKeyFile`. */
function readServerKey(file: FileConfig, baseDir: string): string | undefined {
  if (file.serverKey !== undefined && file.serverKeyFile !== undefined) {
    throw new Error('invalid configuration: give serverKey or serverKeyFile, not both');
  }
  if (file.serverKeyFile === undefined) return file.serverKey;
  const path = resolve(baseDir, file.serverKeyFile);
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
