import * as v from 'valibot';
import { contentTypeOf, nameOf } from './file-fields.js';
import { create as contentDisposition } from 'content-disposition';
import type { ObjectsContext } from '../objects/context.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { served } from '../objects/read/index.js';
import type { BlobRange, BlobRead } from '../storage/blobs.js';
import { binaryResponse } from './binary.js';

/** The file object whose bytes are asked for (`GET /v1/file/{id}`, `GET /v2/file/{id}`). */
export const FileParams = v.object({ id: v.pipe(v.string(), v.description('the file object')) });

/**
 * `GET /v1/file/{objectId}` (PROTOCOL.md 6.6): the file's bytes streamed from the blob store, with
 * `ETag` (its SHA-256), `If-None-Match` answered `304`, and one `Range` answered `206` (`416` when no
 * range it names can be satisfied). Several ranges or an invalid header are ignored, as RFC 9110 allows: the whole file.
 * So is a `Range` whose `If-Range` names another version (RFC 9110 13.1.5): a resumed download never joins two versions.
 * The file class's read rule applies: a file the session may not read is `404`, like a missing one.
 */
export async function download(ctx: ObjectsContext, request: ApiRequest, id: string): Promise<Response> {
  const file = await served(ctx, ctx.guard(request), await ctx.store.get(id));
  if (!file || file.className !== ctx.files.className) {
    throw new ApiError('404', `no file ${id.slice(0, 100)}`);
  }
  const etag = `"${String(file.fields.Sha256 ?? '')}"`;
  const headers: Record<string, string> = { etag, 'accept-ranges': 'bytes', 'cache-control': 'private, no-cache' };
  if (matchesETag(request.headers.get('if-none-match'), etag)) return binaryResponse(null, { status: 304, headers }, async () => new ReadableStream({ start: (c) => c.close() }));

  const specs = rangeStillMeant(request.headers.get('if-range'), etag, file.storeTime) ? parseByteRanges(request.headers.get('range') ?? '') : undefined;
  const { range, read } = await readRange(ctx, id, specs);
  const reopen = async () => {
    const again = await ctx.files.blobs.get(id, range);
    if (!again) throw new ApiError('404', `file ${id} has no bytes stored`);
    return again.stream;
  };
  headers['content-type'] = contentTypeOf(file);
  headers['content-disposition'] = contentDisposition(nameOf(file));
  headers['content-length'] = String(read.end - read.start);
  if (!range) return binaryResponse(read.stream, { status: 200, headers }, reopen);
  headers['content-range'] = `bytes ${read.start}-${read.end - 1}/${read.size}`;
  return binaryResponse(read.stream, { status: 206, headers }, reopen);
}

/** One range-spec of RFC 9110 14.1.1: `first-last`, `first-`, or the suffix `-length`. */
type RangeSpec = { first: number; last: number | undefined } | { suffix: number };
const RANGE_SPEC = /^(?:(\d+)-(\d*)|-(\d+))$/;

/**
 * The range-specs of a `bytes` Range header, or `undefined` when the header is not a valid one
 * (another unit, a syntax error, `last < first`): such a header is ignored (RFC 9110 14.2).
 * (range-parser treats `last < first` as unsatisfiable, where RFC 9110 calls it invalid.)
 */
function parseByteRanges(header: string): RangeSpec[] | undefined {
  if (header === '') return undefined;
  const match = /^bytes=(.*)$/i.exec(header.trim());
  if (!match) return undefined;
  const specs: RangeSpec[] = [];
  for (const element of match[1]!.split(',')) {
    const text = element.trim();
    if (text === '') continue; // a list may hold empty elements (RFC 9110 5.6.1)
    const parts = RANGE_SPEC.exec(text);
    if (!parts) return undefined;
    if (parts[3] !== undefined) {
      specs.push({ suffix: Number(parts[3]) });
      continue;
    }
    const first = Number(parts[1]);
    const last = parts[2] === '' ? undefined : Number(parts[2]);
    if (last !== undefined && last < first) return undefined;
    specs.push({ first, last });
  }
  return specs.length > 0 ? specs : undefined;
}

