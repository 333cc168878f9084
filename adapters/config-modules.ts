import { mkdir } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadOptional, type BlobStore, type KeyValueStore, type Macros, type ObjectStore } from '../src/index.js';
import type { FileConfig } from './config-schema.js';

/**
 * What `api-config.yml` names and only an asynchronous step can open: the stores, chosen by URL, and
 * the macro module. The store packages load only when chosen, so `pg` and `ioredis` stay optional.
 */

/** Loads an optional package for the option that needs it, naming a missing one (src/optional-package.ts). */
export const load = loadOptional;

/** The folder of a `file:` store URL: `file:./data` (from the config file's folder), `file:/srv/data`, `file:///srv/data`. */
export function fileStoreFolder(url: string, baseDir: string, option = 'store.url'): string {
  const rest = url.slice('file:'.length);
  const path = rest.startsWith('//') ? fileURLToPath(url) : rest;
  if (path === '') throw new Error(`invalid configuration (${option}): file: needs a folder, e.g. file:./data`);
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

/** The methods a store module's store must have (the optional ones are described in docs/stores.md). */
const REQUIRED = {
  store: ['get', 'getMany', 'find', 'count', 'put', 'delete'],
  kv: ['get', 'set', 'compareAndSet', 'take', 'delete', 'increment', 'ttl', 'expire', 'getAndExpire'],
} as const;

/**
 * The store made by the module at `path` (`store.module`, `kv.module`): its default export, a function
 * of `options` (the group's `options` mapping) answering the store or a promise of it. The store is
 * checked for the interface's required methods, so a wrong module fails at start-up, naming them.
 */
export async function loadStoreModule<T>(option: 'store' | 'kv', path: string, options: Record<string, unknown> | undefined, baseDir: string): Promise<T> {
  const file = resolve(baseDir, path);
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' ? 'not found' : (error as Error).message;
    throw new Error(`cannot load the ${option} module ${file}: ${reason}`);
  }
  const kind = option === 'store' ? 'ObjectStore' : 'KeyValueStore';
  if (typeof module.default !== 'function') throw new Error(`${option} module ${file}: its default export must be a function that makes the ${kind}`);
  const made = (await (module.default as (options: Record<string, unknown>) => unknown)(options ?? {})) as Record<string, unknown> | null;
  const missing = REQUIRED[option].filter((name) => typeof made?.[name] !== 'function');
  if (missing.length > 0) throw new Error(`${option} module ${file}: what its default export made is not ${kind === 'ObjectStore' ? 'an' : 'a'} ${kind} (no ${missing.join(', ')})`);
  return made as T;
}

/** The object store `store` names; `undefined` for the in-memory default. */
export async function openObjectStore(store: FileConfig['store'], baseDir: string): Promise<ObjectStore | undefined> {
  if (store?.module !== undefined) return loadStoreModule<ObjectStore>('store', store.module, store.options, baseDir);
  if (!store?.url || store.url === 'memory') return undefined;
  if (store.url.startsWith('file:')) {
    const folder = fileStoreFolder(store.url, baseDir);
    await mkdir(folder, { recursive: true });
    const { FileObjectStore } = await import('../stores/file-store.js');
    return FileObjectStore.open({ path: join(folder, 'objects.journal') });
  }
  const { PostgresObjectStore } = await load(import('../stores/postgres.js'), 'store: postgres://', 'pg');
  return new PostgresObjectStore({ connectionString: store.url, schema: store.schema, table: store.table, indexedFields: store.indexedFields });
}

/**
 * The blob store `files.blobs` names: a folder of files, PostgreSQL tables or an S3 bucket; `undefined`
 * for the in-memory default. `shared`: several instances use the folder (no lock; the other stores
 * are shared by nature).
 */
export async function openBlobStore(blobs: NonNullable<FileConfig['files']>['blobs'], baseDir: string, { shared = false } = {}): Promise<BlobStore | undefined> {
  if (!blobs || blobs.url === 'memory') return undefined;
  if (blobs.url.startsWith('file:')) {
    const { FolderBlobStore } = await import('../stores/file-store.js');
    return FolderBlobStore.open({ path: fileStoreFolder(blobs.url, baseDir, 'files.blobs.url'), shared });
  }
  if (blobs.url.startsWith('s3://')) {
    const { S3BlobStore } = await import('../stores/blob-s3.js'); // names aws4fetch when it is missing
    const { hostname: bucket, pathname } = new URL(blobs.url);
    return S3BlobStore.open({ bucket, prefix: decodeURIComponent(pathname.slice(1)), endpoint: blobs.endpoint, region: blobs.region, forcePathStyle: blobs.forcePathStyle });
  }
  const { PostgresBlobStore } = await load(import('../stores/postgres.js'), 'files.blobs: postgres://', 'pg');
  return new PostgresBlobStore({ connectionString: blobs.url, schema: blobs.schema, table: blobs.table });
}

/** The key-value store `kv` names; `undefined` for the in-memory default. */
export async function openKeyValueStore(kv: FileConfig['kv'], baseDir: string): Promise<KeyValueStore | undefined> {
  if (kv?.module !== undefined) return loadStoreModule<KeyValueStore>('kv', kv.module, kv.options, baseDir);
  if (!kv?.url || kv.url === 'memory') return undefined;
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
