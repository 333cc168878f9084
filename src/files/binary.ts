/**
 * Answers whose body is a file's bytes, not an envelope: the secure transport encrypts them as raw
 * AES-CTR ciphertext, streamed, instead of base64 of the JSON text (PROTOCOL.md 6.6).
 */
const binaryAnswers = new WeakSet<Response>();

export function binaryResponse(body: ReadableStream<Uint8Array> | null, init: ResponseInit): Response {
  const response = new Response(body, init);
  binaryAnswers.add(response);
  return response;
}

export function isBinaryAnswer(answer: unknown): answer is Response {
  return answer instanceof Response && binaryAnswers.has(answer);
}
