import { create as contentDisposition } from 'content-disposition';
import parseRange from 'range-parser';
import type { ServiceContext } from '../context.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { served } from '../objects/served.js';
import type { BlobRange } from '../storage/blobs.js';
import type { StoredObject } from '../storage/types.js';
import { binaryResponse } from './binary.js';

/**
 * `GET /v1/file/{objectId}` (PROTOCOL.md 6.6): the file's bytes streamed from the blob store, with
 * `ETag` (its SHA-256), `If-None-Match` answered `304`, and one `Range` answered `206` (`416` when it
 * lies past the end). Several ranges or a malformed one are ignored, as RFC 9110 allows: the whole file.
 * The file class's read rule applies: a file the session may not read is `404`, like a missing one.
 */
export async function download(ctx: ServiceContext, request: ApiRequest): Promise<Response> {
  const id = request.params.id!;
  const file = await served(ctx, ctx.guard(request), await ctx.store.get(id));
  if (!file || file.className !== ctx.files.className) {
    throw new ApiError('404', `no file ${id.slice(0, 100)}`);
  }
  const etag = `"${String(file.fields.Sha256 ?? '')}"`;
  const headers: Record<string, string> = { etag, 'accept-ranges': 'bytes', 'cache-control': 'private, no-cache' };
  if (matchesETag(request.headers.get('if-none-match'), etag)) return binaryResponse(null, { status: 304, headers }, async () => new ReadableStream({ start: (c) => c.close() }));

  const stat = await ctx.files.blobs.stat(id);
  if (!stat) throw new ApiError('404', `file ${id} has no bytes stored`);
  const range = requestedRange(request.headers.get('range'), stat.size);
  const read = await ctx.files.blobs.get(id, range);
  if (!read) throw new ApiError('404', `file ${id} has no bytes stored`);
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

/**
 * The one range a `Range` header asks for, `undefined` for the whole file; HTTP `416` when it cannot be
 * served. PROTOCOL.md 1.4 has no code of its own for that, so the envelope carries the nearest one it
 * lists, `400` (the request asks for something the file does not have).
 */
function requestedRange(header: string | null, size: number): BlobRange | undefined {
  if (header === null) return undefined;
  const ranges = parseRange(size, header);
  if (ranges === -1) {
    throw new ApiError('400', `the requested range lies outside the file's ${size} bytes`, { status: 416, headers: { 'content-range': `bytes */${size}` } });
  }
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return { start: ranges[0]!.start, end: ranges[0]!.end + 1 };
}

/** Whether `If-None-Match` names this entity tag (weak comparison, RFC 9110 13.1.2) or is `*`. */
function matchesETag(header: string | null, etag: string): boolean {
  if (header === null) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag;
  });
}

function contentTypeOf(file: StoredObject): string {
  const type = file.fields.ContentType;
  return typeof type === 'string' && /^[\x21-\x7e][\x20-\x7e]*$/.test(type) ? type : 'application/octet-stream';
}

function nameOf(file: StoredObject): string {
  return typeof file.fields.Name === 'string' && file.fields.Name !== '' ? file.fields.Name : file.id;
}
