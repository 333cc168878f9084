import { ApiError, StorageUnavailableError } from './errors.js';

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

/** Body text of the responses made by `jsonResponse`, so a transport can re-wrap one without reading its stream. */
const bodyTexts = new WeakMap<Response, string>();

export function jsonResponse(body: unknown, status = 200, headers?: HeadersInit): Response {
  const text = JSON.stringify(body);
  const response = new Response(text, { status, headers });
  response.headers.set('content-type', JSON_TYPE);
  bodyTexts.set(response, text);
  return response;
}

/** A response's body as text; for `jsonResponse` answers without reading the stream (which costs more than encrypting it). */
export function responseText(response: Response): Promise<string> {
  const text = bodyTexts.get(response);
  return text !== undefined && !response.bodyUsed ? Promise.resolve(text) : response.text();
}

export function okResponse(data: unknown, statusMessage?: string, debugMessage?: string): Response {
  return jsonResponse(envelope(data ?? {}, statusMessage, debugMessage));
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
  onUnexpected?.(error);
  return new ApiError('500', 'unexpected server error');
}

export function errorResponse(error: ApiError): Response {
  return jsonResponse(errorEnvelope(error), error.status, error.headers);
}