/** The bytes a satisfiable spec selects (end exclusive), or `undefined` when it is unsatisfiable (RFC 9110 14.1.1). */
function rangeOf(spec: RangeSpec, size: number): BlobRange | undefined {
  if ('suffix' in spec) return spec.suffix > 0 && size > 0 ? { start: Math.max(0, size - spec.suffix), end: size } : undefined;
  if (spec.first >= size) return undefined;
  return { start: spec.first, end: spec.last === undefined ? size : Math.min(size, spec.last + 1) };
}

/**
 * The one range a `Range` header's specs ask for and its bytes opened; `range` is `undefined` for the
 * whole file (PROTOCOL.md 6.6, RFC 9110): no header, an invalid one, or several ranges (a server may
 * ignore Range; the whole file spares clients a multipart answer) get the whole file; a header none of
 * whose ranges can be satisfied is HTTP `416` with a `Content-Range` that names the size, and an
 * envelope `400` (1.4 has no code of its own). The whole file and a single `first-last` or `first-`
 * range are one call of the blob store (one request to remote storage); a suffix or several ranges
 * need the size first.
 */
async function readRange(ctx: ObjectsContext, id: string, specs: RangeSpec[] | undefined): Promise<{ range: BlobRange | undefined; read: BlobRead }> {
  const missing = () => new ApiError('404', `file ${id} has no bytes stored`);
  const unsatisfiable = (size: number) => new ApiError('400', `the requested range lies outside the file's ${size} bytes`, { status: 416, headers: { 'content-range': `bytes */${size}` } });
  const first = specs?.length === 1 ? specs[0]! : undefined;
  const only = first && !('suffix' in first) && Number.isSafeInteger(first.first) ? first : undefined;
  if (!specs || only) {
    // a last byte past any file's reads to the end
    const range = only && { start: only.first, end: only.last !== undefined && Number.isSafeInteger(only.last + 1) ? only.last + 1 : undefined };
    const read = await ctx.files.blobs.get(id, range);
    if (!read) throw missing();
    if (range && read.start === read.end) {
      await read.stream.cancel(); // starts at or past the end: no byte of it exists
      throw unsatisfiable(read.size);
    }
    return { range, read };
  }
  const stat = await ctx.files.blobs.stat(id);
  if (!stat) throw missing();
  const satisfiable = specs.map((spec) => rangeOf(spec, stat.size)).filter((range) => range !== undefined);
  if (satisfiable.length === 0) throw unsatisfiable(stat.size);
  const range = specs.length === 1 ? satisfiable[0] : undefined;
  const read = await ctx.files.blobs.get(id, range);
  if (!read) throw missing();
  return { range, read };
}

/**
 * Whether a `Range` still applies under `If-Range` (RFC 9110 13.1.5; PROTOCOL.md 6.6): no `If-Range`,
 * an entity tag equal to the current one (strong comparison: a weak tag never matches), or an HTTP
 * date after the file's last change (`storeTime`, whole seconds: a date equal to it could predate a
 * second change in the same second). Anything else, an unreadable value included, sends the whole file.
 */
function rangeStillMeant(header: string | null, etag: string, changed: number): boolean {
  if (header === null) return true;
  const validator = header.trim();
  if (validator.startsWith('"') || validator.startsWith('W/')) return validator === etag;
  if (!HTTP_DATE.test(validator)) return false;
  return Date.parse(validator.endsWith('GMT') ? validator : `${validator} GMT`) > changed;
}

/** The three forms of an HTTP-date (RFC 9110 5.6.7: IMF-fixdate, RFC 850, asctime), all UTC; Date.parse alone takes "9999". */
const HTTP_DATE = /^(?:[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]{5,8}, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})$/;

/** Whether `If-None-Match` names this entity tag (weak comparison, RFC 9110 13.1.2) or is `*`. */
function matchesETag(header: string | null, etag: string): boolean {
  if (header === null) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag;
  });
}

