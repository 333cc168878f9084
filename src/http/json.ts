import { ApiError } from './errors.js';

/** Deepest nesting of arrays and objects the service reads from a client; deeper is `400`. */
/** A JSON object as parsed or about to be written. */
export type JsonObject = Record<string, unknown>;

export const MAX_JSON_DEPTH = 64;

/**
 * Whether `text` nests arrays and objects deeper than `limit`, counted in one pass, brackets inside
 * strings skipped (a string is crossed with `indexOf`, so long strings cost little). For valid JSON
 * the count is the real depth; for invalid JSON the answer does not matter, `JSON.parse` refuses it.
 */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = closingQuote(text, i + 1);
      if (i < 0) return false;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** The index of the quote that ends the string whose text starts at `from`, or -1. */
function closingQuote(text: string, from: number): number {
  for (let quote = text.indexOf('"', from); quote >= 0; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
}

/**
 * Parses JSON a client sent (`what` names it in the message: "request body", "query"). Nesting deeper
 * than `MAX_JSON_DEPTH` is refused before any value is built, in time linear in the text: deep
 * nesting made `JSON.parse` (and every walk over its result) hold the event loop for hundreds of
 * milliseconds per request. Every JSON the service reads from a client goes through here.
 */
export function parseJsonText(text: string, what = 'request body'): unknown {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new ApiError('400', `${what} nests JSON arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError('400', `${what} is not valid JSON`);
  }
}
