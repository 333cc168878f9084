/**
 * Files on S3-compatible storage through the service: `odbrest serve` configured with the `files.blobs:
 * s3://...` block of docs/files.md against s3rver (a real S3 protocol server this file starts), uploads in the three steps
 * of PROTOCOL.md 6.6, a ranged download, an upload dropped half way (its multipart upload aborted),
 * and the storage unreachable (503 with Retry-After, nothing half-written) and back.
 */
import { request } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { S3_CREDENTIALS, S3Server } from '../scripts/s3-server.mjs';
import { call, loginBody, USERS } from './helpers.js';
import { patternBytes, sameBytes } from './support/blobs.js';
import { readme, readmeBlocks } from './support/readme.js';
import { remoteService, spawnLines, type LineProcess } from './support/processes.js';

const cli = join(new URL('..', import.meta.url).pathname, 'dist/cli.js');
const s3 = new S3Server();
let odbrest: LineProcess;
let url: string;
let headers: Record<string, string>;

beforeAll(async () => {
  await s3.start();
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-s3-serve-'));
  // the S3 configuration docs/files.md prints, on the local server
  const block = readmeBlocks(readme('docs/files.md'), 'docs/files.md').find((b) => b.language === 'yaml' && b.code.includes('s3://'));
  expect(block, 'docs/files.md: the yaml block of S3 storage').toBeDefined();
  const files = block!.code.replace('http://minio:9000', s3.endpoint).replace(/^files:\n/, 'files:\n  maxUploadBytes: 67108864\n');
  writeFileSync(join(dir, 'api-config.yml'), `dataFile: ./data.json\nusers: { passwordIterations: 1000 }\naccess: { Document: { create: ["*"] } }\n${files}`);
  writeFileSync(join(dir, 'data.json'), JSON.stringify({ objects: [{ '~ClassName': 'User', '~ObjectID': 'USR00001', Name: 'alice', _password: USERS.alice, _licences: ['crm'] }] }));
  odbrest = spawnLines(process.execPath, [cli, 'serve', '--port', '0', '--host', '127.0.0.1'], { AWS_ACCESS_KEY_ID: S3_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3_CREDENTIALS.secretAccessKey }, { cwd: dir });
  url = (await odbrest.waitFor((line) => line.startsWith('odbrest listening on '))).slice('odbrest listening on '.length);
  const login = await call(remoteService(url) as never, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice), headers: { appkey: 'x' } });
  headers = { appkey: 'x', sessionId: login.body.data.sessionId as string };
});
afterAll(async () => {
  await odbrest?.stop();
  await s3.stop();
  await s3.remove();
});

/** The blob ids under the bucket's `files/` prefix (what a reader of the bucket sees). */
async function storedIds(): Promise<string[]> {
  const ids: string[] = [];
  const listing = await (await fetchSigned(`${s3.endpoint}/odbrest/?list-type=2&prefix=files/`)).text();
  for (const match of listing.matchAll(/<Key>files\/([^<]*)<\/Key>/g)) ids.push(match[1]!);
  return ids.sort();
}

async function fetchSigned(address: string, init?: RequestInit): Promise<Response> {
  const { AwsClient } = await import('aws4fetch');
  return new AwsClient({ ...S3_CREDENTIALS, service: 's3', region: 'us-east-1' }).fetch(address, init);
}

async function startUpload(): Promise<string> {
  return (await call(remoteService(url) as never, 'GET', '/v1/uploadFile', { headers })).body.data.uploadId as string;
}

async function upload(bytes: Uint8Array): Promise<{ status: number; body: any; retryAfter: string | null; file?: any }> {
  const uploadId = await startUpload();
  const sent = await fetch(`${url}/v1/uploadFile/${uploadId}?name=data.bin`, { method: 'POST', headers: { ...headers, 'content-type': 'application/octet-stream' }, body: bytes as Uint8Array<ArrayBuffer> });
  const body = await sent.json();
  if (sent.status !== 200) return { status: sent.status, body, retryAfter: sent.headers.get('retry-after') };
  const finished = await call(remoteService(url) as never, 'PATCH', `/v1/uploadFile/${uploadId}`, { headers });
  return { status: finished.status, body: finished.body, retryAfter: null, file: finished.body.data };
}

test('an upload of 12 MiB goes to S3 as a multipart upload; a ranged download is a ranged GET of it', async () => {
  const bytes = patternBytes(12 * 1024 * 1024 + 5, 7);
  const { status, file } = await upload(bytes);
  expect(status).toBe(200);
  expect(file).toMatchObject({ Name: 'data.bin', Size: bytes.length });
  const id = file['~ObjectID'] as string;
  const whole = await fetch(`${url}/v1/file/${id}`, { headers });
  expect(sameBytes(new Uint8Array(await whole.arrayBuffer()), bytes)).toBe(true);
  const ranged = await fetch(`${url}/v1/file/${id}`, { headers: { ...headers, range: 'bytes=5242870-5242889' } });
  expect([ranged.status, ranged.headers.get('content-range')]).toEqual([206, `bytes 5242870-5242889/${bytes.length}`]);
  expect(sameBytes(new Uint8Array(await ranged.arrayBuffer()), bytes.subarray(5_242_870, 5_242_890))).toBe(true);
  expect(await s3.uploads()).toEqual([]);
});

test('an upload dropped half way leaves no multipart upload and no object behind', async () => {
  const before = await storedIds();
  const uploadId = await startUpload();
  await new Promise<void>((resolve) => {
    const target = new URL(`${url}/v1/uploadFile/${uploadId}?name=dropped.bin`);
    const sending = request(target, { method: 'POST', headers: { ...headers, 'content-type': 'application/octet-stream', 'content-length': String(20 * 1024 * 1024) } });
    sending.on('error', () => resolve());
    sending.write(patternBytes(12 * 1024 * 1024, 3), () => setTimeout(() => (sending.destroy(), resolve()), 1000)); // past two parts, then gone
  });
  await expect.poll(() => s3.uploads(), { timeout: 10_000 }).toEqual([]);
  expect(await storedIds()).toEqual(before);
});

test('with the storage unreachable an upload answers 503 with Retry-After and keeps nothing; back, it works and nothing acknowledged is lost', async () => {
  const kept = await upload(patternBytes(3000, 5));
  expect(kept.status).toBe(200);
  const before = await storedIds();
  await s3.stop();
  try {
    const refused = await upload(patternBytes(1000, 4));
    expect([refused.status, refused.body.status.internalStatus]).toEqual([503, '503']);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
  } finally {
    await s3.start();
  }
  expect(await storedIds()).toEqual(before);
  const again = await upload(patternBytes(1000, 4));
  expect(again.status).toBe(200);
  const read = await fetch(`${url}/v1/file/${again.file['~ObjectID']}`, { headers });
  expect(sameBytes(new Uint8Array(await read.arrayBuffer()), patternBytes(1000, 4))).toBe(true);
  const earlier = await fetch(`${url}/v1/file/${kept.file['~ObjectID']}`, { headers }); // acknowledged before the outage
  expect(sameBytes(new Uint8Array(await earlier.arrayBuffer()), patternBytes(3000, 5))).toBe(true);
});
