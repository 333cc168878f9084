import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, openConfig, type HostConfig } from '../../adapters/node.js';
import { fileStoreFolder, loadMacros, loadStoreModule } from '../../adapters/config-modules.js';
import { swaggerUiFiles } from '../../adapters/swagger-ui.js';
import { createService } from '../index.js';
import { ApiReference } from '../reference/serve.js';
import { studioPath } from '../studio/serve.js';
import { UsageError } from './serve.js';

export const CHECK_USAGE = `usage: odbrest check [--config FILE] [--store]
  checks the configuration (api-config.yml, ODBREST_CONFIG, ODBREST_* variables) and says what
  odbrest serve would start: stores, studio, API reference, logins, providers. It starts nothing and
  opens no store named by URL; a store module's function is called as serve calls it, to check what
  it makes, and what it made is closed. A wrong configuration exits 1 naming the option.
  --store also opens the configured stores as serve does (a file store held by a running server is
  refused, naming it) and checks what they hold: a stored class declaration the service cannot use
  exits 1 naming the class.`;

export function parseCheckArgs(args: string[]): { config?: string; store?: boolean } {
  try {
    return parseArgs({ args, options: { config: { type: 'string' }, store: { type: 'boolean' } }, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0]!, CHECK_USAGE);
  }
}

/** A store URL as shown: without the password it may carry. */
function shownUrl(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.href;
}

type StoreGroup = { url?: string; module?: string; schema?: string; table?: string; prefix?: string } | undefined;

/** What a store option opens, in words. */
function storeLine(group: StoreGroup, baseDir: string, memory: string): string {
  if (group?.module !== undefined) return `module ${resolve(baseDir, group.module)}`;
  const url = group?.url ?? 'memory';
  if (url === 'memory') return memory;
  if (url.startsWith('file:')) return `the folder ${fileStoreFolder(url, baseDir)}`;
  const where = [group?.schema && `schema ${group.schema}`, group?.table && `table ${group.table}`, group?.prefix && `prefix ${group.prefix}`].filter(Boolean);
  return `${shownUrl(url)}${where.length > 0 ? ` (${where.join(', ')})` : ''}`;
}

/**
 * The modules the configuration names, each there and loadable; a store module's function is called
 * as serve calls it and what it makes must have every method of its interface (a module lacking some
 * passed the check and failed serve), then it is closed.
 */
async function checkModules(config: HostConfig): Promise<void> {
  const { file, baseDir } = config;
  if (file.macros !== undefined) await loadMacros(file.macros, baseDir);
  for (const name of ['store', 'kv'] as const) {
    const group = file[name];
    if (group?.module === undefined) continue;
    const made = await loadStoreModule<{ close?: () => Promise<void> }>(name, group.module, group.options, baseDir).catch((error: Error) => {
      throw new Error(`invalid configuration (${name}.module): ${error.message}`);
    });
    await made.close?.();
  }
  if (file.apiReference) await swaggerUiFiles('apiReference');
}

/**
 * `odbrest check`: the configuration read and checked as `serve` reads it, the service options checked
 * by making a service on in-memory stores (without seed data), and a summary of what would start.
 */
