import { parse as parseDisposition } from 'content-disposition';
import { make, type MultipartError, type PartInfo } from 'multipasta';
import { ApiError } from '../http/errors.js';

/** The one file part of a `multipart/form-data` upload: its name, type and bytes as they arrive. */
export interface FilePart {
  /** `filename` of the part (`filename*` decoded); `undefined` when it has none. */
  filename: string | undefined;
  contentType: string;
  /** The part's bytes, read from the request only as the consumer pulls them. */
  stream: ReadableStream<Uint8Array>;
}

/** Form fields beside the file (the real clients send none) are skipped, but bounded. */
const MAX_FIELD_BYTES = 64 * 1024;
const MAX_PARTS = 16;

/**
 * Opens the single file part of a `multipart/form-data` body with multipasta's streaming parser.
 * multipasta pushes parsed bytes into callbacks as each chunk is written; this drives it from the
 * consumer's pulls (one request chunk written per pull that finds nothing queued), so the upload
 * keeps the back-pressure of the blob store and never holds more than a chunk or two. A part with a
 * `filename`, or of type `application/octet-stream`, is the file; its field name may be empty (the
 * Dart client sends `name=""`). Malformed bodies, a second file part and no file part are `400`;
 * more than `maxBodyBytes` in all is `413`.
 */
export async function openFilePart(body: ReadableStream<Uint8Array>, contentType: string, maxBodyBytes: number): Promise<FilePart> {
  const reader = body.getReader();
  let queue: Uint8Array[] = [];
  let file: PartInfo | undefined; // the file part's headers, once they arrived
  let failure: ApiError | undefined;
  let complete = false; // the closing boundary was seen
  let ended = false; // the request body ended
  const parser = make({
    headers: { 'content-type': contentType },
    maxParts: MAX_PARTS,
    maxFieldSize: MAX_FIELD_BYTES,
    maxTotalSize: maxBodyBytes,
    isFile: (info) => filenameOf(info) !== undefined || info.contentType === 'application/octet-stream',
    onFile: (info) => {
      if (file) {
        failure ??= new ApiError('400', 'a multipart upload carries exactly one file part');
        return () => undefined;
      }
      file = info;
      return (chunk) => void (chunk && queue.push(chunk));
    },
    onField: () => undefined,
    onError: (error) => void (failure ??= multipartFailure(error, maxBodyBytes)),
    onDone: () => void (complete = true),
  });
  const step = async (): Promise<void> => {
    const { done, value } = await reader.read().catch(() => {
      throw new ApiError('400', 'request body could not be read');
    });
    if (done) {
      ended = true;
      parser.end();
      if (!complete) failure ??= new ApiError('400', 'the multipart body ended before its closing boundary');
    } else parser.write(value);
  };
  const fail = async (error: ApiError): Promise<never> => {
    await reader.cancel().catch(() => undefined);
    throw error;
  };

  while (!file && !failure && !ended) await step();
  if (failure) return fail(failure);
  if (!file) return fail(new ApiError('400', 'the multipart body has no file part (a part with a filename)'));
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          while (queue.length === 0 && !failure && !ended) await step();
          if (failure) {
            await reader.cancel().catch(() => undefined);
            return controller.error(failure);
          }
          if (queue.length > 0) {
            for (const chunk of queue) controller.enqueue(chunk);
            queue = [];
          } else controller.close();
        } catch (error) {
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  // multipasta's own part-header parsing takes only Latin-1 names; browsers and the Dart client send UTF-8
  const partType = file.headers['content-type'] === undefined ? 'application/octet-stream' : file.contentType;
  return { filename: filenameOf(file), contentType: partType, stream };
}

/** `filename` of a part's Content-Disposition, read as browsers and the Dart client write it (UTF-8, `%22` for quotes). */
function filenameOf(info: PartInfo): string | undefined {
  const header = info.headers['content-disposition'];
  if (typeof header !== 'string') return undefined;
  try {
    return parseDisposition(header, { multipart: true }).parameters.filename;
  } catch {
    return undefined;
  }
}

function multipartFailure(error: MultipartError, maxBodyBytes: number): ApiError {
  switch (error._tag) {
    case 'InvalidBoundary':
      return new ApiError('400', 'Content-Type multipart/form-data needs a boundary parameter');
    case 'ReachedLimit':
      return error.limit === 'MaxTotalSize'
        ? new ApiError('413', `the upload is larger than ${maxBodyBytes} bytes`)
        : new ApiError('400', `the multipart body has too many parts or too large a form field (${error.limit})`);
    case 'EndNotReached':
      return new ApiError('400', 'the multipart body ended before its closing boundary');
    default:
      return new ApiError('400', 'the multipart body is malformed (part headers or Content-Disposition)');
  }
}
