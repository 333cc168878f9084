import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64 } from '@scure/base';
import { asciiText, base64Bytes, base64Text } from './base64.js';
import { defaultCrypto, type SymmetricCrypto } from './symmetric.js';

/**
 * The message layer of the secure transport (PROTOCOL.md 4), shared by the service and the client:
 * counter blocks, AES-256-CTR bodies and HMAC-SHA-256 signatures, on the primitives of a
 * `SymmetricCrypto` (by default `defaultCrypto`).
 */
const encoder = new TextEncoder();
const utf8 = new TextDecoder('utf-8', { fatal: true });
const MAC_LABEL = encoder.encode('odbrest secure transport mac');

/** `d` of the counter block: 0 for a request, 1 for its response. */
type Direction = 0 | 1;

/** Highest message number either side uses; keeps counters exact in a JS number and in JSON. */
const MAX_COUNTER = Number.MAX_SAFE_INTEGER;

/** The 16-byte initial counter block `uint64_be(d * 2^63 + n) || uint64_be(0)`. */
export function counterBlock(n: number, direction: Direction): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError('message number must be a positive safe integer');
  const block = new Uint8Array(16);
  const view = new DataView(block.buffer);
  // n < 2^53, so its high word fits in 21 bits and bit 63 is free for the direction.
  view.setUint32(0, (Math.floor(n / 2 ** 32) | (direction << 31)) >>> 0);
  view.setUint32(4, n >>> 0);
  return block;
}

/** `M` = HMAC-SHA-256(K, "odbrest secure transport mac"): the signing key derived from the session key. */
export function macKey(sessionKey: Uint8Array, symmetric: SymmetricCrypto = defaultCrypto): Uint8Array {
  return symmetric.hmacSha256(sessionKey)(MAC_LABEL);
}

/** A session's keys prepared once: AES-256-CTR under K and HMAC-SHA-256 under M. */
export interface MessageKeys {
  ctr: (counter: Uint8Array, data: Uint8Array) => Uint8Array | Promise<Uint8Array>;
  mac: (...parts: Uint8Array[]) => Uint8Array;
  /** An incremental HMAC-SHA-256 under M, for bodies signed as they stream (files, PROTOCOL.md 6.6). */
  macStream: () => { update(data: Uint8Array): unknown; digest(): Uint8Array };
}

/**
 * Prepares a session's keys. With the default primitives this needs no WebCrypto, so a request never
 * waits for the crypto thread pool just to start (a request that does can be overtaken by 64 others
 * of its session and fall out of the replay window when the client does not pace its counters).
 */
export function messageKeys(sessionKey: Uint8Array, symmetric: SymmetricCrypto = defaultCrypto): MessageKeys {
  const m = macKey(sessionKey, symmetric);
  return { ctr: symmetric.aesCtr(sessionKey), mac: symmetric.hmacSha256(m), macStream: () => hmac.create(sha256, m) };
}

/** The base64 body of a message as ASCII bytes (what is signed and sent); empty for an empty plaintext. */
function bodyBytes(keys: MessageKeys, n: number, direction: Direction, plaintext: string): Uint8Array<ArrayBuffer> | Promise<Uint8Array<ArrayBuffer>> {
  if (plaintext === '') return new Uint8Array();
  const encrypted = keys.ctr(counterBlock(n, direction), encoder.encode(plaintext));
  // synchronous primitives (node:crypto, noble) answer at once: no promise is made for them
  return encrypted instanceof Promise ? encrypted.then(base64Bytes) : base64Bytes(encrypted);
}

/** The base64 body text of a message: base64(AES-256-CTR(K, counter block, UTF-8 text)). */
export async function encryptBody(keys: MessageKeys, n: number, direction: Direction, plaintext: string): Promise<string> {
  return asciiText(await bodyBytes(keys, n, direction, plaintext));
}

