import type { ServiceContext } from '../context.js';
import type { Route } from '../http/router.js';
import { download } from './downloads.js';
import { FinishQuerySchema, ReceiveQuerySchema, Uploads } from './uploads.js';

/** Uploads and downloads of files (PROTOCOL.md 6.6). Bytes never travel inside `/v1/multi`. */
export function fileRoutes(ctx: ServiceContext): Route[] {
  const uploads = new Uploads(ctx);
  return [
    {
      method: 'GET',
      path: '/v1/uploadFile',
      auth: 'objects',
      summary: 'Starts an upload (valid for an hour)',
      answer: 'uploadId',
      handler: (request) => uploads.start(request),
    },
    {
      method: 'POST',
      path: '/v1/uploadFile/:id',
      auth: 'objects',
      rawBody: true,
      batch: false,
      summary: "Sends the file's bytes: multipart/form-data with one file part, or the raw bytes with their own Content-Type",
      bodyTypes: ['multipart/form-data', 'application/octet-stream'],
      query: ReceiveQuerySchema,
      answer: 'size: the bytes received',
      handler: (request) => uploads.receive(request),
    },
    {
      method: 'GET',
      path: '/v1/uploadFile/:id',
      auth: 'objects',
      summary: 'How many bytes an upload received',
      answer: 'size',
      handler: (request) => uploads.size(request),
    },
    {
      method: 'PATCH',
      path: '/v1/uploadFile/:id',
      auth: 'objects',
      summary: 'Finishes an upload: creates the file object (or gives replaceOID the new bytes)',
      query: FinishQuerySchema,
      answer: 'the file object (Name, Size, ContentType, Sha256), serialized',
      handler: (request) => uploads.finish(request),
    },
    {
      method: 'GET',
      path: '/v1/file/:id',
      auth: 'objects',
      batch: false,
      summary: "A file's bytes (Range answered with 206)",
      rawAnswer: { status: 200, contentType: 'application/octet-stream', description: "the file's bytes, with its own Content-Type, Content-Disposition and ETag (206 for a Range)" },
      handler: (request) => download(ctx, request),
    },
  ];
}
