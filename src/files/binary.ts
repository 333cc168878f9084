/**
 * Answers whose body is a file's bytes, not an envelope: the secure transport encrypts them as raw
 * AES-CTR ciphertext, streamed, instead of base64 of the JSON text (PROTOCOL.md 6.6). It reads the
 * bytes twice (the signature header comes before the body), so such an answer can open them again.
 */
const reopeners = new WeakMap<Response, () => Promise<ReadableStream<Uint8Array>>>();

/** A file answer; `reopen` gives the same bytes again as a fresh stream. */
export function binaryResponse(body: ReadableStream<Uint8Array> | null, init: ResponseInit, reopen: () => Promise<ReadableStream<Uint8Array>>): Response {
  const response = new Response(body, init);
  reopeners.set(response, reopen);
  return response;
}

export function isBinaryAnswer(answer: unknown): answer is Response {
  return answer instanceof Response && reopeners.has(answer);
}

export function binaryReopener(answer: Response): (() => Promise<ReadableStream<Uint8Array>>) | undefined {
  return reopeners.get(answer);
}
