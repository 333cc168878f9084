import { BlobTooLargeError, StorageUnavailableError, StoreConflictError, StoreValueError } from '../storage/errors.js';
import { ApiError } from './errors.js';
import { textResponse } from './light-response.js';

/** The body of every JSON response (PROTOCOL.md 1.3). `internalStatus` is always a string. */
export interface Envelope<T = unknown> {
  status: { internalStatus: string; statusMessage: string; debugMessage?: string };
  data: T;
}

export const JSON_TYPE = 'application/json; charset=utf-8';

export function envelope<T>(data: T, statusMessage = 'ok', debugMessage?: string): Envelope<T> {
  const status: Envelope['status'] = { internalStatus: '0', statusMessage };
  if (debugMessage !== undefined) status.debugMessage = debugMessage;
  return { status, data };
}

declare const dataType: unique symbol;

/**
 * A JSON answer before it becomes a `Response`. Routes return these; the service turns each into
 * exactly one `Response` at the end, and the secure transport encrypts the text directly. (A web
 * `Response` costs about 12 µs to make on Node, a sizeable part of a small request; making one per
 * answer and reading it back to encrypt it doubled that.)
 */
export class JsonReply<T = unknown> {
  /** Types only: what `data` of the envelope holds (a route with an `answerSchema` answers its output, router.ts). */
  declare readonly [dataType]?: T;
  constructor(
    readonly text: string,
    readonly status = 200,
    readonly headers: Record<string, string> = {},
    /** The envelope's `internalStatus`, for the request log. */
    readonly internalStatus?: string,
  ) {}
}

/** What a route answers: a JSON reply, or a ready `Response` (redirects, a macro's own response). */
export type Answer = JsonReply | Response;

export function jsonReply(body: unknown, status = 200, headers?: Record<string, string>): JsonReply {
  return new JsonReply(JSON.stringify(body), status, headers, (body as Partial<Envelope> | null)?.status?.internalStatus);
}

/** The `Response` of an answer: a light one (see `LightResponse`) when the adapter writes answers itself. */
export function toResponse(answer: Answer, light = false, requestId?: string): Response {
  if (answer instanceof Response) return answer;
  const headers: Record<string, string> = { ...answer.headers, 'content-type': JSON_TYPE };
  // made with the answer's headers, not set on the Response after (which makes its Headers on Bun and Deno)
  if (requestId !== undefined) headers['x-request-id'] = requestId;
  return textResponse(answer.text, answer.status, headers, light);
}

/** An answer's body as text (a `Response`'s stream is read). */
export function answerText(answer: Answer): Promise<string> {
  return answer instanceof Response ? answer.text() : Promise.resolve(answer.text);
}

export function okReply<T>(data: T, statusMessage?: string, debugMessage?: string): JsonReply<T> {
  return jsonReply(envelope(data ?? {}, statusMessage, debugMessage)) as JsonReply<T>;
}

/** `okReply` of data already serialized (`dataText` is its JSON text, of a `T`), without parsing it back. */
export function okTextReply<T = unknown>(dataText: string): JsonReply<T> {
  return new JsonReply(`{"status":{"internalStatus":"0","statusMessage":"ok"},"data":${dataText}}`, 200, {}, '0');
}

export function errorEnvelope(error: ApiError): Envelope<Record<string, unknown>> {
  const status: Envelope['status'] = { internalStatus: error.code, statusMessage: error.message };
  if (error.debugMessage !== undefined) status.debugMessage = error.debugMessage;
  return { status, data: error.data };
}

/**
 * Maps anything thrown to an ApiError. Unknown exceptions become a bare `500`: nothing internal
 * (message, stack) reaches the client; `onUnexpected` lets the host log it.
 */
export function toApiError(error: unknown, onUnexpected?: (error: unknown) => void): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof StorageUnavailableError) {
    return new ApiError('503', 'storage unavailable, retry later', { headers: { 'retry-after': '1' } });
  }
  if (error instanceof StoreConflictError) return new ApiError('409', error.message);
  if (error instanceof StoreValueError) return new ApiError('400', error.message);
  if (error instanceof BlobTooLargeError) return new ApiError('413', error.message);
  onUnexpected?.(error);
  return new ApiError('500', 'unexpected server error');
}

export function errorReply(error: ApiError): JsonReply {
  return jsonReply(errorEnvelope(error), error.status, error.headers);
}

/** The envelope `Response` of an `ApiError`: for adapters and hosts that refuse a request before the service is asked. */
export function errorResponse(error: ApiError): Response {
  return toResponse(errorReply(error));
}
