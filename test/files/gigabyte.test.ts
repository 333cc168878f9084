/**
 * A 1 GiB file up (multipart, as the Dart client sends it) and down through `odbrest serve` (the Node
 * adapter) on the disk blob store, while the server's resident memory is sampled from
 * /proc/<pid>/status every 50 ms: the server streams, so its RSS stays within 64 MiB of where it
 * started. The server runs in its own process, so the client's buffers are not counted; the client
 * streams too (node:http with back-pressure, bytes generated as sent, nothing stored in the
 * repository or kept in memory).
 *
 * What growth there is is garbage, not buffering: Node's HTTP parser copies every body chunk into a
 * new buffer and V8 collects them only once some 30 MiB have piled up. A plain node:http server
 * piping the same bytes to a file with fs streams grows as much (about 40 MiB, measured beside this).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, expect, test } from 'vitest';
import { loginBody, USERS } from '../helpers.js';
import { spawnLines, type LineProcess } from '../support/processes.js';

const GIB = 1024 ** 3;
const CHUNK = 1024 * 1024;
const root = new URL('../..', import.meta.url).pathname;
const canSample = existsSync('/proc/self/status');
const dir = mkdtempSync(join(tmpdir(), 'odbrest-gigabyte-'));
let server: LineProcess | undefined;
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The server's resident set in bytes, from /proc (`undefined` once it is gone). */
function rss(pid: number): number | undefined {
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return kib === undefined ? undefined : Number(kib) * 1024;
}

/** `size` bytes made as they are read, 1 MiB at a time (each chunk stamped with its number, so none repeats). */
function generated(size: number): Readable {
  const block = Buffer.alloc(CHUNK);
  for (let i = 0; i < CHUNK; i++) block[i] = (i * 131 + (i >> 8)) & 0xff;
  let sent = 0;
  return new Readable({
    highWaterMark: CHUNK,
    read() {
      if (sent >= size) return void this.push(null);
      const chunk = Buffer.from(block.subarray(0, Math.min(CHUNK, size - sent)));
      chunk.writeUInt32BE(sent / CHUNK, 0);
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

function send(port: number, method: string, path: string, headers: Record<string, string | number>, body?: Readable): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, resolve).once('error', reject);
    if (body) pipeline(body, req).catch(reject);
    else req.end();
  });
}

async function json(response: IncomingMessage): Promise<{ status: { internalStatus: string }; data: Record<string, unknown> }> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

test.runIf(canSample)('uploads and downloads 1 GiB through the Node adapter and the disk store within 64 MiB of RSS', { timeout: 120_000 }, async () => {
  writeFileSync(join(dir, 'data.json'), JSON.stringify({ objects: [{ '~ClassName': 'User', '~ObjectID': 'USR00001', Name: 'alice', _password: USERS.alice, _licences: ['crm'] }] }));
  writeFileSync(
    join(dir, 'api-config.yml'),
    ['port: 0', 'hostname: 127.0.0.1', 'requestLog: false', 'dataFile: ./data.json', 'users: { passwordIterations: 1000 }', `files: { blobs: file:./blobs, maxUploadBytes: ${GIB} }`, 'access: { Document: { create: ["*"] } }', ''].join('\n'),
  );
  server = spawnLines(process.execPath, [join(root, 'dist/cli.js'), 'serve'], {}, { cwd: dir });
  const port = Number(/:(\d+)$/.exec(await server.waitFor((line) => line.startsWith('odbrest listening on ')))![1]);
  const pid = server.child.pid!;

  const login = await json(await send(port, 'POST', '/v1/login', { appkey: 'gigabyte', 'content-type': 'application/json' }, Readable.from([JSON.stringify(loginBody('alice', USERS.alice))])));
  const headers = { appkey: 'gigabyte', sessionId: String(login.data.sessionId) };
  const uploadId = String((await json(await send(port, 'GET', '/v1/uploadFile', headers))).data.uploadId);

  const start = rss(pid)!;
  let peak = start;
  let uploadPeak = start;
  const sampler = setInterval(() => (peak = Math.max(peak, rss(pid) ?? 0)), 50);
  try {
    const sent = createHash('sha256');
    const bytes = generated(GIB);
    // as the Dart client sends a file: multipart/form-data, one part, an empty field name
    const boundary = 'dart-http-boundary-gigabyte';
    const head = Buffer.from(`--${boundary}\r\ncontent-type: application/octet-stream\r\ncontent-disposition: form-data; name=""; filename="big.bin"\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const body = Readable.from((async function* () {
      yield head;
      for await (const chunk of bytes) yield sent.update(chunk as Buffer) && chunk;
      yield tail;
    })());
    const multipart = { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + GIB + tail.length };
    const received = await json(await send(port, 'POST', `/v1/uploadFile/${uploadId}`, { ...headers, ...multipart }, body));
    expect(received).toMatchObject({ status: { internalStatus: '0' }, data: { size: GIB } });
    uploadPeak = peak;
    const file = (await json(await send(port, 'PATCH', `/v1/uploadFile/${uploadId}`, headers))).data;
    const sha256 = sent.digest('hex');
    expect(file).toMatchObject({ Name: 'big.bin', Size: GIB, Sha256: sha256 });

    const download = await send(port, 'GET', `/v1/file/${String(file['~ObjectID'])}`, headers);
    expect([download.statusCode, download.headers['content-length']]).toEqual([200, String(GIB)]);
    const got = createHash('sha256');
    let size = 0;
    for await (const chunk of download) {
      got.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    expect([size, got.digest('hex')]).toEqual([GIB, sha256]);
  } finally {
    clearInterval(sampler);
  }
  const growth = peak - start;
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  console.log(`1 GiB up and down: server RSS ${mib(start)} at the start, growth ${mib(uploadPeak - start)} by the upload's end, ${mib(growth)} in all`);
  expect(growth).toBeLessThan(64 * 2 ** 20);
});
