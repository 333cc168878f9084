#!/usr/bin/env node
import { PACKAGE_VERSION } from '../version.js';
import { CHECK_USAGE, checkCommand } from './check.js';
import { keygen, KEYGEN_USAGE, parseKeygenArgs } from './keygen.js';
import { parseServeArgs, SERVE_USAGE, startServer, UsageError } from './serve.js';
import { EXPORT_USAGE, exportCommand, IMPORT_USAGE, importCommand, JsonFailure } from './transfer-command.js';
import { parseUserArgs, runUserCommand, USER_USAGE } from './user.js';
import { parseTypesArgs, TYPES_USAGE, writeTypes } from './types.js';

/** Set by the build (tsup.config.ts) from package.json. */
const VERSION = PACKAGE_VERSION;

const USAGE = `usage: odbrest serve [--config FILE] [--port N] [--host H] [--log text|json] [--metrics PORT] [--otlp URL]
                            start the service (api-config.yml and ODBREST_* variables; odbrest serve --help)
       odbrest check [--config FILE]
                            check the configuration and say what serve would start, without starting it
       odbrest keygen [--bits 2048] [--out dir]
                            write a secure-login key pair (server-key.pem, server-key.pub.pem)
       odbrest export --out DIR [--config FILE] [--json]
                            write every object and file of the configured stores to DIR
       odbrest import --from DIR [--config FILE] [--json]
                            check an export whole, then write it into the configured stores
       odbrest user add|disable|groups|password|delete NAME ... | odbrest user list
                            administer users in the configured stores (odbrest user --help)
       odbrest types [--config FILE] [--schema MODULE] [--out FILE]
                            write TypeScript types of the declared classes (odbrest types --help)
       odbrest COMMAND --help  that command's usage
       odbrest --help       this text
       odbrest --version    the version`;

export { startServer, type RunningServer } from './serve.js';

/** Each command's own usage, printed by `odbrest COMMAND --help` (or -h, or `odbrest help COMMAND`). */
const COMMAND_USAGE: Record<string, string> = {
  serve: SERVE_USAGE,
  check: CHECK_USAGE,
  keygen: KEYGEN_USAGE,
  export: EXPORT_USAGE,
  import: IMPORT_USAGE,
  user: USER_USAGE,
  types: TYPES_USAGE,
};

const asksHelp = (args: string[]) => args.includes('--help') || args.includes('-h');
const usageOf = (command: string | undefined) => (command !== undefined && Object.hasOwn(COMMAND_USAGE, command) ? COMMAND_USAGE[command] : undefined);

/** Runs one command; answers the exit code, or -1 while a server keeps running. */
async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  const usage = command === undefined ? undefined : command === 'help' ? usageOf(rest[0]) : asksHelp(rest) ? usageOf(command) : undefined;
  if (usage !== undefined) return console.log(usage), 0;
  if (command === 'serve') {
    const flags = parseServeArgs(rest);
    const running = await startServer(flags);
    running.say(`odbrest listening on ${running.url}`);
    if (running.metricsUrl) running.say(`odbrest metrics for Prometheus at ${running.metricsUrl}`);
    if (running.studioUrl) running.say(`odbrest studio, the data browser, at ${running.studioUrl}`);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void running.close().then(() => process.exit(0)));
    return -1;
  }
  if (command === 'check') return console.log(await checkCommand(rest)), 0;
  if (command === 'keygen') {
    const { privateKeyPath, publicKeyPath } = await keygen(parseKeygenArgs(rest));
    console.log(`wrote ${privateKeyPath} (private, give it as serverKeyFile) and ${publicKeyPath}`);
    return 0;
  }
  if (command === 'export') return console.log(await exportCommand(rest)), 0;
  if (command === 'import') return console.log(await importCommand(rest)), 0;
  if (command === 'user') {
    if (rest.length === 0) return console.log(USER_USAGE), 0;
    console.log(await runUserCommand(parseUserArgs(rest)));
    return 0;
  }
  if (command === 'types') {
    const flags = parseTypesArgs(rest);
    const where = await writeTypes(flags);
    if (flags.out !== undefined) console.error(`wrote the types of the declared classes to ${where}`);
    return 0;
  }
  if (command === '--version' || command === '-v' || command === 'version') return console.log(`odbrest ${VERSION}`), 0;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return console.log(USAGE), 0;
  throw new UsageError(`unknown command ${command}`);
}

const invokedDirectly = typeof process !== 'undefined' && /(^|[/\\])(cli\.(c?js|mjs)|odbrest)$/.test(process.argv[1] ?? '');
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => code >= 0 && process.exit(code),
    (error: unknown) => {
      if (error instanceof JsonFailure) return console.log(error.message), process.exit(1);
      console.error(`odbrest: ${error instanceof Error ? error.message : String(error)}`);
      if (error instanceof UsageError) console.error(error.usage ?? USAGE);
      process.exit(error instanceof UsageError ? 2 : 1);
    },
  );
}
