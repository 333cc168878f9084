import { mkdir } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BlobStore, KeyValueStore, Macros, ObjectStore } from '../src/index.js';
import type { FileConfig } from './config-schema.js';

/**
 * What `api-config.yml` names and only an asynchronous step can open: the stores, chosen by URL, and
 * the macro module. The store packages load only when chosen, so `pg` and `ioredis` stay optional.
 */

/** Loads a store subpath; a missing driver package is named with the command that installs it. */
async function load<T>(loading: Promise<T>, option: string, driver: string): Promise<T> {
  try {
    return await loading;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' || (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') {
      throw new Error(`${option} needs the ${driver} package: npm install ${driver}`);
    }
    throw error;
  }
}

/** The folder of a `file:` store URL: `file:./data` (from the config file's folder), `file:/srv/data`, `file:///srv/data`. */
export function fileStoreFolder(url: string, baseDir: string, option = 'store.url'): string {
  const rest = url.slice('file:'.length);
  const path = rest.startsWith('//') ? fileURLToPath(url) : rest;
  if (path === '') throw new Error(`invalid configuration (${option}): file: needs a folder, e.g. file:./data`);
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

/** The object store `store` names; `undefined` for the in-memory default. */
export async function openObjectStore(store: FileConfig['store'], baseDir: string): Promise<ObjectStore | undefined> {
  if (!store || store.url === 'memory') return undefined;
  if (store.url.startsWith('file:')) {
    const folder = fileStoreFolder(store.url, baseDir);
    await mkdir(folder, { recursive: true });
    const { FileObjectStore } = await import('../stores/file-store.js');
    return FileObjectStore.open({ path: join(folder, 'objects.journal') });
  }
  const { PostgresObjectStore } = await load(import('../stores/postgres.js'), 'store: postgres://', 'pg');
  return new PostgresObjectStore({ connectionString: store.url, schema: store.schema, table: store.table, indexedFields: store.indexedFields });
}

/** The blob store `files.blobs` names: a folder of files or PostgreSQL tables; `undefined` for the in-memory default. */
export async function openBlobStore(blobs: NonNullable<FileConfig['files']>['blobs'], baseDir: string): Promise<BlobStore | undefined> {
  if (!blobs || blobs.url === 'memory') return undefined;
  if (blobs.url.startsWith('file:')) {
    const { FolderBlobStore } = await import('../stores/file-store.js');
    return FolderBlobStore.open({ path: fileStoreFolder(blobs.url, baseDir, 'files.blobs.url') });
  }
  const { PostgresBlobStore } = await load(import('../stores/postgres.js'), 'files.blobs: postgres://', 'pg');
  return new PostgresBlobStore({ connectionString: blobs.url, schema: blobs.schema, table: blobs.table });
}

/** The key-value store `kv` names; `undefined` for the in-memory default. */
export async function openKeyValueStore(kv: FileConfig['kv']): Promise<KeyValueStore | undefined> {
  if (!kv || kv.url === 'memory') return undefined;
  const { RedisKeyValueStore } = await load(import('../stores/redis.js'), 'kv: redis://', 'ioredis');
  return new RedisKeyValueStore({ url: kv.url, prefix: kv.prefix });
}

/**
 * The macros (and `xApi_*` hooks) of the module at `path`: its default export, an object of
 * functions, or else its named exports that are functions.
 */
export async function loadMacros(path: string, baseDir: string): Promise<Macros> {
  const file = resolve(baseDir, path);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' ? 'not found' : (error as Error).message;
    throw new Error(`cannot load the macros module ${file}: ${reason}`);
  }
  const given = typeof module.default === 'object' && module.default !== null ? (module.default as Record<string, unknown>) : module;
  const macros: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given)) {
    if (name === 'default' && given === module) continue;
    if (typeof value !== 'function') throw new Error(`macros module ${file}: ${name} must be a function (a macro or an xApi_* hook)`);
    macros[name] = value;
  }
  return macros as Macros;
}
