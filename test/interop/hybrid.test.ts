/**
 * The hybrid `/v2/login` primitives (src/secure/hybrid.ts) and route functions
 * (src/secure/hybrid-login.ts) against three independent node:crypto clients, one per real client
 * (test/interop/clients.ts), fixed vectors, and every way a body can fail to open.
 */
import { constants, createHash, generateKeyPairSync, privateDecrypt, publicEncrypt, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, test, vi } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { isHybridLoginBody, openHybridLogin, sealHybridAnswer, type HybridLoginBody } from '../../src/secure/hybrid.js';
import { importClientPublicKey, modulusBits, OAEP_SHA256 } from '../../src/secure/keys.js';
import { ServerKeySource, type ServerKey } from '../../src/secure/server-key.js';
import {
  aesCbcSeal,
  bareDerBase64,
  csharpClient,
  dartClient,
  dartPem,
  readAnswer,
  rsaOaepSha256Encrypt,
  typescriptClient,
  type InteropClient,
  type LoginFields,
} from './clients.js';
import { KEY, OPEN, PUBLIC_KEY_8192, SEAL } from './vectors.js';

const ALICE: LoginFields = { user: 'alice', password: 'alice-secret', appNames: ['crm'] };
const md5Hex = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');
const publicPem = (bits: number) => generateKeyPairSync('rsa', { modulusLength: bits }).publicKey.export({ type: 'spki', format: 'pem' }) as string;

let source: ServerKeySource;
let server: ServerKey;
let dart: InteropClient;
let typescript: InteropClient;
let csharp: InteropClient;

beforeAll(async () => {
  source = new ServerKeySource(KEY.privateKey);
  [server, dart, typescript, csharp] = await Promise.all([source.get(), dartClient(), typescriptClient(), csharpClient()]);
});

const open = (body: HybridLoginBody) => openHybridLogin(server.hybridKey, body);

