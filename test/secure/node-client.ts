/**
 * An independent implementation of the secure login and transport (PROTOCOL.md 3 and 4), written
 * with node:crypto only, so the interoperability tests do not check the library against itself.
 */
import { constants, createCipheriv, createHmac, createPublicKey, generateKeyPairSync, privateDecrypt, publicEncrypt } from 'node:crypto';
import type { Service } from '../../src/index.js';
import { expect } from 'vitest';
import { APP_KEY, USERS, call, expectError, loginBody, type CallResult } from '../helpers.js';

export const OAEP_SHA1 = { padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' } as const;

export interface NodeKeyPair {
  publicKey: string;
  privateKey: string;
}

/**
 * A refusal answered in the clear: a plain JSON envelope (never encrypted or RSA-wrapped) without
 * the secure headers.
 */
export function expectPlainError(result: CallResult, code: string, status: number, message?: string | RegExp): void {
  expectError(result, code, status);
  expect(result.headers.get('content-type')).toMatch(/^application\/json/);
  for (const header of ['encrypted', 'secure-counter', 'secure-signature']) expect(result.headers.get(header)).toBeNull();
  if (message !== undefined) expect(result.body.status.statusMessage).toMatch(message);
}

/** An RSA key pair as PEM (SPKI public, PKCS#8 private). */
export function nodeKeyPair(bits = 2048): NodeKeyPair {
  return generateKeyPairSync('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

/** Key size in bytes (`k`). */
export function keySize(publicKeyPem: string): number {
  return createPublicKey(publicKeyPem).asymmetricKeyDetails!.modulusLength! / 8;
}

/** The block scheme: `k - 42` byte chunks, each RSA-OAEP-SHA-1 encrypted, concatenated. */
export function rsaBlocksEncrypt(publicKeyPem: string, plaintext: Buffer, options: { padding?: number; oaepHash?: string } = OAEP_SHA1): Buffer {
  const k = keySize(publicKeyPem);
  const chunk = k - 42;
  const blocks: Buffer[] = [];
  for (let i = 0; i < Math.max(1, plaintext.length); i += chunk) {
    blocks.push(publicEncrypt({ key: publicKeyPem, ...options }, plaintext.subarray(i, i + chunk)));
  }
  return Buffer.concat(blocks);
}

export function rsaBlocksDecrypt(privateKeyPem: string, publicKeyPem: string, ciphertext: Buffer): Buffer {
  const k = keySize(publicKeyPem);
  if (ciphertext.length % k !== 0) throw new Error(`ciphertext of ${ciphertext.length} bytes is not a multiple of ${k}`);
  const parts: Buffer[] = [];
  for (let i = 0; i < ciphertext.length; i += k) parts.push(privateDecrypt({ key: privateKeyPem, ...OAEP_SHA1 }, ciphertext.subarray(i, i + k)));
  return Buffer.concat(parts);
}

/** `uint64_be(d * 2^63 + n) || uint64_be(0)`. */
export function nodeCounterBlock(n: bigint | number, d: 0 | 1): Buffer {
  const block = Buffer.alloc(16);
  block.writeBigUInt64BE((BigInt(d) << 63n) + BigInt(n));
  return block;
}

export function nodeMacKey(key: Buffer): Buffer {
  return createHmac('sha256', key).update('odbrest secure transport mac').digest();
}

export function nodeCtr(key: Buffer, n: bigint | number, d: 0 | 1, data: Buffer): Buffer {
  const cipher = createCipheriv('aes-256-ctr', key, nodeCounterBlock(n, d));
  return Buffer.concat([cipher.update(data), cipher.final()]);
}

export function nodeSign(mac: Buffer, head: string, body: string): string {
  return createHmac('sha256', mac).update(head).update(body).digest('base64');
}

/** The real client's form of a public key: the PEM base64-encoded as a whole, indented, mixed line breaks. */
export function realClientKeyForm(publicKeyPem: string): string {
  const lines = publicKeyPem.trim().split('\n');
  const text = lines.map((line, i) => (i % 2 ? `\t ${line}\r\n` : `  ${line}\n`)).join('');
  return Buffer.from(text, 'utf8').toString('base64');
}

/** Bare base64 of the SPKI DER. */
export function derKeyForm(publicKeyPem: string): string {
  return createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' }).toString('base64');
}

export interface NodeLogin {
  token: string;
  key: Buffer;
  mac: Buffer;
  /** The decrypted login envelope. */
  envelope: any;
}

/** The secure-login request body for `plaintext` credentials. */
export function secureLoginBody(serverKeyPem: string, plaintext: string, clientPublicKey: string) {
  return { credentials: rsaBlocksEncrypt(serverKeyPem, Buffer.from(plaintext, 'utf8')).toString('base64'), publicKey: clientPublicKey };
}

export async function serverKeyPem(service: Service): Promise<string> {
  const result = await call(service, 'GET', '/v2/login/secure/key');
  if (result.status !== 200) throw new Error(`key endpoint failed: ${result.text}`);
  return result.body.data.key as string;
}

/** A full secure login as an independent client; throws unless it succeeds. */
export async function nodeSecureLogin(
  service: Service,
  clientKeys: NodeKeyPair,
  { user = 'alice', appNames = ['crm'], keyForm = (pem: string) => pem }: { user?: keyof typeof USERS; appNames?: string[]; keyForm?: (pem: string) => string } = {},
): Promise<NodeLogin> {
  const serverKey = await serverKeyPem(service);
  const plaintext = JSON.stringify(loginBody(user, USERS[user], appNames));
  const result = await call(service, 'POST', '/v2/login/secure', { json: secureLoginBody(serverKey, plaintext, keyForm(clientKeys.publicKey)) });
  if (result.status !== 200) throw new Error(`secure login failed: ${result.text}`);
  const envelope = JSON.parse(rsaBlocksDecrypt(clientKeys.privateKey, clientKeys.publicKey, Buffer.from(result.text, 'base64')).toString('utf8'));
  const key = Buffer.from(envelope.data.symmetricKey, 'base64');
  return { token: envelope.data.sessionId, key, mac: nodeMacKey(key), envelope };
}

export interface SecureMessage {
  headers: Record<string, string>;
  body: string | undefined;
}

/** Builds a signed (and, with a body, encrypted) request for message number `n`. */
export function secureRequest(login: NodeLogin, n: number, method: string, target: string, json?: unknown): SecureMessage {
  const body = json === undefined ? '' : nodeCtr(login.key, n, 0, Buffer.from(JSON.stringify(json), 'utf8')).toString('base64');
  return signedRequest(login, n, method, target, body);
}

/** A correctly signed request whose body is sent exactly as given (for bodies that are not valid messages). */
export function signedRequest(login: NodeLogin, n: number, method: string, target: string, body: string): SecureMessage {
  const headers: Record<string, string> = {
    appkey: APP_KEY,
    'secure-token': login.token,
    'secure-counter': String(n),
    'secure-signature': nodeSign(login.mac, `REQ ${n} ${method} ${target}\n`, body),
  };
  if (body) headers['content-type'] = 'application/text';
  return { headers, body: body || undefined };
}

/** Checks an encrypted response's headers and signature and returns the decrypted envelope. */
export function openSecureResponse(login: NodeLogin, n: number, status: number, headers: Headers, text: string): any {
  if (headers.get('encrypted') !== 'true') throw new Error(`response is not encrypted: ${status} ${text}`);
  if (headers.get('secure-counter') !== String(n)) throw new Error(`response counter ${headers.get('secure-counter')} is not ${n}`);
  if (headers.get('content-type') !== 'application/text') throw new Error(`response content type ${headers.get('content-type')}`);
  const expected = nodeSign(login.mac, `RES ${n} ${status}\n`, text);
  if (headers.get('secure-signature') !== expected) throw new Error('response signature does not match');
  return JSON.parse(nodeCtr(login.key, n, 1, Buffer.from(text, 'base64')).toString('utf8'));
}

/** Sends one secure request through `service.fetch` and returns the raw result. */
export function sendSecure(service: Service, method: string, target: string, message: SecureMessage) {
  return call(service, method, target, { headers: message.headers, body: message.body });
}

/** Sends one secure request and opens the answer; returns HTTP status and decrypted envelope. */
export async function secureCall(service: Service, login: NodeLogin, n: number, method: string, target: string, json?: unknown) {
  const result = await sendSecure(service, method, target, secureRequest(login, n, method, target, json));
  return { status: result.status, envelope: openSecureResponse(login, n, result.status, result.headers, result.text) };
}
