import { ApiError } from './errors.js';
import { parseJsonText } from './json.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a request body as text, never holding more than `limit` bytes: a declared or actual size over
 * the limit is `413`, bytes that are not UTF-8 are `400`. Returns '' for no body.
 */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    // A failing stream (the client went away) or one that yields something other than bytes is the
    // client's problem, not an unexpected server error.
    const { done, value } = await reader.read().catch(() => unreadable());
    if (done) break;
    if (!(value instanceof Uint8Array)) {
      await reader.cancel().catch(() => undefined);
      unreadable();
    }
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const bytes = chunks.length === 1 ? chunks[0]! : concat(chunks, size);
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ApiError('400', 'request body is not valid UTF-8');
  }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

function unreadable(): never {
  throw new ApiError('400', 'request body could not be read');
}

function tooLarge(limit: number): ApiError {
  return new ApiError('413', `request body is larger than ${limit} bytes`);
}

/** The media type of a Content-Type value, lower-case, without parameters such as `charset`. */
export function mediaType(contentType: string | null): string | undefined {
  return contentType?.split(';', 1)[0]!.trim().toLowerCase();
}

/** `application/json`, with or without parameters. */
export function isJsonContentType(value: string | null): boolean {
  return mediaType(value) === 'application/json';
}

/** `application/x-www-form-urlencoded`, with or without parameters. */
export function isFormContentType(value: string | null): boolean {
  return mediaType(value) === 'application/x-www-form-urlencoded';
}

/** `application/text` (the real client's type for encrypted bodies) or `text/plain`, with or without parameters. */
export function isSecureContentType(value: string | null): boolean {
  const type = mediaType(value);
  return type === 'application/text' || type === 'text/plain';
}

/** Parses a JSON body (nesting bounded, see `parseJsonText`); '' parses to `undefined`. */
export function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  return parseJsonText(text);
}
