import type { Server } from 'node:http';
import { hostname as machineName } from 'node:os';
import { parseArgs } from 'node:util';
import { createService, type Service } from '../index.js';
import { loadConfig, openConfig, serve } from '../../adapters/node.js';
import { reportToConsole } from '../service-context.js';
import { studioPath } from '../studio/serve.js';
import { exportTelemetry } from './otel.js';

/** A mistake on the command line (exit 2), as against a configuration or start-up failure (exit 1). */
export class UsageError extends Error {
  /** The usage text printed after the message. */
  usage: string | undefined;
  constructor(message: string, usage?: string) {
    super(message);
    this.usage = usage;
  }
}

export const SERVE_USAGE = `usage: odbrest serve [--config FILE] [--port N] [--host H] [--log text|json] [--metrics PORT] [--otlp URL]
  --config FILE   the configuration (default: api-config.yml in the working directory, or ODBREST_CONFIG)
  --port N        the port to listen on (default: the configuration's port, or 8080; 0 picks a free one)
  --host H        the address to listen on (default: every address; 127.0.0.1 for this machine only)
  --log FORMAT    the request log's form: text (default) or json, one pino-style object per line (or log.format)
  --metrics PORT  serve the metrics for Prometheus at http://HOST:PORT/metrics (or ODBREST_METRICS_PORT)
  --otlp URL      export traces and metrics over OTLP/HTTP (JSON) to URL/v1/traces and URL/v1/metrics,
                  e.g. http://localhost:4318 (or ODBREST_OTLP_URL); a client's traceparent is continued
SIGTERM or SIGINT drains: readiness answers 503, requests in flight finish, then the process exits.
Flags win over ODBREST_* variables, which win over the file.`;

export interface ServeFlags {
  config?: string;
  port?: number;
  host?: string;
  /** The Prometheus endpoint's port. */
  metrics?: number;
  /** The request log's form. */
  log?: 'text' | 'json';
  /** The OTLP/HTTP receiver's base URL. */
  otlp?: string;
}

/** Parses the flags of `odbrest serve`; a flag it does not know is a `UsageError` naming it. */
export function parseServeArgs(args: string[]): ServeFlags {
  let values: { config?: string; port?: string; host?: string; metrics?: string; log?: string; otlp?: string };
  try {
    ({ values } = parseArgs({
      args,
      options: { config: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, metrics: { type: 'string' }, log: { type: 'string' }, otlp: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    const flag = /'([^' ]+)/.exec((error as Error).message)?.[1]; // the flag or argument the message quotes
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new UsageError(`${flag ?? 'a flag'} needs a value`, SERVE_USAGE);
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw new UsageError(`serve takes no argument ${flag ?? ''}`, SERVE_USAGE);
    throw new UsageError(`unknown flag ${flag ?? ''} for serve`, SERVE_USAGE);
  }
  if (values.log !== undefined && values.log !== 'text' && values.log !== 'json') throw new UsageError('--log must be text or json', SERVE_USAGE);
  return { config: values.config, port: portFlag('--port', values.port), host: values.host, metrics: portFlag('--metrics', values.metrics), log: values.log, otlp: otlpFlag('--otlp', values.otlp) };
}

/** An OTLP/HTTP receiver's base URL: http or https. */
function otlpFlag(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) throw new UsageError(`${flag} must be an http:// or https:// URL, e.g. http://localhost:4318`, SERVE_USAGE);
  return value;
}

function portFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new UsageError(`${flag} must be a whole number from 0 to 65535`, SERVE_USAGE);
  return port;
}

export interface RunningServer {
  url: string;
  service: Service;
  server: Server;
  /** The Prometheus endpoint, with `--metrics`. */
  metricsUrl?: string;
  /** The studio's page, when `studio` is on (docs/studio.md). */
  studioUrl?: string;
  /** The form of the log on standard output: with `json`, every line the server prints is one pino-style JSON object. */
  log: 'text' | 'json';
  /** Prints an operator's line in the log's form (`level` 30 info, 40 warning). */
  say(message: string, level?: number): void;
  /** Drains (readiness 503, event streams told to reconnect), stops accepting, waits for requests in flight, closes the stores. */
  close(): Promise<void>;
}

