import { parseArgs } from 'node:util';
import { loadConfig, openConfig } from '../../adapters/node.js';
import { createService } from '../index.js';
import { storedSchemas } from '../objects/model/index.js';
import { MemoryBlobStore } from '../storage/memory-blobs.js';
import { progressReporter, type ProgressOutput } from './progress.js';
import { DEFAULT_MAX_LINE_BYTES, exportStores, ImportError, importStores, type TransferProgress } from './transfer.js';
import { UsageError } from './serve.js';

export const EXPORT_USAGE = `usage: odbrest export --out DIR [--config FILE] [--json]
  writes every object of the configured stores to DIR/odbrest-export.jsonl and file bytes to DIR/files/
  Progress on standard error: a bar on a terminal, else a line per 10%. --json: no progress, and a
  summary on standard output: {"objects","files","bytes","seconds"}`;
export const IMPORT_USAGE = `usage: odbrest import --from DIR [--config FILE] [--max-line-bytes N] [--json]
  checks the export in DIR whole, then writes it into the configured stores (a durable store: file: or postgres://)
  Progress on standard error: a bar on a terminal, else a line per 10%. --json: no progress, and a
  summary on standard output: {"objects","written","skipped","files","bytes","refused","seconds"}
  ("refused": null, or {"line","message"} for an export refused before anything was written; exit 1)`;

/** A failure whose summary (JSON) goes to standard output before the exit 1. */
export class JsonFailure extends Error {}

function flags(args: string[], names: string[], usage: string): Record<string, string | boolean | undefined> {
  try {
    const options = { ...Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])), json: { type: 'boolean' as const } };
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0]!, usage);
  }
}

/** Opens the configured stores as the service would (seed data only for an export of an in-memory store). */
async function openStores(config: string | undefined, env: Record<string, string | undefined>, forImport: boolean) {
  const host = loadConfig(config === undefined ? env : { ...env, ODBREST_CONFIG: config });
  // the API reference page is the server's alone
  const options = await openConfig({ ...host, file: { ...host.file, apiReference: undefined } });
  if (forImport && options.store === undefined) throw new UsageError('import needs a durable store (store: file:... or postgres://...): an in-memory one is gone on exit', IMPORT_USAGE);
  const blobs = options.files?.blobs ?? new MemoryBlobStore();
  const service = createService({ ...options, data: forImport ? undefined : options.data, files: { ...options.files, blobs } });
  await service.ready;
  const fileClass = options.files?.className ?? 'Document';
  // an import's objects are checked as the service's writes are: against the host's declarations and the run-time ones in the store
  const schemas = await storedSchemas(service.store, options.schema, fileClass);
  return { service, stores: { store: service.store, blobs, fileClass, schemas } };
}

/** Progress on standard error, or none with --json. */
const reporter = (verb: string, json: boolean, output: ProgressOutput) => (json ? { update: () => {}, done: () => {} } : progressReporter(verb, output));
const secondsSince = (started: number) => Math.round(performance.now() - started) / 1000;

export async function exportCommand(args: string[], env: Record<string, string | undefined> = process.env, output: ProgressOutput = process.stderr): Promise<string> {
  const { out, config, json = false } = flags(args, ['out', 'config'], EXPORT_USAGE) as { out?: string; config?: string; json?: boolean };
  if (!out) throw new UsageError('export needs --out DIR', EXPORT_USAGE);
  const started = performance.now();
  const { service, stores } = await openStores(config, env, false);
  const progress = reporter('export', json, output);
  try {
    const { objects, files, bytes } = await exportStores(stores, out, progress.update);
    progress.done();
    if (json) return JSON.stringify({ objects, files, bytes, seconds: secondsSince(started) });
    return `exported ${objects} objects and ${files} files to ${out}`;
  } finally {
    await service.close();
  }
}

export async function importCommand(args: string[], env: Record<string, string | undefined> = process.env, output: ProgressOutput = process.stderr): Promise<string> {
  const values = flags(args, ['from', 'config', 'max-line-bytes'], IMPORT_USAGE) as { from?: string; config?: string; 'max-line-bytes'?: string; json?: boolean };
  const { from, config, 'max-line-bytes': maxLine, json = false } = values;
  if (!from) throw new UsageError('import needs --from DIR', IMPORT_USAGE);
  const maxLineBytes = maxLine === undefined ? DEFAULT_MAX_LINE_BYTES : Number(maxLine);
  if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 1024) throw new UsageError('--max-line-bytes must be a whole number of at least 1024', IMPORT_USAGE);
  const started = performance.now();
  const { service, stores } = await openStores(config, env, true);
  const progress = reporter('import', json, output);
  let last: TransferProgress = { objects: 0, bytes: 0, totalObjects: 0 };
  try {
    const { written, skipped, files } = await importStores(stores, from, {
      maxLineBytes,
      onProgress: (step) => progress.update((last = step)),
    });
    progress.done();
    if (json) return JSON.stringify({ objects: last.objects, written, skipped, files, bytes: last.bytes, refused: null, seconds: secondsSince(started) });
    return `imported ${written} objects and ${files} files from ${from}${skipped > 0 ? ` (${skipped} were already there)` : ''}`;
  } catch (error) {
    // with --json a refused export is a summary too (and exit 1), so a script reads one shape
    if (json && error instanceof ImportError) throw new JsonFailure(JSON.stringify({ objects: 0, written: 0, skipped: 0, files: 0, bytes: 0, refused: { line: error.line, message: error.message }, seconds: secondsSince(started) }));
    throw error;
  } finally {
    await service.close();
  }
}
