#!/usr/bin/env node
import { PACKAGE_VERSION } from '../version.js';
import { keygen, parseKeygenArgs } from './keygen.js';
import { parseServeArgs, SERVE_USAGE, startServer, UsageError } from './serve.js';
import { exportCommand, importCommand } from './transfer-command.js';
import { parseUserArgs, runUserCommand, USER_USAGE } from './user.js';
import { parseTypesArgs, TYPES_USAGE, writeTypes } from './types.js';

/** Set by the build (tsup.config.ts) from package.json. */
const VERSION = PACKAGE_VERSION;

const USAGE = `usage: odbrest serve [--config FILE] [--port N] [--host H] [--metrics PORT]
                            start the service (api-config.yml and ODBREST_* variables; odbrest serve --help)
       odbrest keygen [--bits 2048] [--out dir]
                            write a secure-login key pair (server-key.pem, server-key.pub.pem)
       odbrest export --out DIR [--config FILE]
                            write every object and file of the configured stores to DIR
       odbrest import --from DIR [--config FILE]
                            check an export whole, then write it into the configured stores
       odbrest user add|disable|groups|password NAME ...
                            administer users in the configured stores (odbrest user --help)
       odbrest types [--config FILE] [--schema MODULE] [--out FILE]
                            write TypeScript types of the declared classes (odbrest types --help)
       odbrest --help       this text
       odbrest --version    the version`;

export { startServer, type RunningServer } from './serve.js';

/** Runs one command; answers the exit code, or -1 while a server keeps running. */
async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === 'serve') {
    const flags = parseServeArgs(rest);
    if (flags.help) return console.log(SERVE_USAGE), 0;
    const running = await startServer(flags);
    console.log(`odbrest listening on ${running.url}`);
    if (running.metricsUrl) console.log(`odbrest metrics for Prometheus at ${running.metricsUrl}`);
    if (running.studioUrl) console.log(`odbrest studio, the data browser, at ${running.studioUrl}`);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void running.close().then(() => process.exit(0)));
    return -1;
  }
  if (command === 'keygen') {
    if (rest.includes('--help') || rest.includes('-h')) return console.log(USAGE.split('\n').slice(2, 4).join('\n').replace(/^\s+/, 'usage: ')), 0;
    const { privateKeyPath, publicKeyPath } = await keygen(parseKeygenArgs(rest));
    console.log(`wrote ${privateKeyPath} (private, give it as serverKeyFile) and ${publicKeyPath}`);
    return 0;
  }
  if (command === 'export') return console.log(await exportCommand(rest)), 0;
  if (command === 'import') return console.log(await importCommand(rest)), 0;
  if (command === 'user') {
    if (rest.length === 0 || rest.includes('--help') || rest.includes('-h')) return console.log(USER_USAGE), 0;
    console.log(await runUserCommand(parseUserArgs(rest)));
    return 0;
  }
  if (command === 'types') {
    const flags = parseTypesArgs(rest);
    if (flags.help) return console.log(TYPES_USAGE), 0;
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
      console.error(`odbrest: ${error instanceof Error ? error.message : String(error)}`);
      if (error instanceof UsageError) console.error(error.usage ?? USAGE);
      process.exit(error instanceof UsageError ? 2 : 1);
    },
  );
}
