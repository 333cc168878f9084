import { parseArgs } from 'node:util';
import { loadConfig, openConfig } from '../../adapters/node.js';
import { createService } from '../index.js';
import { MemoryBlobStore } from '../storage/memory-blobs.js';
import { DEFAULT_MAX_LINE_BYTES, exportStores, importStores } from './transfer.js';
import { UsageError } from './serve.js';

export const EXPORT_USAGE = `usage: odbrest export --out DIR [--config FILE]
  writes every object of the configured stores to DIR/odbrest-export.jsonl and file bytes to DIR/files/`;
export const IMPORT_USAGE = `usage: odbrest import --from DIR [--config FILE] [--max-line-bytes N]
  checks the export in DIR whole, then writes it into the configured stores (a durable store: file: or postgres://)`;

function flags(args: string[], names: string[], usage: string): Record<string, string | undefined> {
  try {
    const options = Object.fromEntries(names.map((name) => [name, { type: 'string' as const }]));
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Record<string, string | undefined>;
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
  return { service, stores: { store: service.store, blobs, fileClass: options.files?.className ?? 'Document' } };
}

export async function exportCommand(args: string[], env: Record<string, string | undefined> = process.env): Promise<string> {
  const { out, config } = flags(args, ['out', 'config'], EXPORT_USAGE);
  if (!out) throw new UsageError('export needs --out DIR', EXPORT_USAGE);
  const { service, stores } = await openStores(config, env, false);
  try {
    const { objects, files } = await exportStores(stores, out);
    return `exported ${objects} objects and ${files} files to ${out}`;
  } finally {
    await service.close();
  }
}

export async function importCommand(args: string[], env: Record<string, string | undefined> = process.env): Promise<string> {
  const { from, config, 'max-line-bytes': maxLine } = flags(args, ['from', 'config', 'max-line-bytes'], IMPORT_USAGE);
  if (!from) throw new UsageError('import needs --from DIR', IMPORT_USAGE);
  const maxLineBytes = maxLine === undefined ? DEFAULT_MAX_LINE_BYTES : Number(maxLine);
  if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 1024) throw new UsageError('--max-line-bytes must be a whole number of at least 1024', IMPORT_USAGE);
  const { service, stores } = await openStores(config, env, true);
  try {
    const { written, skipped, files } = await importStores(stores, from, { maxLineBytes });
    return `imported ${written} objects and ${files} files from ${from}${skipped > 0 ? ` (${skipped} were already there)` : ''}`;
  } finally {
    await service.close();
  }
}
