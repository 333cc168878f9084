import type { ObjectsContext } from '../objects/context.js';
import { route } from '../http/router.js';
import { download } from './downloads.js';
import { Uploads } from './uploads.js';
import { FILES } from './contract.js';

const FILE_HEADERS = {
  'Content-Length': 'the bytes of this answer',
  'Content-Disposition': "attachment, with the file's Name",
  ETag: "the file's SHA-256",
  'Accept-Ranges': 'bytes',
} as const;


/** Uploads and downloads of files (PROTOCOL.md 6.6). Bytes never travel inside `/v1/multi`. */
export function fileRoutes(ctx: ObjectsContext) {
  const uploads = new Uploads(ctx);
  return [
    route({
      ...FILES.getUploadFile,
      auth: 'objects',
      summary: 'Starts an upload (valid for an hour)',
      examples: { answer: { uploadId: 'Vq3Yx9TbKf2LmR8sWp4NcA' } },
      answer: 'uploadId',
      handler: (request) => uploads.start(request),
    }),
    route({
      ...FILES.postUploadFileById,
      auth: 'objects',
      rawBody: true,
      batch: false,
      summary: "Sends the file's bytes: multipart/form-data with one file part, or the raw bytes with their own Content-Type",
      examples: { answer: { size: 14 } },
      bodyTypes: ['multipart/form-data', 'application/octet-stream'],
      answer: 'size: the bytes received',
      errors: ['404', '413', '415'],
      handler: (request, { params: { id }, query }) => uploads.receive(request, id, query),
    }),
    route({
      ...FILES.getUploadFileById,
      auth: 'objects',
      summary: 'How many bytes an upload received',
      examples: { answer: { size: 14 } },
      answer: 'size',
      errors: ['404'],
      handler: (request, { params: { id } }) => uploads.size(request, id),
    }),
    route({
      ...FILES.patchUploadFileById,
      auth: 'objects',
      summary: 'Finishes an upload: creates the file object (or gives replaceOID the new bytes)',
      examples: { answer: { '~ClassName': 'Document', '~ObjectID': 'DGFYFG5W', '~StoreTime': '20261123T180559+00:00', Name: 'hello.txt', Size: 14, ContentType: 'text/plain', Sha256: 'd8cb59046f046cbffcacb77f8622f4e338df3e700abf93c088d9c8b3897efad7' } },
      answer: 'the file object (Name, Size, ContentType, Sha256), serialized',
      errors: ['403', '404'],
      handler: (request, { params: { id }, query }) => uploads.finish(request, id, query),
    }),
    route({
      ...FILES.getFileById,
      auth: 'objects',
      batch: false,
      summary: "A file's bytes (Range answered with 206)",
      rawAnswer: [
        { status: 200, contentType: '*/*', description: "the file's bytes, with its own Content-Type (through the secure transport: the ciphertext, application/octet-stream)", headers: { ...FILE_HEADERS } },
        { status: 206, contentType: '*/*', description: 'the range the Range header asked for', headers: { ...FILE_HEADERS, 'Content-Range': 'bytes <first>-<last>/<size>' } },
        { status: 304, description: 'If-None-Match named the ETag: the client has these bytes', headers: { ETag: FILE_HEADERS.ETag } },
        { status: 416, error: '400', description: 'the Range lies outside the file: the error envelope, internalStatus "400"', headers: { 'Content-Range': 'bytes */<size>' } },
      ],
      errors: ['403', '404'],
      handler: (request, { params: { id } }) => download(ctx, request, id),
    }),
  ];
}
