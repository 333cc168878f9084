/**
 * The file routes' contracts (PROTOCOL.md 6.6): method, path and schemas, without handlers (http/route-spec.ts); the
 * route modules attach the handlers.
 */
import * as v from 'valibot';
import { spec } from '../http/route-spec.js';
import { ServedObject } from '../openapi/schemas.js';
import { FileParams } from './downloads.js';
import { FinishQuerySchema, ReceiveQuerySchema } from './uploads.js';

export const Size = v.object({ size: v.pipe(v.number(), v.integer(), v.description('the bytes received')) });

export const UploadParams = v.object({ id: v.pipe(v.string(), v.description('the uploadId GET /v1/uploadFile answered')) });

export const FILES = {
  getUploadFile: spec({ method: 'GET', path: '/v1/uploadFile', answerSchema: v.object({ uploadId: v.pipe(v.string(), v.description('the upload, for the three other /v1/uploadFile/{id} routes')) }) }),
  postUploadFileById: spec({ method: 'POST', path: '/v1/uploadFile/:id', params: UploadParams, query: ReceiveQuerySchema, answerSchema: Size }),
  getUploadFileById: spec({ method: 'GET', path: '/v1/uploadFile/:id', params: UploadParams, answerSchema: Size }),
  patchUploadFileById: spec({ method: 'PATCH', path: '/v1/uploadFile/:id', params: UploadParams, query: FinishQuerySchema, answerSchema: ServedObject }),
  getFileById: spec({ method: 'GET', path: '/v1/file/:id', params: FileParams }),
};