/** A sealed message: the base64 body as ASCII bytes (empty for an empty plaintext) and its `Secure-Signature` header. */
export interface Sealed {
  body: Uint8Array<ArrayBuffer>;
  signature: string;
}

/**
 * A request's encrypted body and its signature, signing the body's bytes as sent. Synchronous where
 * the primitives are (node:crypto, noble): no promise is made for them.
 */
export function sealRequest(keys: MessageKeys, n: number, method: string, target: string, plaintext: string): Sealed | Promise<Sealed> {
  return sealed(bodyBytes(keys, n, 0, plaintext), (body) => requestSignature(keys, n, method, target, body));
}

/** A response's encrypted body and its signature, signing the body's bytes as sent; synchronous as `sealRequest`. */
export function sealResponse(keys: MessageKeys, n: number, status: number, plaintext: string): Sealed | Promise<Sealed> {
  return sealed(bodyBytes(keys, n, 1, plaintext), (body) => responseSignature(keys, n, status, body));
}

function sealed(body: Uint8Array<ArrayBuffer> | Promise<Uint8Array<ArrayBuffer>>, sign: (body: Uint8Array) => Uint8Array): Sealed | Promise<Sealed> {
  const seal = (bytes: Uint8Array<ArrayBuffer>): Sealed => ({ body: bytes, signature: base64Text(sign(bytes)) });
  return body instanceof Promise ? body.then(seal) : seal(body);
}

/** The plaintext of a base64 body; `undefined` when it is not base64 or does not decrypt to UTF-8. */
export async function decryptBody(keys: MessageKeys, n: number, direction: Direction, body: string): Promise<string | undefined> {
  if (body === '') return '';
  try {
    return utf8.decode(await keys.ctr(counterBlock(n, direction), base64.decode(body)));
  } catch {
    return undefined;
  }
}

function sign(keys: MessageKeys, head: string, body: Uint8Array): Uint8Array {
  return keys.mac(encoder.encode(head), body);
}

/** HMAC-SHA-256(M, "REQ n METHOD target\n" || body): `target` is path and query relative to the service root. */
export function requestSignature(keys: MessageKeys, n: number, method: string, target: string, body: Uint8Array): Uint8Array {
  return sign(keys, requestHead(n, method, target), body);
}

/** HMAC-SHA-256(M, "RES n status\n" || body). */
export function responseSignature(keys: MessageKeys, n: number, status: number, body: Uint8Array): Uint8Array {
  return sign(keys, responseHead(n, status), body);
}

/**
 * Constant-time check of a base64 signature header against the expected MAC. The expected MAC is
 * encoded and the texts compared, rather than the header decoded: standard base64 with padding has
 * one text per byte string (a decoder that accepts only that, as @scure/base's, accepts exactly the
 * header this accepts), and encoding 32 bytes costs less than decoding them.
 */
export function signatureMatches(header: string | null, expected: Uint8Array): boolean {
  if (header === null) return false;
  const given = header.trim();
  const wanted = base64Text(expected);
  if (given.length !== wanted.length) return false;
  let diff = 0;
  for (let i = 0; i < wanted.length; i++) diff |= given.charCodeAt(i) ^ wanted.charCodeAt(i);
  return diff === 0;
}

/** A `Secure-Counter` header value: a decimal message number from 1 to `MAX_COUNTER`, else `undefined`. */
export function parseCounter(header: string | null): number | undefined {
  if (header === null || !/^[1-9][0-9]{0,15}$/.test(header.trim())) return undefined;
  const n = Number(header.trim());
  return n <= MAX_COUNTER ? n : undefined;
}

/** The counter block of 16-byte block `index` of a message: its initial block plus `index` (the low 64 bits). */
export function counterBlockAt(n: number, direction: Direction, index: number): Uint8Array {
  const block = counterBlock(n, direction);
  const view = new DataView(block.buffer);
  view.setUint32(8, Math.floor(index / 2 ** 32));
  view.setUint32(12, index >>> 0);
  return block;
}

