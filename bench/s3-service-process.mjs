// The service of `blobs-s3.bench.mjs`, run as a child (with --expose-gc) so that its resident memory
// is one process's own: the demo's data, files in an S3BlobStore on the S3 server at argv[2]
// (bucket `odbrest`, prefix `files/`, path-style, 8 MiB parts), served by the Node adapter on a free
// loopback port, printed as the first line (`{"port": n}`). Through IPC the parent asks:
//   'baseline'  garbage collected, the RSS now becomes the baseline, the peak is reset and sampling starts
//   'peak'      answers `{ baseline, peak }` in bytes: the highest RSS sampled (every 10 ms) since; sampling stops
//   'stop'      closes the server and the service and exits
import { createService } from '../dist/index.js';
import { serve } from '../dist/node.js';
import { S3BlobStore } from '../dist/s3.js';
import { S3_CREDENTIALS } from '../scripts/s3-server.mjs';
import { demoData } from './common.mjs';

const PART_BYTES = 8 * 1024 * 1024;
const endpoint = process.argv[2];
const service = createService({
  data: demoData(),
  users: { passwordIterations: 1000 },
  access: { rules: { Document: { create: ['*'], delete: ['*'] } } },
  files: {
    blobs: await S3BlobStore.open({ bucket: 'odbrest', prefix: 'files/', endpoint, forcePathStyle: true, partBytes: PART_BYTES, ...S3_CREDENTIALS }),
    maxUploadBytes: 1024 * 1024 * 1024,
  },
  onError: (error) => console.error(error),
});
await service.ready;
const server = await serve(service, { port: 0, hostname: '127.0.0.1' });

// sampled only between 'baseline' and 'peak' (the upload), with the cheap call: the ranged downloads
// after are measured without the sampler's work on the event loop
const rss = () => process.memoryUsage.rss();
let baseline = rss();
let peak = baseline;
let sampler;
process.on('message', async (message) => {
  if (message === 'baseline') {
    for (let i = 0; i < 4; i++) globalThis.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 100));
    globalThis.gc?.();
    baseline = peak = rss();
    clearInterval(sampler);
    sampler = setInterval(() => (peak = Math.max(peak, rss())), 10);
    process.send({ baseline });
  } else if (message === 'peak') {
    clearInterval(sampler);
    process.send({ baseline, peak: Math.max(peak, rss()) });
  } else if (message === 'stop') {
    clearInterval(sampler);
    await new Promise((resolve) => server.close(resolve));
    await service.close();
    process.disconnect();
  }
});
console.log(JSON.stringify({ port: server.address().port }));
