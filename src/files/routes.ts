import type { ServiceContext } from '../context.js';
import type { Route } from '../http/router.js';
import { download } from './downloads.js';
import { Uploads } from './uploads.js';

/** Uploads and downloads of files (PROTOCOL.md 6.6). Bytes never travel inside `/v1/multi`. */
export function fileRoutes(ctx: ServiceContext): Route[] {
  const uploads = new Uploads(ctx);
  return [
    { method: 'GET', path: '/v1/uploadFile', auth: 'objects', handler: (request) => uploads.start(request) },
    { method: 'POST', path: '/v1/uploadFile/:id', auth: 'objects', rawBody: true, batch: false, handler: (request) => uploads.receive(request) },
    { method: 'GET', path: '/v1/uploadFile/:id', auth: 'objects', handler: (request) => uploads.size(request) },
    { method: 'PATCH', path: '/v1/uploadFile/:id', auth: 'objects', handler: (request) => uploads.finish(request) },
    { method: 'GET', path: '/v1/file/:id', auth: 'objects', batch: false, handler: (request) => download(ctx, request) },
  ];
}
