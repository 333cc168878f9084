import { brandClass } from '../brand.js';

/**
 * One error type for every failure. Routes throw it; `errorReply` (envelope.ts) is the one place
 * that turns it into the JSON envelope. The codes and HTTP statuses are PROTOCOL.md 1.4.
 */
export const STATUS_CODES = {
  '0': 200,
  '100': 401,
  '101': 403,
  '201': 401,
  '204': 401,
  '205': 401,
  '302': 401,
  '303': 429,
  '306': 403,
  '307': 403,
  '310': 401,
  '340': 403,
  '341': 401,
  '342': 401,
  '320': 400,
  '321': 404,
  '322': 400,
  '323': 502,
  '400': 400,
  '403': 403,
  '404': 404,
  '405': 405,
  '409': 409,
  '413': 413,
  '415': 415,
  '429': 429,
  '500': 500,
  '503': 503,
} as const;

/** An `internalStatus` code of PROTOCOL.md 1.4. */
export type StatusCode = keyof typeof STATUS_CODES;

export interface ApiErrorOptions {
  /** HTTP status; defaults to the one PROTOCOL.md 1.4 gives the code (400 for codes it does not list). */
  status?: number;
  /** Extra response headers, such as `Retry-After` or `Allow`. */
  headers?: Record<string, string>;
  /** Optional detail for `status.debugMessage`. Never put secrets here. */
  debugMessage?: string;
  /** `data` of the envelope; `{}` when absent. */
  data?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * A failure answered with an envelope. `code` is an `internalStatus` string: one of PROTOCOL.md 1.4,
 * or a host macro's own code (then give `status`). `instanceof ApiError` also holds for an ApiError
 * made by another copy of odbrest (its CommonJS build, another version), so a macro's error answers
 * its code whichever copy it came from.
 */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly debugMessage: string | undefined;
  readonly data: Record<string, unknown>;

  constructor(code: StatusCode | (string & {}), message: string, options: ApiErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = options.status ?? (STATUS_CODES as Record<string, number>)[code] ?? 400;
    this.headers = options.headers ?? {};
    this.debugMessage = options.debugMessage;
    this.data = options.data ?? {};
  }
}
brandClass(ApiError, 'ApiError');

/** Client input quoted in a message, cut short so that an answer never mirrors a huge input back. */
export function clip(text: string, max = 100): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}
