/**
 * `odbrest export` and `odbrest import` (issue 29): every object of the configured stores (users,
 * provider entries and recycled objects are objects too) as JSON Lines, with the bytes of file objects
 * beside them, so memory -> file -> PostgreSQL is two commands. Ids, store times and references are
 * kept exactly: a line holds the object as the store holds it (`$ref`/`$set` references, `_` fields
 * such as password hashes included, so an export is as secret as the database).
 *
 * The folder: `odbrest-export.jsonl` and `files/<objectId>`. The first line is a header, the last a
 * trailer with the counts, so a truncated export is recognised. Memory stays bounded: objects are read
 * and written a page at a time, bytes streamed.
 *
 * Import is all or nothing before it writes: the whole export is checked first (every line's shape,
 * duplicate ids, references to objects neither in the export nor in the target, the trailer, each
 * file's size, objects the target holds in another version, objects a write would refuse under the
 * target's class declarations, the host's and those made at run time: PROTOCOL.md 6.8, 6.12), and any
 * problem is refused with its line number while the target is unchanged. Objects are then written a page at a time (500, or fewer for
 * long lines), each page in one all-or-nothing step where the store has `putMany` (PostgreSQL: one
 * transaction). Should the target fail while writing (a lost connection), the pages written so far stay
 * and the same import run again resumes: objects already there in the exported version are skipped.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { ClassSchemas } from '../objects/model/index.js';
import { withoutInternal } from '../objects/names.js';
import type { BlobStore } from '../storage/blobs.js';
import { isRef, isSet, type Fields, type FieldValue, type ObjectInput, type ObjectStore, type StoredObject } from '../storage/types.js';

export const EXPORT_FILE = 'odbrest-export.jsonl';
const FILES_DIR = 'files';
const FORMAT = 'odbrest-export';
const VERSION = 1;
const PAGE = 500;
/** Text of the lines an import holds at once (the long lines of a page would otherwise add up). */
const BATCH_BYTES = 16 * 1024 * 1024;
/** Longest line an import reads (a file object's bytes are never in a line). */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;
const ID = /^[A-Za-z0-9_-]{1,128}$/;
const CLASS = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** One object as a line of the export. */
interface ObjectLine {
  id: string;
  className: string;
  storeTime: number;
  fields: Fields;
  /** Present for a file object whose bytes are in `files/<id>`. */
  blob?: { size: number };
}

export interface TransferStores {
  store: ObjectStore;
  blobs: BlobStore;
  /** The file class (`files.className`): its objects' bytes are exported beside them. */
  fileClass: string;
}

/**
 * How far an export or import is: objects and bytes (object lines and file bytes) so far, and the
 * objects in all (an import counts them while it checks the export, before it writes).
 */
export interface TransferProgress {
  objects: number;
  bytes: number;
  totalObjects: number;
}

/** A refusal of an import, naming the line at fault (0: the export as a whole). */
export class ImportError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(line > 0 ? `line ${line}: ${message}` : message);
  }
}

/** Writes the whole store to `dir`; the export file appears only once complete. Answers the counts. */
export async function exportStores({ store, blobs, fileClass }: TransferStores, dir: string, onProgress: (progress: TransferProgress) => void = () => {}): Promise<{ objects: number; files: number; bytes: number }> {
  if (!store.classNames) throw new Error('this object store cannot list its classes, so it cannot be exported');
  const classNames = (await store.classNames()).sort();
  const totalObjects = (await Promise.all(classNames.map((className) => store.count(className)))).reduce((sum, n) => sum + n, 0);
  let bytes = 0;
  await mkdir(join(dir, FILES_DIR), { recursive: true });
  const partial = join(dir, `${EXPORT_FILE}.partial`);
  const out = createWriteStream(partial, { encoding: 'utf8' });
  const write = (line: unknown) => writeLine(out, JSON.stringify(line));
  let objects = 0;
  let files = 0;
  try {
    await write({ format: FORMAT, version: VERSION });
    for (const className of classNames) {
      for (let offset = 0; ; offset += PAGE) {
        const page = (await store.find({ className, offset, limit: PAGE })).objects;
        for (const object of page) {
          const line: ObjectLine = { id: object.id, className, storeTime: object.storeTime, fields: object.fields };
          if (className === fileClass) {
            const size = await exportBytes(blobs, object.id, join(dir, FILES_DIR, object.id));
            if (size !== undefined) (line.blob = { size }), files++, (bytes += size);
          }
          const text = JSON.stringify(line);
          await writeLine(out, text);
          objects++;
          bytes += Buffer.byteLength(text) + 1;
          onProgress({ objects, bytes, totalObjects });
        }
        if (page.length < PAGE) break;
      }
    }
    await write({ end: FORMAT, objects, files });
    out.end();
    await finished(out);
  } catch (error) {
    out.destroy();
    await rm(partial, { force: true });
    throw error;
  }
  await rename(partial, join(dir, EXPORT_FILE));
  return { objects, files, bytes };
}

async function writeLine(out: WriteStream, text: string): Promise<void> {
  if (!out.write(`${text}\n`)) await once(out, 'drain');
}

