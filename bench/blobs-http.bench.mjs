// File upload and download throughput (MiB/s) over real HTTP on loopback: the Node adapter serving a
// 256 MiB file from the disk blob store (FolderBlobStore), each as a ratio against copying the same
// bytes with fs streams in the same run (written with fs.createWriteStream and fsynced, as the store
// fsyncs; read with fs.createReadStream). The upload is the three steps of PROTOCOL.md 6.6 with a raw
// body (the store hashes every byte); the download is `GET /v1/file/{id}`. Client and server share
// this process. Rounds alternate; the ratio is the median of the rounds' ratios.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createService } from '../dist/index.js';
import { FolderBlobStore } from '../dist/file-store.js';
import { serve } from '../dist/node.js';
import { APP_KEY, demoData, loginAlice } from './common.mjs';
import { chunks, fsCopy, MiB, send, throughputRows } from './throughput.mjs';

const SIZE = 256 * MiB;

export default async function bench() {
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-files-bench-'));
  const service = createService({
    data: demoData(),
    users: { passwordIterations: 1000 },
    access: { rules: { Document: { create: ['*'], delete: ['*'] } } },
    files: { blobs: await FolderBlobStore.open({ path: join(dir, 'blobs') }), maxUploadBytes: SIZE },
    onError: (error) => console.error(error),
  });
  await service.ready;
  const server = await serve(service, { port: 0, hostname: '127.0.0.1' });
  const { port } = server.address();
  try {
    const base = `http://127.0.0.1:${port}`;
    const headers = { appkey: APP_KEY, sessionId: await loginAlice({ fetch: (r) => fetch(r) }, base) };
    const copy = fsCopy(join(dir, 'copy'), SIZE);
    let fileId;
    const upload = async () => {
      if (fileId) await send(port, 'DELETE', `/v1/object/${fileId}`, headers); // its bytes go too
      const { uploadId } = (await send(port, 'GET', '/v1/uploadFile', headers)).json.data;
      const body = Readable.from(chunks(SIZE));
      const sent = await send(port, 'POST', `/v1/uploadFile/${uploadId}?name=bench.bin`, { ...headers, 'content-type': 'application/octet-stream', 'content-length': SIZE }, body);
      if (sent.json?.data?.size !== SIZE) throw new Error(`upload failed: ${JSON.stringify(sent.json)}`);
      fileId = (await send(port, 'PATCH', `/v1/uploadFile/${uploadId}`, headers)).json.data['~ObjectID'];
    };
    const download = async () => {
      const got = await send(port, 'GET', `/v1/file/${fileId}`, headers);
      if (got.status !== 200 || got.size !== SIZE) throw new Error(`download failed: ${got.status}, ${got.size} bytes`);
    };
    return await throughputRows(
      [
        ['upload (3 steps, raw body, fsynced, SHA-256)', upload, copy.write],
        ['download (GET /v1/file)', download, copy.read],
      ],
      { size: SIZE, rounds: 5, name: (label) => `file ${label} over loopback HTTP, Node adapter, FolderBlobStore, 256 MiB (reference: fs streams)` },
    ).then(([up, down]) => [{ ...up, target: '>= 0.8 (issue 36)' }, down]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
