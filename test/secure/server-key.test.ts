/**
 * The server key: configured (PKCS#8 or PKCS#1, by value or file), shared between instances,
 * refused when unusable, and written by `odbrest keygen`.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test, vi } from 'vitest';
import { loadConfig } from '../../adapters/node-config.js';
import { keygen, parseKeygenArgs } from '../../src/cli/keygen.js';
import { createService, MemoryKeyValueStore } from '../../src/index.js';
import { call, demoService, login } from '../helpers.js';
import { nodeKeyPair, nodeSecureLogin, secureCall, secureRequest, sendSecure, serverKeyPem, type NodeKeyPair } from './node-client.js';

let client: NodeKeyPair;
let server: NodeKeyPair;

beforeAll(() => {
  client = nodeKeyPair();
  server = nodeKeyPair();
});

const spkiDer = (key: string) => createPublicKey(key).export({ type: 'spki', format: 'der' });
const pkcs1Pem = (pkcs8: string) => createPrivateKey(pkcs8).export({ type: 'pkcs1', format: 'pem' }) as string;

describe('a configured key', () => {
  test.each([
    ['PKCS#8', (pem: string) => pem],
    ['PKCS#1', pkcs1Pem],
    ['PKCS#1 with CR LF and indentation', (pem: string) => pkcs1Pem(pem).split('\n').map((line) => `    ${line}`).join('\r\n')],
  ])('%s: the key endpoint answers its public key and logins decrypt with it', async (_form, toPem) => {
    const service = await demoService({ secure: { serverKey: toPem(server.privateKey) } });
    expect(spkiDer(await serverKeyPem(service)).equals(spkiDer(server.publicKey))).toBe(true);
    const login = await nodeSecureLogin(service, client);
    expect((await secureCall(service, login, 1, 'GET', '/v1/object/USR00001')).envelope.data.Name).toBe('alice');
  });

  test('instances sharing the key and the session store accept each other’s tokens', async () => {
    const kv = new MemoryKeyValueStore();
    const first = await demoService({ secure: { serverKey: server.privateKey }, kv });
    const second = await demoService({ secure: { serverKey: pkcs1Pem(server.privateKey) }, kv });
    const login = await nodeSecureLogin(first, client);
    expect((await secureCall(second, login, 1, 'GET', '/v1/object/USR00001')).status).toBe(200);
    expect((await secureCall(first, login, 2, 'GET', '/v1/object/USR00001')).status).toBe(200);
    // the replay window is shared through the store too
    const replay = await sendSecure(second, 'GET', '/v1/object/USR00001', secureRequest(login, 2, 'GET', '/v1/object/USR00001'));
    expect(replay.body.status.internalStatus).toBe('205');
  });

  test('an instance with another key does not open the tokens, even with the same session store', async () => {
    const kv = new MemoryKeyValueStore();
    const first = await demoService({ secure: { serverKey: server.privateKey }, kv });
    const other = await demoService({ kv });
    const login = await nodeSecureLogin(first, client);
    await serverKeyPem(other); // generates its own key
    const result = await sendSecure(other, 'GET', '/v1/object/USR00001', secureRequest(login, 1, 'GET', '/v1/object/USR00001'));
    expect(result.status).toBe(401);
    expect(result.body.status.internalStatus).toBe('201');
  });

  test.each([
    ['not a PEM', 'hello', /serverKey: expected a PEM/],
    ['a public key', nodeKeyPair().publicKey, /serverKey: expected a PEM/],
    ['an encrypted PKCS#8 key', createPrivateKey(nodeKeyPair().privateKey).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' }) as string, /encrypted private keys are not supported/],
    ['a PEM with a broken body', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', /serverKey: not a readable RSA private key/],
    [
      'a 1024-bit key',
      nodeKeyPair(1024).privateKey,
      /serverKey: must have at least 2048 bits, not 1024/,
    ],
  ])('%s fails start-up', async (_what, serverKey, message) => {
    await expect(createService({ secure: { serverKey }, onError: () => undefined }).ready).rejects.toThrow(message);
  });
});

describe('no configured key', () => {
  test('one is generated when the first secure login needs it, not at start-up, and then kept', async () => {
    const generateKey = vi.spyOn(crypto.subtle, 'generateKey');
    try {
      const service = await demoService();
      expect((await call(service, 'GET', '/v1/objects/Customer', { headers: { sessionId: await login(service) } })).status).toBe(200);
      expect(generateKey).not.toHaveBeenCalled();
      const first = await call(service, 'GET', '/v2/login/secure/key');
      expect(generateKey).toHaveBeenCalledTimes(1);
      expect((await call(service, 'GET', '/v2/login/secure/key')).body).toEqual(first.body);
      expect(generateKey).toHaveBeenCalledTimes(1);
    } finally {
      generateKey.mockRestore();
    }
  });
});

describe('configuration', () => {
  const dir = () => mkdtempSync(join(tmpdir(), 'odbrest-key-'));

  test('serverKeyFile is read relative to api-config.yml', () => {
    const base = dir();
    writeFileSync(join(base, 'key.pem'), server.privateKey);
    writeFileSync(join(base, 'api-config.yml'), 'secure: { serverKeyFile: key.pem }\n');
    expect(loadConfig({}, base).options.secure?.serverKey).toBe(server.privateKey);
  });

  test('serverKey is taken by value', () => {
    const base = dir();
    writeFileSync(join(base, 'api-config.yml'), `secure:\n  serverKey: |\n${server.privateKey.trim().split('\n').map((line) => `    ${line}`).join('\n')}\n`);
    expect(loadConfig({}, base).options.secure?.serverKey?.trim()).toBe(server.privateKey.trim());
  });

  test('ODBREST_SERVER_KEY replaces the file’s serverKeyFile', () => {
    const base = dir();
    writeFileSync(join(base, 'api-config.yml'), 'secure: { serverKeyFile: missing.pem }\n');
    expect(loadConfig({ ODBREST_SERVER_KEY: server.privateKey }, base).options.secure?.serverKey).toBe(server.privateKey);
  });

  test('serverKey and serverKeyFile together are an error', () => {
    const base = dir();
    writeFileSync(join(base, 'api-config.yml'), 'secure: { serverKey: x, serverKeyFile: key.pem }\n');
    expect(() => loadConfig({}, base)).toThrow('invalid configuration: give secure.serverKey or secure.serverKeyFile, not both');
  });

  test('ODBREST_SERVER_KEY and ODBREST_SERVER_KEY_FILE together are an error', () => {
    const base = dir();
    writeFileSync(join(base, 'key.pem'), server.privateKey);
    expect(() => loadConfig({ ODBREST_SERVER_KEY: server.privateKey, ODBREST_SERVER_KEY_FILE: 'key.pem' }, base)).toThrow(
      'invalid configuration: give secure.serverKey or secure.serverKeyFile, not both',
    );
  });

  test('ODBREST_SERVER_KEY_FILE replaces the file’s serverKey', () => {
    const base = dir();
    writeFileSync(join(base, 'key.pem'), server.privateKey);
    writeFileSync(join(base, 'api-config.yml'), 'secure: { serverKey: not-a-pem }\n');
    expect(loadConfig({ ODBREST_SERVER_KEY_FILE: 'key.pem' }, base).options.secure?.serverKey).toBe(server.privateKey);
  });

  test('a missing key file is an error naming it', () => {
    const base = dir();
    expect(() => loadConfig({ ODBREST_SERVER_KEY_FILE: 'nope.pem' }, base)).toThrow(`cannot read server key file ${join(base, 'nope.pem')}: ENOENT`);
  });
});

describe('odbrest keygen', () => {
  test('writes a PKCS#8 private key (owner-only) and its SPKI public key; a service uses them', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'odbrest-keygen-')), 'keys');
    const { privateKeyPath, publicKeyPath } = await keygen(parseKeygenArgs(['--bits', '2048', '--out', out]));
    const privatePem = readFileSync(privateKeyPath, 'utf8');
    const publicPem = readFileSync(publicKeyPath, 'utf8');
    expect(privatePem).toMatch(/^-----BEGIN PRIVATE KEY-----\r\n/);
    expect(publicPem).toMatch(/^-----BEGIN PUBLIC KEY-----\r\n/);
    expect(statSync(privateKeyPath).mode & 0o777).toBe(0o600);
    expect(createPrivateKey(privatePem).asymmetricKeyDetails?.modulusLength).toBe(2048);
    const service = await demoService({ secure: { serverKey: privatePem } });
    expect(await serverKeyPem(service)).toBe(publicPem);
    expect((await nodeSecureLogin(service, client)).envelope.status.internalStatus).toBe('0');
  });

  test('never overwrites an existing key', async () => {
    const out = mkdtempSync(join(tmpdir(), 'odbrest-keygen-'));
    await keygen({ out });
    await expect(keygen({ out })).rejects.toThrow(/already holds a key/);
  });

  test.each([['1024'], ['2047'], ['abc'], ['16384']])('--bits %s is refused', async (bits) => {
    await expect(keygen(parseKeygenArgs(['--bits', bits]))).rejects.toThrow('keygen: --bits must be a multiple of 8 from 2048 to 8192');
  });

  test('unknown arguments are refused', () => {
    expect(() => parseKeygenArgs(['--size', '2048'])).toThrow('keygen: unknown or incomplete argument --size');
    expect(() => parseKeygenArgs(['--out'])).toThrow('keygen: unknown or incomplete argument --out');
  });
});
