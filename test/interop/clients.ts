/**
 * Three independent clients of the hybrid `/v2/login` (PROTOCOL.md 3.4), one per real client of the
 * product, written with node:crypto only (never the library's code), so the interoperability tests
 * do not check the library against itself. Each sends its own `publicKey` form and plaintext shape:
 *
 * - Dart (`gsd_restapi`): reads the key endpoint's PEM by dropping empty lines and lines starting
 *   with `---`; keeps ONE AES key for all its logins; sends compact JSON with `"2faToken":""`,
 *   `device` and `furtherencryption`; its `publicKey` is its PEM text itself (header, first line and
 *   footer indented by four spaces, CR LF between base64 lines, LF elsewhere, trailing spaces).
 * - TypeScript: a standard SPKI PEM; a fresh AES key per login; compact JSON.
 * - C#: strips exactly the PEM header, footer, `\r` and `\n` from the key endpoint's answer; a
 *   4096-bit key sent as bare base64 SPKI DER; pretty-printed JSON with CR LF.
 *
 * Each reads the answer as the real clients do: JSON if the body starts with `{`, otherwise exactly
 * one `|` between `base64(RSA-OAEP-SHA-256(K2))` and `base64(IV2 || AES-256-CBC(K2, envelope))`.
 */
import { constants, createCipheriv, createDecipheriv, createHash, createPublicKey, generateKeyPair, privateDecrypt, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

const OAEP_SHA256 = { padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' } as const;

/** A `fetch`-shaped function: the global `fetch`, or `(url, init) => service.fetch(new Request(url, init))`. */
export type Transport = (url: string, init: RequestInit) => Promise<Response>;

export interface Connection {
  transport: Transport;
  /** The service root, e.g. `http://127.0.0.1:8080/api/demo` (no trailing slash). */
  baseUrl: string;
  appKey: string;
}

export interface ClientKeyPair {
  publicKey: string;
  privateKey: string;
}

/** What the client asks to log in with; `pass` is the plain password (the client sends its MD5). */
export interface LoginFields {
  user: string;
  password: string;
  appNames: string[];
}

export interface InteropLogin {
  sessionId: string;
  /** The answer's envelope, decrypted. */
  envelope: any;
  /** Whether the answer came as `A|B` (true) or as plain JSON. */
  sealed: boolean;
}

/** An answer the client could not read (neither JSON nor exactly one `|`, or it failed to decrypt). */
export class UnreadableAnswer extends Error {}

const generate = promisify(generateKeyPair);

export function rsaKeyPair(bits: number): Promise<ClientKeyPair> {
  return generate('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

/** `IV || AES-CBC(key, plaintext)` with PKCS#7 padding (AES-256 for the 32-byte keys of the protocol). */
export function aesCbcSeal(key: Buffer, iv: Buffer, plaintext: Buffer): Buffer {
  const cipher = createCipheriv(`aes-${key.length * 8}-cbc`, key, iv);
  return Buffer.concat([iv, cipher.update(plaintext), cipher.final()]);
}

export function aesCbcOpen(key: Buffer, sealed: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-cbc', key, sealed.subarray(0, 16));
  return Buffer.concat([decipher.update(sealed.subarray(16)), decipher.final()]);
}

export function rsaOaepSha256Encrypt(publicKey: KeyObject | string, data: Buffer): Buffer {
  return publicEncrypt({ key: publicKey, ...OAEP_SHA256 }, data);
}

const spkiDer = (publicKeyPem: string) => createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' });
const derKey = (der: Buffer) => createPublicKey({ key: der, format: 'der', type: 'spki' });

/** The Dart client's PEM text of a public key, byte for byte as its `encodeToPem` writes it. */
export function dartPem(publicKeyPem: string): string {
  const lines = spkiDer(publicKeyPem).toString('base64').match(/.{1,64}/g)!;
  return `    -----BEGIN PUBLIC KEY-----\n    ${lines.join('\r\n')}\n    -----END PUBLIC KEY-----\n    `;
}

/** Bare base64 of the SPKI DER (the C# client's form). */
export function bareDerBase64(publicKeyPem: string): string {
  return spkiDer(publicKeyPem).toString('base64');
}

/** Reads a login answer as the real clients do; throws `UnreadableAnswer` when it cannot. */
export function readAnswer(privateKeyPem: string, text: string): { envelope: any; sealed: boolean } {
  if (text.startsWith('{')) return { envelope: JSON.parse(text), sealed: false };
  const parts = text.split('|');
  if (parts.length !== 2) throw new UnreadableAnswer(`expected exactly one "|" in the answer, found ${parts.length - 1}`);
  try {
    const key = privateDecrypt({ key: privateKeyPem, ...OAEP_SHA256 }, Buffer.from(parts[0]!, 'base64'));
    return { envelope: JSON.parse(aesCbcOpen(key, Buffer.from(parts[1]!, 'base64')).toString('utf8')), sealed: true };
  } catch (error) {
    throw new UnreadableAnswer(`the answer could not be decrypted: ${(error as Error).message}`);
  }
}

interface ClientStyle {
  name: string;
  /** The server public key from the key endpoint's `data.key`, parsed the way this client does. */
  parseServerKey(pem: string): KeyObject;
  plaintext(fields: LoginFields): string;
  /** The AES key for the next login. */
  aesKey(): Buffer;
  /** The `publicKey` member; `undefined` leaves it out. */
  publicKeyMember: string | undefined;
  headers(appKey: string): Record<string, string>;
  /** The headers of `GET /v2/login/key` (default: `headers`); the product's samples send none. */
  keyHeaders?: Record<string, string>;
  /** The session header's name as this client spells it. */
  sessionHeader: string;
}

export class InteropClient {
  constructor(
    readonly keys: ClientKeyPair,
    private readonly style: ClientStyle,
  ) {}

  get name(): string {
    return this.style.name;
  }

  /** The `POST /v2/login` body text for a server key PEM (as `GET /v2/login/key` answers it). */
  loginBody(serverKeyPem: string, fields: LoginFields, iv: Buffer = randomBytes(16)): string {
    return this.bodyFor(serverKeyPem, Buffer.from(this.style.plaintext(fields), 'utf8'), iv);
  }

  /** A body for any plaintext bytes, in this client's framing (negative cases). */
  bodyFor(serverKeyPem: string, plaintext: Buffer, iv: Buffer = randomBytes(16), aesKey = this.style.aesKey()): string {
    const serverKey = this.style.parseServerKey(serverKeyPem);
    const body: Record<string, string> = {
      aesKey: rsaOaepSha256Encrypt(serverKey, aesKey).toString('base64'),
      data: aesCbcSeal(aesKey, iv, plaintext).toString('base64'),
    };
    if (this.style.publicKeyMember !== undefined) body.publicKey = this.style.publicKeyMember;
    return JSON.stringify(body);
  }

  readAnswer(text: string): { envelope: any; sealed: boolean } {
    return readAnswer(this.keys.privateKey, text);
  }

  /** The whole login as the real client does it: key endpoint, hybrid body, answer. */
  async login(connection: Connection, fields: LoginFields): Promise<InteropLogin> {
    const keyAnswer = this.style.keyHeaders
      ? await connection.transport(`${connection.baseUrl}/v2/login/key`, { method: 'GET', headers: this.style.keyHeaders })
      : await this.request(connection, 'GET', '/v2/login/key');
    const serverKeyPem = (await keyAnswer.json()).data.key as string;
    const answer = await connection.transport(`${connection.baseUrl}/v2/login`, {
      method: 'POST',
      headers: this.style.headers(connection.appKey),
      body: this.loginBody(serverKeyPem, fields),
    });
    const { envelope, sealed } = this.readAnswer(await answer.text());
    return { sessionId: envelope.data?.sessionId, envelope, sealed };
  }

  /** A request with this client's headers (and its session header when given). */
  request(connection: Connection, method: string, path: string, options: { sessionId?: string; json?: unknown } = {}): Promise<Response> {
    const headers = this.style.headers(connection.appKey);
    if (options.sessionId !== undefined) headers[this.style.sessionHeader] = options.sessionId;
    const body = options.json === undefined ? undefined : JSON.stringify(options.json);
    return connection.transport(`${connection.baseUrl}${path}`, { method, headers, body });
  }
}

const md5Hex = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

/** Dart (`gsd_restapi`): indented CR LF PEM as text, one AES key for every login, extra members. */
export async function dartClient(options: { keys?: ClientKeyPair; aesKey?: Buffer } = {}): Promise<InteropClient> {
  const keys = options.keys ?? (await rsaKeyPair(2048));
  const aesKey = options.aesKey ?? randomBytes(32); // kept in the app's secure storage
  return new InteropClient(keys, {
    name: 'Dart',
    parseServerKey: (pem) =>
      derKey(
        Buffer.from(
          pem
            .split('\n')
            .filter((line) => line.length > 0 && !line.startsWith('---'))
            .join('')
            .replace(/\s/g, ''),
          'base64',
        ),
      ),
    plaintext: ({ user, password, appNames }) =>
      JSON.stringify({
        user,
        pass: md5Hex(password),
        '2faToken': '',
        appNames,
        device: { deviceId: 'interop-dart', device: 'test', systemVersion: '1', firebaseToken: '', deviceType: '0', systemType: '0', systemString: '' },
        furtherencryption: false,
      }),
    aesKey: () => aesKey,
    publicKeyMember: dartPem(keys.publicKey),
    headers: (appKey) => ({ 'Content-type': 'application/json; charset=utf-8', appkey: appKey }),
    sessionHeader: 'sessionid',
  });
}

/** What the product's samples do differently from its libraries: the password in plain text, the key fetched with no headers. */
export interface SampleOptions {
  /** `pass` is the password itself (the C# sample), not its MD5. */
  plainPassword?: boolean;
  /** `GET /v2/login/key` with no headers at all (the TypeScript sample). */
  bareKeyFetch?: boolean;
}

/** TypeScript: standard SPKI PEM, a fresh AES key per login, compact JSON. */
export async function typescriptClient(options: { keys?: ClientKeyPair; withoutPublicKey?: boolean } & SampleOptions = {}): Promise<InteropClient> {
  const keys = options.keys ?? (await rsaKeyPair(2048));
  return new InteropClient(keys, {
    name: 'TypeScript',
    parseServerKey: (pem) => createPublicKey(pem),
    plaintext: ({ user, password, appNames }) => JSON.stringify({ user, pass: options.plainPassword ? password : md5Hex(password), appNames }),
    aesKey: () => randomBytes(32),
    publicKeyMember: options.withoutPublicKey ? undefined : keys.publicKey,
    headers: (appKey) => ({ 'Content-Type': 'application/json', appKey }),
    ...(options.bareKeyFetch ? { keyHeaders: {} } : {}),
    sessionHeader: 'sessionId',
  });
}

/** C#: bare base64 DER of a 4096-bit key, pretty-printed JSON with CR LF. */
export async function csharpClient(options: { keys?: ClientKeyPair } & SampleOptions = {}): Promise<InteropClient> {
  const keys = options.keys ?? (await rsaKeyPair(4096));
  return new InteropClient(keys, {
    name: 'C#',
    parseServerKey: (pem) =>
      derKey(
        Buffer.from(
          pem.replace('-----BEGIN PUBLIC KEY-----', '').replace('-----END PUBLIC KEY-----', '').replaceAll('\r', '').replaceAll('\n', ''),
          'base64',
        ),
      ),
    plaintext: ({ user, password, appNames }) => JSON.stringify({ user, pass: options.plainPassword ? password : md5Hex(password), appNames }, null, 2).replaceAll('\n', '\r\n'),
    aesKey: () => randomBytes(32),
    publicKeyMember: bareDerBase64(keys.publicKey),
    headers: (appKey) => ({ 'Content-Type': 'application/json; charset=utf-8', AppKey: appKey }),
    ...(options.bareKeyFetch ? { keyHeaders: {} } : {}),
    sessionHeader: 'sessionId',
  });
}
