// Files on S3-compatible storage (issue 51): s3rver (scripts/s3-server.mjs) in a process of its own,
// the service with an S3BlobStore on it in another (bench/s3-service-process.mjs, the Node adapter,
// 8 MiB parts), this process the client. Rows, each against a reference in the same run:
// - upload of 256 MiB through the service (the three steps of PROTOCOL.md 6.6, raw body; the last
//   step moves the blob: a server-side CopyObject), and its second step alone (the bytes streamed
//   into a multipart upload), ÷ a direct multipart PUT of the same bytes in 8 MiB parts to the same
//   server with aws4fetch from this process. Rounds alternate; the ratio is the median of theirs.
// - the service's RSS growth during that upload, in parts (its peak sampled every 10 ms, less the RSS
//   after collecting garbage before the upload; the largest of the rounds).
// - a ranged download of 1 MiB from the middle of that file (`GET /v1/file/{id}` with `Range`) ÷ a
//   direct ranged GET of the same bytes from the server, both with fetch, in alternating rounds.
// `node --expose-gc bench/run.mjs blobs-s3` runs it alone.
import { fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { AwsClient } from 'aws4fetch';
import { S3_CREDENTIALS } from '../scripts/s3-server.mjs';
import { alternatingRates, APP_KEY, loginAlice, median } from './common.mjs';
import { chunks, MiB, send } from './throughput.mjs';

const SIZE = 256 * MiB;
const PART_BYTES = 8 * MiB;
const ROUNDS = 3;
const RANGE = { start: 100 * MiB + 12345, length: MiB };

/** The first line `child` prints. */
async function firstLine(child) {
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  return line;
}

/** A direct multipart upload of the bench's bytes to `url` (the object's URL): parts of PART_BYTES, one after the other. */
async function directMultipartPut(client, url) {
  const created = await client.fetch(`${url}?uploads=`, { method: 'POST' });
  const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(await created.text())?.[1];
  if (!uploadId) throw new Error(`CreateMultipartUpload answered ${created.status}`);
  const etags = [];
  const sendPart = async (pieces) => {
    const sent = await client.fetch(`${url}?partNumber=${etags.length + 1}&uploadId=${uploadId}`, { method: 'PUT', body: Buffer.concat(pieces) });
    await sent.arrayBuffer();
    if (!sent.ok) throw new Error(`UploadPart answered ${sent.status}`);
    etags.push(sent.headers.get('etag'));
  };
  let pieces = [];
  let filled = 0;
  for (const chunk of chunks(SIZE)) {
    pieces.push(chunk);
    filled += chunk.length;
    if (filled === PART_BYTES) {
      await sendPart(pieces);
      pieces = [];
      filled = 0;
    }
  }
  if (filled > 0) await sendPart(pieces);
  const parts = etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${etag}</ETag></Part>`).join('');
  const done = await client.fetch(`${url}?uploadId=${uploadId}`, { method: 'POST', body: `<CompleteMultipartUpload>${parts}</CompleteMultipartUpload>` });
  const answer = await done.text();
  if (!done.ok || answer.includes('<Error>')) throw new Error(`CompleteMultipartUpload answered ${done.status}: ${answer}`);
}

export default async function bench({ rates }) {
  const folder = mkdtempSync(join(tmpdir(), 'odbrest-s3-bench-'));
  const s3 = spawn(process.execPath, [new URL('../scripts/s3-server.mjs', import.meta.url).pathname, '0', folder], { stdio: ['ignore', 'pipe', 'inherit'] });
  let odbrest;
  try {
    const endpoint = await firstLine(s3);
    odbrest = fork(new URL('./s3-service-process.mjs', import.meta.url).pathname, [endpoint], { execArgv: ['--expose-gc'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    const { port } = JSON.parse(await firstLine(odbrest));
    const ask = async (message) => {
      odbrest.send(message);
      const [answer] = await once(odbrest, 'message');
      return answer;
    };
    const base = `http://127.0.0.1:${port}`;
    const headers = { appkey: APP_KEY, sessionId: await loginAlice({ fetch: (r) => fetch(r) }, base) };
    const client = new AwsClient({ ...S3_CREDENTIALS, service: 's3', region: 'us-east-1' });
    const direct = `${endpoint}/odbrest/direct/bench.bin`;

    let fileId;
    const upload = async () => {
      if (fileId) await send(port, 'DELETE', `/v1/object/${fileId}`, headers);
      const { uploadId } = (await send(port, 'GET', '/v1/uploadFile', headers)).json.data;
      const t0 = performance.now();
      const body = Readable.from(chunks(SIZE));
      const sent = await send(port, 'POST', `/v1/uploadFile/${uploadId}?name=bench.bin`, { ...headers, 'content-type': 'application/octet-stream', 'content-length': SIZE }, body);
      if (sent.json?.data?.size !== SIZE) throw new Error(`upload failed: ${JSON.stringify(sent.json)}`);
      const t1 = performance.now();
      fileId = (await send(port, 'PATCH', `/v1/uploadFile/${uploadId}`, headers)).json.data['~ObjectID'];
      return { post: t1 - t0, all: performance.now() - t0 };
    };
    const rate = (ms) => SIZE / MiB / (ms / 1000);
    const rounds = { all: [], post: [], direct: [], parts: [] };
    for (let round = 0; round < ROUNDS; round++) {
      await ask('baseline');
      const { post, all } = await upload();
      const { baseline, peak } = await ask('peak');
      const t0 = performance.now();
      await directMultipartPut(client, direct);
      const directMs = performance.now() - t0;
      rounds.all.push(rate(all));
      rounds.post.push(rate(post));
      rounds.direct.push(rate(directMs));
      rounds.parts.push((peak - baseline) / PART_BYTES);
    }
    const ratio = (of) => median(of.map((x, i) => x / rounds.direct[i]));

    const range = `bytes=${RANGE.start}-${RANGE.start + RANGE.length - 1}`;
    const ranged = (address, extra) => async () => {
      const answer = await fetch(address, { headers: { ...extra, range } });
      const bytes = await answer.arrayBuffer();
      if (answer.status !== 206 || bytes.byteLength !== RANGE.length) throw new Error(`ranged GET answered ${answer.status}, ${bytes.byteLength} bytes`);
    };
    const signed = async () => {
      const answer = await client.fetch(`${endpoint}/odbrest/files/${fileId}`, { headers: { range } });
      const bytes = await answer.arrayBuffer();
      if (answer.status !== 206 || bytes.byteLength !== RANGE.length) throw new Error(`direct ranged GET answered ${answer.status}, ${bytes.byteLength} bytes`);
    };
    const downloads = await alternatingRates(rates, ranged(`${base}/v1/file/${fileId}`, headers), signed, { rounds: 7, ms: 500 });

    const name = 'S3BlobStore on s3rver, Node adapter, loopback, 8 MiB parts';
    return [
      { name: `file upload of 256 MiB, 3 steps (the last a server-side copy), ${name} (reference: direct multipart PUT)`, value: median(rounds.all), unit: 'MiB/s', reference: median(rounds.direct), ratio: ratio(rounds.all), target: '>= 0.8 (issue 51)' },
      { name: `file upload of 256 MiB, its bytes' step alone (POST /v1/uploadFile/{id}), ${name} (reference: direct multipart PUT)`, value: median(rounds.post), unit: 'MiB/s', reference: median(rounds.direct), ratio: ratio(rounds.post) },
      { name: `service RSS growth during the 256 MiB upload (peak less the collected baseline, largest of ${ROUNDS} rounds), ${name}`, value: Math.max(...rounds.parts), unit: 'parts of 8 MiB', target: '<= 3 (issue 51)' },
      { name: `ranged download of 1 MiB (GET /v1/file/{id}, Range), ${name} (reference: direct ranged GET)`, value: downloads.wall.a, unit: 'ops/s', reference: downloads.wall.b, ratio: downloads.wall.ratio, target: '>= 0.8 (issue 51)' },
    ];
  } finally {
    if (odbrest?.connected) {
      odbrest.send('stop');
      await once(odbrest, 'exit');
    }
    s3.kill();
    await once(s3, 'exit').catch(() => undefined);
    rmSync(folder, { recursive: true, force: true });
  }
}