/** Streams a blob's bytes to `path`; `undefined` when the file object has none. */
async function exportBytes(blobs: BlobStore, id: string, path: string): Promise<number | undefined> {
  const read = await blobs.get(id);
  if (!read) return undefined;
  const out = createWriteStream(path);
  await finished(Readable.fromWeb(read.stream as import('node:stream/web').ReadableStream<Uint8Array>).pipe(out));
  return read.size;
}

/** The lines of a file, each at most `maxBytes` long (a longer one is refused before it is held whole), strictly UTF-8. */
async function* lines(path: string, maxBytes: number): AsyncGenerator<[number, string]> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let number = 0;
  const take = (last: Buffer): string => {
    const bytes = pending.length === 0 ? last : Buffer.concat([...pending, last]);
    pending = [];
    pendingBytes = 0;
    try {
      return decoder.decode(bytes);
    } catch {
      throw new ImportError(number, 'is not UTF-8 text');
    }
  };
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let end = chunk.indexOf(10); end >= 0; end = chunk.indexOf(10, start)) {
      number++;
      if (pendingBytes + end - start > maxBytes) throw new ImportError(number, `is longer than ${maxBytes} bytes`);
      yield [number, take(chunk.subarray(start, end))];
      start = end + 1;
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
      if (pendingBytes > maxBytes) throw new ImportError(number + 1, `is longer than ${maxBytes} bytes`);
    }
  }
  if (pendingBytes > 0) throw new ImportError(number + 1, 'is cut off: the export is truncated (its last line has no end)');
}

function parseLine(number: number, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ImportError(number, 'is not JSON');
  }
}

/** An object line, checked member by member. */
function objectLine(number: number, value: unknown): ObjectLine {
  const line = value as Partial<ObjectLine> | null;
  if (typeof line !== 'object' || line === null || Array.isArray(line)) throw new ImportError(number, 'must be an object line {id, className, storeTime, fields}');
  if (typeof line.id !== 'string' || !ID.test(line.id)) throw new ImportError(number, 'id must be an object id (1 to 128 letters, digits, _ or -)');
  if (typeof line.className !== 'string' || !CLASS.test(line.className)) throw new ImportError(number, 'className must match [A-Za-z][A-Za-z0-9_]{0,63}');
  if (!Number.isSafeInteger(line.storeTime) || line.storeTime! < 0 || line.storeTime! % 1000 !== 0) throw new ImportError(number, 'storeTime must be epoch milliseconds in whole seconds');
  if (typeof line.fields !== 'object' || line.fields === null || Array.isArray(line.fields)) throw new ImportError(number, 'fields must be an object');
  if (line.blob !== undefined && !(typeof line.blob === 'object' && line.blob !== null && Number.isSafeInteger(line.blob.size) && line.blob.size >= 0)) {
    throw new ImportError(number, 'blob must be {size}');
  }
  return line as ObjectLine;
}

function collectRefs(value: FieldValue, into: (id: string) => void): void {
  if (isRef(value)) into(value.$ref);
  else if (isSet(value)) for (const id of value.$set) into(id);
}

export interface ImportResult {
  /** Objects written now. */
  written: number;
  /** Objects the target already held in the exported version (an earlier run of the same import). */
  skipped: number;
  files: number;
}

/** What an import writes into: the stores, and the declarations its objects are checked against. */
export interface ImportTarget extends TransferStores {
  schemas: Pick<ClassSchemas, 'firstRefused'>;
}

/** Checks the export in `dir` against the target, then writes it (see the module comment). */
export async function importStores(
  { store, blobs, schemas }: ImportTarget,
  dir: string,
  { maxLineBytes = DEFAULT_MAX_LINE_BYTES, onProgress = () => {} }: { maxLineBytes?: number; onProgress?: (progress: TransferProgress) => void } = {},
): Promise<ImportResult> {
  const path = join(dir, EXPORT_FILE);
  await stat(path).catch(() => {
    throw new ImportError(0, `no ${EXPORT_FILE} in ${dir}`);
  });
  const { present, objects: totalObjects } = await check({ store, schemas }, dir, path, maxLineBytes);
  let written = 0;
  let files = 0;
  let objects = 0;
  let bytes = 0;
  const batch = new LineBatch<ObjectInput>();
  // a batch is one all-or-nothing step where the store has putMany (one statement per thousand on PostgreSQL)
  const writeBatch = async () => {
    const inputs = batch.take();
    if (store.putMany) await store.putMany(inputs);
    else for (const input of inputs) await store.put(input);
    written += inputs.length;
  };
  for await (const [number, text] of lines(path, maxLineBytes)) {
    if (number === 1) continue;
    const value = parseLine(number, text) as Record<string, unknown>;
    if (Object.hasOwn(value, 'end')) break;
    const line = objectLine(number, value);
    objects++;
    bytes += Buffer.byteLength(text) + 1 + (line.blob?.size ?? 0);
    onProgress({ objects, bytes, totalObjects });
    if (present.has(line.id)) continue;
    if (line.blob) {
      // a file's bytes are stored before its object (a run stopped between the two writes them again)
      const stream = Readable.toWeb(createReadStream(join(dir, FILES_DIR, line.id))) as unknown as ReadableStream<Uint8Array>;
      await blobs.put(line.id, stream);
      files++;
    }
    if (batch.add({ id: line.id, className: line.className, fields: line.fields, ifStoreTime: null, importedStoreTime: line.storeTime }, text.length)) await writeBatch();
  }
  if (batch.size > 0) await writeBatch();
  return { written, skipped: present.size, files };
}

