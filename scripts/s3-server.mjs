// A real S3 protocol server for the tests, the benchmark and docs/operations.md: s3rver (npm, a dev
// dependency) on a folder, with the two calls of the multipart protocol it lacks added in front of
// its router: AbortMultipartUpload (DELETE /<bucket>/<key>?uploadId=) and ListMultipartUploads
// (GET /<bucket>?uploads), which read and remove the very folders s3rver keeps an upload's parts in.
// `stop()` closes it with its connections (the storage unreachable); `start()` again on the same port
// and folder brings the same objects back.
// `node scripts/s3-server.mjs [port] [folder]` runs one (bucket `odbrest`, key and secret `S3RVER`).
import { existsSync, mkdtempSync } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

/** The credentials s3rver accepts. */
export const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

const escape = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Koa middleware: the multipart calls s3rver answers `NotImplemented` or `405` to. */
function multipartCalls(app) {
  const uploadsOf = (bucket) => app.store.getResourcePath(bucket, undefined, 'uploads');
  return async (ctx, next) => {
    const [bucket, ...key] = ctx.path.split('/').filter(Boolean);
    if (ctx.method === 'DELETE' && key.length > 0 && typeof ctx.query.uploadId === 'string') {
      const folder = join(uploadsOf(bucket), ctx.query.uploadId);
      if (!existsSync(folder) || ctx.query.uploadId.includes('/') || ctx.query.uploadId.startsWith('.')) {
        ctx.status = 404;
        ctx.type = 'application/xml';
        ctx.body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>';
        return;
      }
      await rm(folder, { recursive: true, force: true });
      ctx.status = 204;
      return;
    }
    if (ctx.method === 'GET' && key.length === 0 && bucket && 'uploads' in ctx.query) {
      const prefix = typeof ctx.query.prefix === 'string' ? ctx.query.prefix : '';
      const folder = uploadsOf(bucket);
      const uploads = [];
      for (const uploadId of existsSync(folder) ? await readdir(folder) : []) {
        const uploadKey = await readFile(join(folder, uploadId, 'key'), 'utf8').catch(() => undefined);
        if (uploadKey === undefined || !uploadKey.startsWith(prefix)) continue;
        const initiated = (await stat(join(folder, uploadId))).birthtime.toISOString();
        uploads.push(`<Upload><Key>${escape(uploadKey)}</Key><UploadId>${escape(uploadId)}</UploadId><Initiated>${initiated}</Initiated></Upload>`);
      }
      ctx.type = 'application/xml';
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult><Bucket>${escape(bucket)}</Bucket><IsTruncated>false</IsTruncated>${uploads.join('')}</ListMultipartUploadsResult>`;
      return;
    }
    await next();
  };
}

/**
 * s3rver writes an object in place, so two PUTs of one key at once interleave their bytes (S3 keeps
 * one of them whole): its writes of one key take turns here.
 */
function oneWriteAtATime(store) {
  const turns = new Map();
  const inTurn = (bucket, key, work) => {
    const id = `${bucket}/${key}`;
    const done = (turns.get(id) ?? Promise.resolve()).then(work, work);
    const settled = done.catch(() => undefined);
    turns.set(id, settled);
    settled.then(() => turns.get(id) === settled && turns.delete(id));
    return done;
  };
  const { putObject, copyObject } = store;
  store.putObject = (object) => inTurn(object.bucket, object.key, () => putObject.call(store, object));
  store.copyObject = (from, fromKey, bucket, key, ...rest) => inTurn(bucket, key, () => copyObject.call(store, from, fromKey, bucket, key, ...rest));
}

/**
 * An S3 server on 127.0.0.1: `start()` answers its endpoint; `stop()` makes it unreachable (its
 * connections closed), `start()` again brings it back on the same port with the same objects.
 */
export class S3Server {
  constructor({ port = 0, folder = mkdtempSync(join(tmpdir(), 'odbrest-s3-')), buckets = ['odbrest'] } = {}) {
    this.port = port;
    this.folder = folder;
    this.buckets = buckets;
    this.app = undefined;
  }

  get endpoint() {
    return `http://127.0.0.1:${this.port}`;
  }

  async start() {
    const app = new S3rver({ port: this.port, address: '127.0.0.1', silent: true, directory: this.folder, configureBuckets: this.buckets.map((name) => ({ name })) });
    app.middleware.splice(app.middleware.length - 1, 0, multipartCalls(app)); // before s3rver's router
    oneWriteAtATime(app.store);
    const { port } = await app.run();
    this.port = port;
    this.app = app;
    return this.endpoint;
  }

  async stop() {
    const server = this.app?.httpServer;
    this.app = undefined;
    if (!server) return;
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await closed;
  }

  /** The multipart uploads under way in `bucket` (ListMultipartUploads), as `{key, uploadId}`. */
  async uploads(bucket = this.buckets[0]) {
    const folder = this.app.store.getResourcePath(bucket, undefined, 'uploads');
    const ids = existsSync(folder) ? await readdir(folder) : [];
    return Promise.all(ids.map(async (uploadId) => ({ key: await readFile(join(folder, uploadId, 'key'), 'utf8'), uploadId })));
  }

  /** Removes the folder (after `stop`). */
  async remove() {
    await rm(this.folder, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = new S3Server({ port: Number(process.argv[2] ?? 0), folder: process.argv[3] });
  console.log(await server.start());
}
