/**
 * The typed client's uploadFile / downloadFile over real HTTP (adapters/node.ts), with every login kind.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serve } from '../../adapters/node.js';
import { createClient, OdbRestError, type LoginCredentials } from '../../src/client/index.js';
import type { Service } from '../../src/index.js';
import { generateRsaKeyPair } from '../../src/secure/keys.js';
import { demoAccess } from '../../examples/demo-access.mjs';
import { APP_KEY, demoService, USERS } from '../helpers.js';

const alice: LoginCredentials = { user: 'alice', password: USERS.alice, appNames: ['crm'] };
type Client = ReturnType<typeof createClient>;

let service: Service;
let server: Server;
let baseUrl: string;
let keyPair: CryptoKeyPair;

beforeAll(async () => {
  service = await demoService({ access: demoAccess }); // every session uploads, alice (admins) replaces
  server = await serve(service, { port: 0, hostname: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  keyPair = await generateRsaKeyPair(2048);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const bytesOf = async (stream: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(stream).arrayBuffer());

const variants: Array<[string, (client: Client) => Promise<unknown>]> = [
  ['login', (client) => client.login(alice)],
  ['loginHybrid', (client) => client.loginHybrid(alice)],
  ['loginToken', (client) => client.loginToken(alice)],
  ['loginSecure', (client) => client.loginSecure(alice, { keyPair })],
];

describe.each(variants)('files after %s', (_kind, doLogin) => {
  let client: Client;
  beforeAll(async () => {
    client = createClient({ baseUrl, appKey: APP_KEY });
    await doLogin(client);
  });

  test('uploads, downloads (whole, a range, not modified) and replaces a file', async () => {
    const bytes = new Uint8Array(randomBytes(300_001));
    const file = await client.uploadFile(new Blob([bytes], { type: 'application/zip' }), { name: 'Größe.zip' });
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    expect(file).toMatchObject({ '~ClassName': 'Document', Name: 'Größe.zip', Size: 300_001, ContentType: 'application/zip', Sha256: sha256 });
    const id = file['~ObjectID'];

    const whole = await client.downloadFile(id);
    expect(whole.status).toBe(200);
    expect(Buffer.from(await bytesOf(whole.stream)).equals(bytes)).toBe(true);
    const range = await client.downloadFile(id, { range: 'bytes=10-19' });
    expect([range.status, await bytesOf(range.stream)]).toEqual([206, bytes.subarray(10, 20)]);
    const cached = await client.downloadFile(id, { ifNoneMatch: `"${sha256}"` });
    expect([cached.status, (await bytesOf(cached.stream)).length]).toEqual([304, 0]);

    const replaced = await client.uploadFile(new TextEncoder().encode('small now'), { replaceOID: id, contentType: 'text/plain' });
    expect(replaced).toMatchObject({ '~ObjectID': id, Size: 9, ContentType: 'text/plain' });
    expect(new TextDecoder().decode(await bytesOf((await client.downloadFile(id)).stream))).toBe('small now');
  });

  test('onProgress hears the bytes as they go, ending at the file size once the service has them all; a throwing callback does not stop the upload', async () => {
    const bytes = new Uint8Array(randomBytes(3 * 1024 * 1024 + 5));
    const heard: Array<{ loaded: number; total: number }> = [];
    const file = await client.uploadFile(new Blob([bytes]), { name: 'big.bin', onProgress: (progress) => heard.push(progress) });
    expect(file).toMatchObject({ Size: bytes.length });
    expect(heard.length).toBeGreaterThan(2); // counted chunk by chunk, not once at the end
    expect(heard.every(({ total }) => total === bytes.length)).toBe(true);
    expect(heard.map(({ loaded }) => loaded)).toEqual([...heard.map(({ loaded }) => loaded)].sort((a, b) => a - b));
    expect(heard.at(-1)).toEqual({ loaded: bytes.length, total: bytes.length });
    expect(Buffer.from(await bytesOf((await client.downloadFile(file['~ObjectID'])).stream)).equals(bytes)).toBe(true);

    const failing = await client.uploadFile(new TextEncoder().encode('still stored'), {
      onProgress: () => {
        throw new Error('the display broke');
      },
    });
    expect(new TextDecoder().decode(await bytesOf((await client.downloadFile(failing['~ObjectID'])).stream))).toBe('still stored');
    const empty: Array<{ loaded: number; total: number }> = [];
    await client.uploadFile(new Uint8Array(0), { onProgress: (progress) => empty.push(progress) });
    expect(empty).toEqual([{ loaded: 0, total: 0 }]);
  });

  test('a 0-byte file, and failures as OdbRestError', async () => {
    const empty = await client.uploadFile(new Uint8Array(0));
    expect(await bytesOf((await client.downloadFile(empty['~ObjectID'])).stream)).toEqual(new Uint8Array(0));
    await expect(client.downloadFile('NOPE0000')).rejects.toMatchObject({ internalStatus: '404', httpStatus: 404 });
    await expect(client.downloadFile(empty['~ObjectID'], { range: 'bytes=5-' })).rejects.toBeInstanceOf(OdbRestError);
  });
});
