#!/usr/bin/env node
import { createService } from '../index.js';
import { loadConfig, serve } from '../../adapters/node.js';
import { keygen, parseKeygenArgs } from './keygen.js';

const USAGE = `usage: odbrest serve        start the service (api-config.yml and ODBREST_* variables)
       odbrest keygen [--bits 2048] [--out dir]
                            write a secure-login key pair (server-key.pem, server-key.pub.pem)
       odbrest help         this text`;

/** Starts the service from the host configuration; returns the listening address. */
export async function runServer(env: Record<string, string | undefined> = process.env): Promise<{ url: string; close(): Promise<void> }> {
  const config = loadConfig(env);
  const service = createService(config.options);
  await service.ready;
  const server = await serve(service, { port: config.port, hostname: config.hostname });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  return {
    url: `http://localhost:${port}${config.options.mount?.basePath ?? ''}${config.options.mount?.alias ? `/${config.options.mount.alias}` : ''}`,
    close: () => new Promise<void>((resolve) => server.close(() => service.close().then(() => resolve()))),
  };
}

async function main(args: string[]): Promise<number> {
  const [command] = args;
  if (command === 'serve') {
    const { url } = await runServer();
    console.log(`odbrest listening on ${url}`);
    return -1; // keep running
  }
  if (command === 'keygen') {
    const { privateKeyPath, publicKeyPath } = await keygen(parseKeygenArgs(args.slice(1)));
    console.log(`wrote ${privateKeyPath} (private, give it as serverKeyFile) and ${publicKeyPath}`);
    return 0;
  }
  console.log(USAGE);
  return command === undefined || command === 'help' ? 0 : 2;
}

const invokedDirectly = typeof process !== 'undefined' && /(^|[/\\])(cli\.(c?js|mjs)|odbrest)$/.test(process.argv[1] ?? '');
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => code >= 0 && process.exit(code),
    (error: unknown) => {
      console.error(`odbrest: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