/** Why a server could not listen, in one line. */
function listenFailure(error: NodeJS.ErrnoException, port: number, host: string | undefined): Error {
  if (error.code === 'EADDRINUSE') return new Error(`port ${port} is already in use`);
  if (error.code === 'EACCES') return new Error(`no permission to listen on port ${port}`);
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') return new Error(`cannot listen on host ${host}: no such address on this machine`);
  return error;
}

/**
 * Starts the service the configuration describes: `flags` over ODBREST_* variables over the file.
 * `notice` receives the lines meant for the operator (an empty in-memory database).
 */
export async function startServer(
  flags: ServeFlags = {},
  env: Record<string, string | undefined> = process.env,
  notice?: (line: string) => void,
): Promise<RunningServer> {
  const given = { ...env };
  if (flags.config !== undefined) given.ODBREST_CONFIG = flags.config;
  if (flags.log !== undefined) given.ODBREST_LOG_FORMAT = flags.log;
  const config = loadConfig(given);
  const log = config.file.log?.format === 'json' ? 'json' : 'text';
  const bindings = { pid: process.pid, hostname: machineName() };
  const say = (message: string, level = 30) => console.log(log === 'json' ? JSON.stringify({ level, time: Date.now(), ...bindings, msg: message }) : message);
  const warn = notice ?? (log === 'json' ? (line: string) => say(line, 40) : (line: string) => console.error(line));
  const port = flags.port ?? config.port;
  const hostname = flags.host ?? config.hostname;
  const metricsPort = flags.metrics ?? (env.ODBREST_METRICS_PORT === undefined ? undefined : portFlag('ODBREST_METRICS_PORT', env.ODBREST_METRICS_PORT));
  const otlp = flags.otlp ?? otlpFlag('ODBREST_OTLP_URL', env.ODBREST_OTLP_URL || undefined);
  const exported = await exportTelemetry({ metricsPort, host: hostname, otlp });
  const options = await openConfig(config);
  // what goes wrong while starting is said once, by the failure line the caller prints: held until started
  const report = options.onError ?? reportToConsole;
  let held: Parameters<typeof report>[] | undefined = [];
  options.onError = (...args) => (held ? held.push(args) : report(...args));
  const service = createService(options);
  let server: Server;
  try {
    await service.ready;
    for (const args of held) report(...args);
    held = undefined;
    server = await serve(service, { port, hostname });
  } catch (error) {
    await service.close();
    await exported?.close();
    throw listenFailure(error as NodeJS.ErrnoException, port, hostname);
  }
  if (config.file.store?.module === undefined && (config.file.store?.url ?? 'memory') === 'memory' && !config.file.dataFile) {
    warn('odbrest: serving an empty in-memory database, gone on exit; choose store: and dataFile: in api-config.yml (docs/operations.md, "Options")');
  }
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const host = hostname === undefined || hostname === '0.0.0.0' || hostname === '::' ? 'localhost' : hostname.includes(':') ? `[${hostname}]` : hostname;
  const mount = config.options.mount;
  const url = `http://${host}:${bound}${mount?.basePath ?? ''}${mount?.alias ? `/${mount.alias}` : ''}`;
  const studio = config.options.studio;
  return {
    url,
    service,
    server,
    log,
    say,
    metricsUrl: exported?.metricsUrl,
    studioUrl: studio ? url + studioPath(studio) : undefined,
    close: () =>
      new Promise<void>((resolve) => {
        service.drain();
        // stops accepting; calls back once the connections of requests in flight have closed
        server.close(() => void service.close().then(() => exported?.close()).then(() => resolve()));
        server.closeIdleConnections();
      }),
  };
}