describe('fixed vectors', () => {
  test('a body sealed once with node:crypto opens with the checked-in key', async () => {
    const opened = await open({ aesKey: OPEN.aesKey, data: OPEN.data });
    expect(opened).toEqual({ login: JSON.parse(OPEN.login), clientKey: undefined });
  });

  test('the answer with fixed K2 and IV2 is A|B with the expected B, and A wraps K2', async () => {
    const clientKey = await importClientPublicKey(KEY.publicKey, OAEP_SHA256);
    const text = await sealHybridAnswer(clientKey, SEAL.answer, { key: SEAL.key, iv: SEAL.iv });
    const [a, b, ...rest] = text.split('|');
    expect(rest).toEqual([]);
    expect(b).toBe(SEAL.B);
    expect(a).toMatch(/^[A-Za-z0-9+/]{342}==$/); // 256 bytes, standard base64 with padding
    const k2 = privateDecrypt({ key: KEY.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(a!, 'base64'));
    expect(new Uint8Array(k2)).toEqual(SEAL.key);
    expect(readAnswer(KEY.privateKey, text)).toEqual({ envelope: JSON.parse(SEAL.answer), sealed: true });
  });

  test('fresh K2 and IV2 for every answer', async () => {
    const clientKey = await importClientPublicKey(KEY.publicKey, OAEP_SHA256);
    const [first, second] = await Promise.all([sealHybridAnswer(clientKey, SEAL.answer), sealHybridAnswer(clientKey, SEAL.answer)]);
    const iv = (text: string) => Buffer.from(text.split('|')[1]!, 'base64').subarray(0, 16).toString('hex');
    const k2 = (text: string) =>
      privateDecrypt({ key: KEY.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(text.split('|')[0]!, 'base64')).toString('hex');
    expect(iv(first)).not.toBe(iv(second));
    expect(k2(first)).not.toBe(k2(second));
  });
});

describe.each([
  ['Dart', () => dart, 2048],
  ['TypeScript', () => typescript, 2048],
  ['C#', () => csharp, 4096],
] as const)('the %s client', (_name, client, bits) => {
  test('its body opens to its login JSON, with its key', async () => {
    const body = JSON.parse(client().loginBody(server.publicKeyPem, ALICE));
    expect(isHybridLoginBody(body)).toBe(true);
    const opened = await open(body);
    expect(opened.login).toMatchObject({ user: 'alice', pass: md5Hex('alice-secret'), appNames: ['crm'] });
    expect(modulusBits(opened.clientKey!)).toBe(bits);
  });

  test('it reads the sealed answer', async () => {
    const { clientKey } = await open(JSON.parse(client().loginBody(server.publicKeyPem, ALICE)));
    const text = await sealHybridAnswer(clientKey!, SEAL.answer);
    expect(client().readAnswer(text)).toEqual({ envelope: JSON.parse(SEAL.answer), sealed: true });
  });


});

describe('what each client sends', () => {

  test('Dart: its publicKey is the indented PEM text with CR LF between base64 lines', () => {
    const member = JSON.parse(dart.loginBody(server.publicKeyPem, ALICE)).publicKey as string;
    expect(member).toBe(dartPem(dart.keys.publicKey));
    expect(member).toMatch(/^ {4}-----BEGIN PUBLIC KEY-----\n {4}[A-Za-z0-9+/]{64}\r\n[\s\S]*\n {4}-----END PUBLIC KEY-----\n {4}$/);
  });

  test('C#: a pretty-printed plaintext with CR LF opens', async () => {
    const opened = await open(JSON.parse(csharp.loginBody(server.publicKeyPem, ALICE)));
    expect(opened.login).toEqual({ user: 'alice', pass: md5Hex('alice-secret'), appNames: ['crm'] });
  });



});

describe('every publicKey form', () => {
  const forms: Array<[string, (pem: string) => string]> = [
    ['standard SPKI PEM (TypeScript)', (pem) => pem],
    ['the Dart PEM as text', dartPem],
    ['bare base64 SPKI DER (C#)', bareDerBase64],
    ['base64 of the PEM (3.2)', (pem) => Buffer.from(pem).toString('base64')],
    ['base64 of an indented PEM with mixed line breaks (3.2)', (pem) => Buffer.from(dartPem(pem).replaceAll('\r\n', '\n\t ')).toString('base64')],
    ['a PEM with CR LF and surrounding whitespace', (pem) => `\r\n  ${pem.replaceAll('\n', '\r\n')}  \r\n`],
  ];
  test.each(forms)('%s', async (_form, toForm) => {
    const body = { aesKey: OPEN.aesKey, data: OPEN.data, publicKey: toForm(KEY.publicKey) };
    const { clientKey } = await open(body);
    const text = await sealHybridAnswer(clientKey!, SEAL.answer);
    expect(readAnswer(KEY.privateKey, text).envelope).toEqual(JSON.parse(SEAL.answer));
  });

  test('spelled publickey (as 3.2 allows)', async () => {
    const { clientKey } = await open({ aesKey: OPEN.aesKey, data: OPEN.data, publickey: KEY.publicKey });
    expect(modulusBits(clientKey!)).toBe(2048);
  });

  test('publicKey null means none', async () => {
    expect((await open({ aesKey: OPEN.aesKey, data: OPEN.data, publicKey: null })).clientKey).toBeUndefined();
  });
});

/** A body whose AES key, data plaintext and members can be chosen freely. */
function body({ key = randomBytes(32), wrapped = key, plaintext = Buffer.from(OPEN.login), publicKey }: { key?: Buffer; wrapped?: Buffer; plaintext?: Buffer; publicKey?: unknown } = {}): HybridLoginBody {
  const aesKey = rsaOaepSha256Encrypt(server.publicKeyPem, wrapped).toString('base64');
  const sealed: HybridLoginBody = { aesKey, data: aesCbcSeal(key, randomBytes(16), plaintext).toString('base64') };
  if (publicKey !== undefined) sealed.publicKey = publicKey;
  return sealed;
}

const flipBit = (base64Text: string, index: (length: number) => number, bit = 1) => {
  const bytes = Buffer.from(base64Text, 'base64');
  bytes[index(bytes.length)]! ^= bit;
  return bytes.toString('base64');
};

const FAILURES: Array<[string, () => HybridLoginBody]> = [
  // data sealed with AES-128 or AES-192 under that very K: only the size of K is wrong
  ['K of 16 bytes', () => body({ key: randomBytes(16) })],
  ['K of 24 bytes', () => body({ key: randomBytes(24) })],
  ['K of 31 bytes', () => body({ wrapped: randomBytes(31) })],
  ['K of 33 bytes', () => body({ wrapped: randomBytes(33) })],
  ['K of 0 bytes', () => body({ wrapped: Buffer.alloc(0) })],
  ["a flipped bit in data's last-but-one block (the padding)", () => ({ ...OPEN, data: flipBit(OPEN.data, (n) => n - 17) })],
  ["a flipped bit in data's last-but-one block (the text)", () => ({ ...OPEN, data: flipBit(OPEN.data, (n) => n - 24, 0x80) })],
  ['a flipped bit in aesKey', () => ({ ...OPEN, aesKey: flipBit(OPEN.aesKey, (n) => n - 1) })],
  ['aesKey: a character outside base64', () => ({ ...OPEN, aesKey: `!${OPEN.aesKey.slice(1)}` })],
  ['aesKey: base64url', () => ({ ...OPEN, aesKey: OPEN.aesKey.replaceAll('+', '-').replaceAll('/', '_') })],
  ['aesKey: without padding', () => ({ ...OPEN, aesKey: OPEN.aesKey.replace(/=+$/, '') })],
  ['aesKey: empty', () => ({ ...OPEN, aesKey: '' })],
  ['aesKey: twice the key size', () => ({ ...OPEN, aesKey: Buffer.concat([Buffer.from(OPEN.aesKey, 'base64'), Buffer.from(OPEN.aesKey, 'base64')]).toString('base64') })],
  ['aesKey: RSA-OAEP with SHA-1', () => ({ ...OPEN, aesKey: publicEncrypt({ key: server.publicKeyPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, randomBytes(32)).toString('base64') })],
  ['aesKey: RSA PKCS#1 v1.5', () => ({ ...OPEN, aesKey: publicEncrypt({ key: server.publicKeyPem, padding: constants.RSA_PKCS1_PADDING }, randomBytes(32)).toString('base64') })],
  ['aesKey: under another key', () => ({ ...OPEN, aesKey: rsaOaepSha256Encrypt(publicPem(2048), randomBytes(32)).toString('base64') })],
  ['data: a character outside base64', () => ({ ...OPEN, data: `${OPEN.data.slice(0, 10)}*${OPEN.data.slice(11)}` })],
  ['data: with a line break', () => ({ ...OPEN, data: `${OPEN.data.slice(0, 64)}\n${OPEN.data.slice(64)}` })],
  ['data: empty', () => ({ ...OPEN, data: '' })],
  ['data: only an IV', () => ({ ...OPEN, data: Buffer.from(OPEN.data, 'base64').subarray(0, 16).toString('base64') })],
  ['data: not whole blocks', () => ({ ...OPEN, data: Buffer.from(OPEN.data, 'base64').subarray(0, 40).toString('base64') })],
  ['data: larger than 64 KiB', () => body({ plaintext: Buffer.from(JSON.stringify({ user: 'alice', pad: 'x'.repeat(70_000) })) })],
  ['publicKey of 1024 bits', () => ({ ...OPEN, publicKey: publicPem(1024) })],
  ['publicKey of 8192 bits', () => ({ ...OPEN, publicKey: PUBLIC_KEY_8192 })],
  ['publicKey: not a key', () => ({ ...OPEN, publicKey: 'hello' })],
  ['publicKey: a PEM with broken base64', () => ({ ...OPEN, publicKey: KEY.publicKey.replace(/\n[A-Za-z]/, '\n!') })],
  ['publicKey: a PEM cut short', () => ({ ...OPEN, publicKey: KEY.publicKey.split('\n').slice(0, 4).join('\n') })],
  ['publicKey: an EC key', () => ({ ...OPEN, publicKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }) as string })],
  ['publicKey: base64 of random bytes', () => ({ ...OPEN, publicKey: randomBytes(300).toString('base64') })],
  ['publicKey: a number', () => ({ ...OPEN, publicKey: 42 })],
  ['publicKey: too long', () => ({ ...OPEN, publicKey: `${KEY.publicKey}${' '.repeat(20_000)}x` })],
  ['a plaintext that is not JSON', () => body({ plaintext: Buffer.from('user=alice&pass=x') })],
  ['a plaintext with a JSON syntax error', () => body({ plaintext: Buffer.from(OPEN.login.slice(0, -1)) })],
  ['a plaintext that is not UTF-8', () => body({ plaintext: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) })],
  ['an empty plaintext', () => body({ plaintext: Buffer.alloc(0) })],
];