/**
 * A file body streamed through the secure transport (PROTOCOL.md 6.6): raw AES-256-CTR, chunk by
 * chunk from the message's counter block, with an incremental MAC of the ciphertext (`macInput`:
 * the input is the ciphertext, when decrypting; otherwise the output is). Chunks are cut at 16-byte
 * blocks, the few bytes over a block carried to the next chunk. `signed(head)` starts the MAC with
 * the message's signed head (`REQ n METHOD target\n` or `RES n status\n`).
 */
export function cipherStream(keys: MessageKeys, n: number, direction: Direction, head: string, macInput: boolean) {
  const mac = keys.macStream();
  mac.update(encoder.encode(head));
  let block = 0;
  let carry = new Uint8Array(0);
  const run = async (data: Uint8Array): Promise<Uint8Array> => {
    if (data.length === 0) return data;
    const out = await keys.ctr(counterBlockAt(n, direction, block), data);
    block += data.length / 16;
    mac.update(macInput ? data : out);
    return out;
  };
  const transform = new TransformStream<Uint8Array, Uint8Array>({
    async transform(chunk, controller) {
      const data = carry.length === 0 ? chunk : concatBytes(carry, chunk);
      const whole = data.length - (data.length % 16);
      carry = data.slice(whole);
      const out = await run(data.subarray(0, whole));
      if (out.length > 0) controller.enqueue(out);
    },
    async flush(controller) {
      const out = await run(carry);
      if (out.length > 0) controller.enqueue(out);
    },
  });
  return { transform, digest: () => mac.digest() };
}

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** The signed head of a request: `REQ n METHOD target\n`. */
export function requestHead(n: number, method: string, target: string): string {
  return `REQ ${n} ${method} ${target}\n`;
}

/** The signed head of a response: `RES n status\n`. */
export function responseHead(n: number, status: number): string {
  return `RES ${n} ${status}\n`;
}

/**
 * The counter block of event `k` of a secure session's event streams (PROTOCOL.md 8: the server's own
 * counter range): `uint64_be(2^63 + 2^62 + k) || uint64_be(0)`. Requests and responses stay below
 * 2^63 + 2^53 in the high word, so no event shares keystream with any message.
 */
export function eventCounterBlock(k: number): Uint8Array {
  if (!Number.isSafeInteger(k) || k < 1) throw new RangeError('event number must be a positive safe integer');
  const block = new Uint8Array(16);
  const view = new DataView(block.buffer);
  view.setUint32(0, (Math.floor(k / 2 ** 32) | 0xc0000000) >>> 0);
  view.setUint32(4, k >>> 0);
  return block;
}

/** The signed head of an event: `EVT k event id\n` (the id is empty for events without one). */
export function eventHead(k: number, event: string, id: string): string {
  return `EVT ${k} ${event} ${id}\n`;
}

/** An event's data encrypted under its number `k` and signed with its type and id. */
export async function sealEvent(keys: MessageKeys, k: number, event: string, id: string, plaintext: string): Promise<{ body: string; signature: string }> {
  const body = base64Bytes(await keys.ctr(eventCounterBlock(k), encoder.encode(plaintext)));
  return { body: asciiText(body), signature: base64Text(sign(keys, eventHead(k, event, id), body)) };
}

/** An event's plaintext, or `undefined` when its signature does not match (checked first, in constant time) or it does not decrypt. */
export async function openEvent(keys: MessageKeys, k: number, event: string, id: string, body: string, signature: string): Promise<string | undefined> {
  if (!Number.isSafeInteger(k) || k < 1) return undefined;
  if (!signatureMatches(signature, sign(keys, eventHead(k, event, id), encoder.encode(body)))) return undefined;
  try {
    return utf8.decode(await keys.ctr(eventCounterBlock(k), base64.decode(body)));
  } catch {
    return undefined;
  }
}