/** Lines held together (a page of objects to compare or write), at most `PAGE` of them and about `BATCH_BYTES` of text. */
class LineBatch<T> {
  #items: T[] = [];
  #bytes = 0;

  get size(): number {
    return this.#items.length;
  }

  /** Adds an item of a line of `bytes`; answers whether the batch is full. */
  add(item: T, bytes: number): boolean {
    this.#items.push(item);
    this.#bytes += bytes;
    return this.#items.length >= PAGE || this.#bytes >= BATCH_BYTES;
  }

  take(): T[] {
    const items = this.#items;
    this.#items = [];
    this.#bytes = 0;
    return items;
  }
}

/**
 * The whole export checked before anything is written; answers the ids the target already holds in
 * the exported version (to skip). Every refusal names its line.
 */
async function check({ store, schemas }: Pick<ImportTarget, 'store' | 'schemas'>, dir: string, path: string, maxLineBytes: number): Promise<{ present: Set<string>; objects: number }> {
  const firstLineOf = new Map<string, number>();
  const referencedBy = new Map<string, number>(); // referenced id -> first line naming it
  const present = new Set<string>();
  const batch = new LineBatch<[number, ObjectLine]>();
  let trailer: { objects: number; files: number } | undefined;
  let objects = 0;
  let files = 0;
  const compareBatch = async () => {
    const lines = batch.take();
    const found = new Map((await store.getMany(lines.map(([, line]) => line.id))).map((object) => [object.id, object]));
    for (const [number, line] of lines) {
      const there = found.get(line.id);
      if (!there) continue;
      if (!sameObject(there, line)) throw new ImportError(number, `the target already holds object ${line.id} in another version; import into a store without it`);
      present.add(line.id);
    }
    // as a write of each would be checked (their `_` fields aside)
    const refused = await schemas.firstRefused(lines.map(([, line]) => ({ className: line.className, fields: withoutInternal(line.fields) })));
    if (refused) throw new ImportError(lines[refused.index]![0], refused.error.message);
  };
  for await (const [number, text] of lines(path, maxLineBytes)) {
    const value = parseLine(number, text);
    if (number === 1) {
      const header = value as { format?: unknown; version?: unknown };
      if (header?.format !== FORMAT) throw new ImportError(1, `is not the header of an odbrest export ({"format":"${FORMAT}",...})`);
      if (header.version !== VERSION) throw new ImportError(1, `export version ${String(header.version)} is not one this odbrest reads (${VERSION})`);
      continue;
    }
    if (trailer) throw new ImportError(number, 'follows the export\'s last line');
    if (typeof value === 'object' && value !== null && Object.hasOwn(value, 'end')) {
      const end = value as { objects?: unknown; files?: unknown };
      if (end.objects !== objects || end.files !== files) throw new ImportError(number, `the export ends with ${String(end.objects)} objects and ${String(end.files)} files, but holds ${objects} and ${files}`);
      trailer = { objects, files };
      continue;
    }
    const line = objectLine(number, value);
    const earlier = firstLineOf.get(line.id);
    if (earlier !== undefined) throw new ImportError(number, `object ${line.id} is already on line ${earlier}`);
    firstLineOf.set(line.id, number);
    for (const name of Object.keys(line.fields)) collectRefs(line.fields[name]!, (id) => void (referencedBy.has(id) || referencedBy.set(id, number)));
    if (line.blob) {
      const size = await stat(join(dir, FILES_DIR, line.id)).then((s) => s.size, () => undefined);
      if (size !== line.blob.size) throw new ImportError(number, `the bytes of file ${line.id} (${FILES_DIR}/${line.id}) are ${size === undefined ? 'missing' : `${size} bytes, not ${line.blob.size}`}`);
      files++;
    }
    objects++;
    if (batch.add([number, line], text.length)) await compareBatch();
  }
  if (batch.size > 0) await compareBatch();
  if (!trailer) throw new ImportError(0, 'the export is truncated: its last line is missing');
  const missing = [...referencedBy].filter(([id]) => !firstLineOf.has(id));
  for (let i = 0; i < missing.length; i += PAGE) {
    const slice = missing.slice(i, i + PAGE);
    const there = new Set((await store.getMany(slice.map(([id]) => id))).map((object) => object.id));
    const absent = slice.find(([id]) => !there.has(id));
    if (absent) throw new ImportError(absent[1], `references ${absent[0]}, which is neither in the export nor in the target`);
  }
  return { present, objects };
}

/** Whether the target's object is the exported one (an earlier run of this import wrote it). */
function sameObject(object: StoredObject, line: ObjectLine): boolean {
  return object.className === line.className && object.storeTime === line.storeTime && JSON.stringify(object.fields) === JSON.stringify(line.fields);
}