describe('every failure before the login JSON is read is the same 310', () => {
  const expected = { code: '310', status: 401, message: 'the hybrid login could not be decrypted: aesKey, data or publicKey is malformed', debugMessage: undefined, data: {}, headers: {} };

  test.each(FAILURES)('%s', async (_case, make) => {
    const error = await open(make()).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ApiError);
    const { code, status, message, debugMessage, data, headers } = error as ApiError;
    expect({ code, status, message, debugMessage, data, headers }).toEqual(expected);
    expect((error as ApiError).cause).toBeUndefined();
  });


});

describe('bounded cost', () => {

  test.each([
    ['an aesKey of the wrong length', () => ({ ...OPEN, aesKey: Buffer.concat([Buffer.from(OPEN.aesKey, 'base64'), Buffer.alloc(3)]).toString('base64') })],
    ['data larger than 64 KiB', () => ({ ...OPEN, data: 'A'.repeat(65_540) })],
    ['data not whole blocks', () => ({ ...OPEN, data: Buffer.from(OPEN.data, 'base64').subarray(0, 40).toString('base64') })],
    ['a publicKey of 8192 bits', () => ({ ...OPEN, publicKey: PUBLIC_KEY_8192 })],
    ['a publicKey of 1024 bits', () => ({ ...OPEN, publicKey: publicPem(1024) })],
  ])('%s is refused before any RSA private-key work', async (_case, make) => {
    const decrypt = vi.spyOn(crypto.subtle, 'decrypt');
    try {
      await expect(open(make())).rejects.toMatchObject({ code: '310' });
      expect(decrypt).not.toHaveBeenCalled();
      await open({ aesKey: OPEN.aesKey, data: OPEN.data, publicKey: KEY.publicKey });
      expect(decrypt.mock.calls.map(([algorithm]) => (algorithm as { name: string }).name)).toEqual(['RSA-OAEP', 'AES-CBC']);
    } finally {
      decrypt.mockRestore();
    }
  });
});
