/**
 * Files on S3-compatible storage through the service: `odbrest serve` configured with the `files.blobs:
 * s3://...` block of docs/files.md against s3rver (a real S3 protocol server this file starts), uploads in the three steps
 * of PROTOCOL.md 6.6, a ranged download, an upload dropped half way (its multipart upload aborted),
 * and the storage unreachable (503 with Retry-After, nothing half-written) and back. Then the complete
 * `api-config.yml` of docs/operations.md, served as printed against this S3 server, an SMTP server
 * (smtp-server), PostgreSQL and Redis: a file up and down, and a password reset by mail.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { request } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { S3_CREDENTIALS, S3Server } from '../scripts/s3-server.mjs';
import { call, loginBody, USERS } from './helpers.js';
import { patternBytes, sameBytes } from './support/blobs.js';
import { codeBlocks, readme, readmeBlocks, readmeSection } from './support/readme.js';
import { remoteService, spawnLines, type LineProcess } from './support/processes.js';
import { DATABASE_URL, deleteKeys, dropSchema, REDIS_URL, RUN_ID, serverAvailable } from './support/servers.js';
import { startSmtp, type TestSmtp } from './support/smtp.js';

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

const databases = (await serverAvailable('PostgreSQL', 'the served api-config.yml of docs/operations.md')) && (await serverAvailable('Redis', 'the served api-config.yml of docs/operations.md'));

describe.runIf(databases)('the complete api-config.yml of docs/operations.md, served by odbrest serve', () => {
  const schema = `ops_config_${RUN_ID}`;
  const prefix = `crm-${RUN_ID}:`;
  let smtp: TestSmtp;
  let full: LineProcess;
  let base: string;

  beforeAll(async () => {
    smtp = await startSmtp();
    const printed = codeBlocks(readmeSection('The standalone server: `odbrest serve`', readme('docs/operations.md')), 'yaml')[0]!;
    // the servers of the block are this file's: each printed address replaced (and each must be there)
    const servers: Array<[string, string]> = [
      ['postgres://odbrest@db.internal:5432/crm', DATABASE_URL],
      ['schema: public', `schema: ${schema}`],
      ['redis://cache.internal:6379', REDIS_URL],
      ['prefix: "crm:"', `prefix: "${prefix}"`],
      ['http://minio:9000', s3.endpoint],
      ['smtp://mailer:secret@mail.example.com:587', smtp.url],
    ];
    let yaml = printed;
    for (const [shown, actual] of servers) {
      expect(yaml, shown).toContain(shown);
      yaml = yaml.replaceAll(shown, actual);
    }
    const dir = mkdtempSync(join(tmpdir(), 'odbrest-ops-config-'));
    writeFileSync(join(dir, 'api-config.yml'), yaml);
    // the macros module the guide prints beside the file, and the demo data with a user who has an address
    writeFileSync(join(dir, 'macros.mjs'), codeBlocks(readme('docs/operations.md'), 'js').find((code) => code.startsWith('// macros.mjs'))!);
    const demo = JSON.parse(readFileSync(new URL('../examples/demo-data.json', import.meta.url), 'utf8'));
    mkdirSync(join(dir, 'keys'));
    const pem = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' });
    writeFileSync(join(dir, 'keys/server-key.pem'), pem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey));
    writeFileSync(join(dir, 'keys/AuthKey_KEY.p8'), pem(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey));
    // the entries of the block's providers (docs/external-login.md) are objects of the database
    const apple = { clientId: 'com.example.web', serverAddress: 'https://api.example.com', teamId: 'TEAM', keyIdentifier: 'KEY', keyPath: join(dir, 'keys/AuthKey_KEY.p8') };
    demo.objects.push(
      { '~ClassName': 'User', '~ObjectID': 'USROPS01', Name: 'erin', Email: 'erin@example.com', _password: 'erin-first-secret', _licences: ['crm'], Groups: { $set: [] } },
      { '~ClassName': 'OAuthProvider', name: 'Google', type: 'google', additionalData: JSON.stringify({ clientId: 'g-id', clientSecret: 'g-secret' }) },
      { '~ClassName': 'OAuthProvider', name: 'Apple', type: 'apple', additionalData: JSON.stringify(apple) },
    );
    writeFileSync(join(dir, 'demo-data.json'), JSON.stringify(demo));
    const env = { AWS_ACCESS_KEY_ID: S3_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3_CREDENTIALS.secretAccessKey, ODBREST_2FA_KEY: 'the two-factor key of this test, 32 characters or more' };
    full = spawnLines(process.execPath, [cli, 'serve', '--port', '0'], env, { cwd: dir });
    base = (await full.waitFor((line) => line.startsWith('odbrest listening on '), 60_000)).slice('odbrest listening on '.length);
  }, 90_000);
  afterAll(async () => {
    await full?.stop();
    await smtp?.close();
    await dropSchema(schema);
    await deleteKeys(prefix);
  });

  const post = async (path: string, json: unknown, headers: Record<string, string> = {}) => {
    const answer = await fetch(base + path, { method: 'POST', headers: { appkey: 'web', 'content-type': 'application/json', ...headers }, body: JSON.stringify(json) });
    return (await answer.json()) as any;
  };
  const login = async (user: string, password: string) => {
    const answer = await post('/v1/login', loginBody(user, password));
    expect(answer.status.internalStatus, JSON.stringify(answer)).toBe('0');
    return { appkey: 'web', sessionId: answer.data.sessionId as string };
  };

  test('a file goes up into the S3 bucket and comes back down', async () => {
    const session = await login('alice', USERS.alice);
    const bytes = patternBytes(70_000, 9);
    const started = await (await fetch(`${base}/v1/uploadFile`, { headers: session })).json();
    expect(started.status.internalStatus, JSON.stringify(started)).toBe('0');
    const { uploadId } = started.data;
    const sent = await fetch(`${base}/v1/uploadFile/${uploadId}?name=notes.bin`, { method: 'POST', headers: { ...session, 'content-type': 'application/octet-stream' }, body: bytes as Uint8Array<ArrayBuffer> });
    expect(sent.status, await sent.clone().text()).toBe(200);
    const file = (await (await fetch(`${base}/v1/uploadFile/${uploadId}`, { method: 'PATCH', headers: session })).json()).data;
    expect(file).toMatchObject({ Name: 'notes.bin', Size: bytes.length });
    expect(await storedIds()).toContain(file['~ObjectID']); // in the bucket of the block, under its prefix
    const read = await fetch(`${base}/v1/file/${file['~ObjectID']}`, { headers: session });
    expect(sameBytes(new Uint8Array(await read.arrayBuffer()), bytes)).toBe(true);
  });

  test('a password reset is mailed through the SMTP server, and its token completes the reset', async () => {
    const before = smtp.mails.length;
    expect((await post('/v1/user/password/reset', { user: 'erin' })).status.internalStatus).toBe('0');
    const mail = await smtp.mail(before + 1);
    expect([mail.to, mail.from?.text]).toMatchObject([{ text: 'erin@example.com' }, 'noreply@example.com']);
    const token = new URL(/https:\/\/app\.example\.com\/reset\?\S+/.exec(mail.text!)![0]).searchParams.get('token')!;
    expect((await post('/v1/user/password/reset/confirm', { token, newPass: 'erin-second-secret' })).status.internalStatus).toBe('0');
    await login('erin', 'erin-second-secret');
  });
});