export async function checkCommand(args: string[], env: Record<string, string | undefined> = process.env): Promise<string> {
  const flags = parseCheckArgs(args);
  const config = loadConfig(flags.config === undefined ? env : { ...env, ODBREST_CONFIG: flags.config });
  await checkModules(config);
  const { options, file, baseDir } = config;
  // every check of createService (schema declarations, studio, reference and mount paths, keys, providers)
  // without a store or a port; the failure is the command's message, not a log line
  const reference = file.apiReference ? new ApiReference({ path: file.apiReference === true ? undefined : file.apiReference.path, swaggerUi: { script: '', style: '' } }) : undefined;
  // Provider entries live in the store: with the in-memory one they come from the seed data and are
  // checked; a durable store is not opened, so its entries are left to the start.
  const durable = file.store?.module !== undefined || (file.store?.url ?? 'memory') !== 'memory';
  const providers = file.externalLogin?.providers?.map((provider) => provider.name) ?? [];
  const service = createService({
    ...options,
    data: !durable && providers.length > 0 ? options.data : undefined,
    externalLogin: durable ? { ...options.externalLogin, providers: undefined } : options.externalLogin,
    store: undefined,
    kv: undefined,
    logger: undefined,
    onError: () => {},
  });
  try {
    await service.ready;
  } finally {
    await service.close();
  }
  const mount = `${options.mount?.basePath ?? ''}${options.mount?.alias ? `/${options.mount.alias}` : ''}`;
  const stored = flags.store ? await checkStored(config, mount) : undefined;
  const logins = ['plain (/v1/login)', options.session?.jwtSecret ? 'token (/v2/login, configured key)' : 'token (/v2/login, a key per process)'];
  logins.push(file.secure?.serverKeyFile ? `secure (key ${resolve(baseDir, file.secure.serverKeyFile)})` : file.secure?.serverKey ? 'secure (configured key)' : 'secure (a key generated at start)');
  if (options.passkeys) logins.push(`passkeys (${options.passkeys.rpID})`);
  if (options.twoFactor?.policies) logins.push(`two-factor (${Object.entries(options.twoFactor.policies).map(([app, policy]) => `${app}: ${policy}`).join(', ')})`);

  const lines = [
    `${config.path ?? 'no configuration file (defaults and ODBREST_* variables)'}: valid`,
    `listen         ${file.hostname ?? 'every address'}, port ${config.port}${mount ? `, under ${mount}` : ''}`,
    `objects        ${storeLine(file.store, baseDir, 'memory (gone on exit)')}`,
    `key-value      ${storeLine(file.kv, baseDir, 'memory (this process only)')}`,
    `files          ${storeLine(file.files?.blobs, baseDir, 'memory (gone on exit)')}`,
    `seed data      ${file.dataFile ? `${resolve(baseDir, file.dataFile)} (${options.data?.objects.length ?? 0} objects)` : 'none'}`,
    `macros         ${file.macros ? resolve(baseDir, file.macros) : 'none'}`,
    `studio         ${options.studio ? `${mount}${studioPath(options.studio)}` : 'off'}`,
    `API reference  ${reference ? `${mount}${reference.path}` : 'off'}`,
    `OpenAPI        ${options.openApi === false ? 'off' : `${mount}/openapi.json`}`,
    `logins         ${logins.join(', ')}`,
    `providers      ${providers.length === 0 ? 'none' : `${providers.join(', ')}${durable ? ' (their OAuthProvider entries are read from the store at start)' : ''}`}`,
    `request log    ${file.requestLog === false ? 'off' : `on, standard output, ${file.log?.format ?? 'text'}`}`,
    ...(stored === undefined ? [] : [`stores         ${stored}`]),
  ];
  return lines.join('\n');
}

/**
 * `--store`: the service on the configured stores, as serve makes it (without listening), asked what
 * its readiness check answers (PROTOCOL.md 6.12: a stored declaration that cannot be used is reported
 * there and refuses its class's writes). Throws, naming each such class, when there is one.
 */
async function checkStored(config: HostConfig, mount: string): Promise<string> {
  const service = createService({ ...(await openConfig(config)), data: undefined, logger: undefined, onError: () => {} }); // seeds nothing
  try {
    await service.ready;
    const answer = await service.fetch(new Request(`http://odbrest.check${mount}/_CheckReady`));
    const { status, data } = (await answer.json()) as { status: { statusMessage: string }; data: { Problems?: string[] } };
    if (answer.status !== 200) throw new Error(`the stores do not answer: ${status.statusMessage}`);
    if (data.Problems?.length) throw new Error(`the stores hold what the service cannot use:\n  ${data.Problems.join('\n  ')}`);
    return 'opened and answering; every stored class declaration is usable';
  } finally {
    await service.close();
  }
}
