import { createHash } from 'node:crypto';
import {
  BlobMeter,
  invalidBlobId,
  pieces,
  refuseStream,
  resolveRange,
  StorageUnavailableError,
  type BlobPutOptions,
  type BlobRange,
  type BlobRead,
  type BlobStat,
  type BlobStore,
  type BlobWritten,
} from '../src/index.js';
import { xmlBlocks, xmlText } from './s3-xml.js';

export interface S3BlobStoreOptions {
  /** The bucket (it must exist). */
  bucket: string;
  /** Put before every key, e.g. `files/`: several deployments can share a bucket. Default none. */
  prefix?: string;
  /**
   * The storage's URL: `https://s3.<region>.amazonaws.com` (the default), MinIO's
   * `http://minio:9000`, R2's `https://<account>.r2.cloudflarestorage.com`, Garage's, Ceph's.
   */
  endpoint?: string;
  /** The region requests are signed for. Default `AWS_REGION`, `AWS_DEFAULT_REGION`, else `us-east-1` (R2: `auto`). */
  region?: string;
  /** Address the bucket in the path (`<endpoint>/<bucket>/<key>`), as MinIO, Ceph and Garage need, instead of its host name. Default false. */
  forcePathStyle?: boolean;
  /** Default `AWS_ACCESS_KEY_ID`. */
  accessKeyId?: string;
  /** Default `AWS_SECRET_ACCESS_KEY`. */
  secretAccessKey?: string;
  /** Default `AWS_SESSION_TOKEN` (temporary credentials). */
  sessionToken?: string;
  /**
   * Bytes per part of a multipart upload; an upload holds at most two parts in memory (one being
   * sent, one being filled). At least 5 MiB (S3's least part); a blob may have up to 10,000 parts.
   * Default 8 MiB.
   */
  partBytes?: number;
  /** How long a request waits for the storage's answer (its headers) before it is given up. Default 30 s. */
  timeoutMs?: number;
  /** Retries of a request the storage answered with 5xx or 429 (not of streamed bodies). Default 2. */
  retries?: number;
  /** Clock for `storeTime`, for tests. */
  now?: () => number;
}

/** S3's least part size (every part but the last). */
export const S3_MIN_PART_BYTES = 5 * 1024 * 1024;
/** The largest object one CopyObject copies. */
const COPY_MAX_BYTES = 5 * 1024 * 1024 * 1024;
/** The store time a blob keeps across a move (a copy gets a new Last-Modified). */
const STORE_TIME = 'x-amz-meta-odbrest-store-time';

type AwsClient = import('aws4fetch').AwsClient;
interface Call {
  method: string;
  key?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
}

/** What the storage answered with an error (`status`, S3's `Code`); other than `StorageUnavailableError`, matched by the store. */
class S3Refusal extends StorageUnavailableError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`the S3 storage answered ${status} ${code || ''}${message ? `: ${message}` : ''}`.trimEnd());
  }
}

/**
 * BlobStore on S3-compatible object storage (AWS S3, MinIO, Cloudflare R2, Ceph, Garage), one object
 * per blob under `<prefix><id>`, through `aws4fetch` (fetch and Web Crypto: Node, Bun and Deno), an
 * optional peer dependency loaded by `open`.
 *
 * A put sends a blob smaller than a part in one PUT, a larger one as a multipart upload whose parts
 * are sent while the next fills (at most two parts held); the object appears only when the upload
 * completes, so readers see the old blob or the new one. A put that fails (the client gone, the size
 * limit, the storage) aborts its multipart upload, so no parts stay behind; `sweep` aborts those a
 * crashed process left. A download is one GET of the range (a `Range` header), streamed as it
 * arrives: one object version from start to end. A move is a server-side copy (the store time kept
 * in the object's metadata) and a delete of the source. Storage unreachable, timing out or answering
 * an error is `StorageUnavailableError` (the service's `503` with `Retry-After`).
 */
export class S3BlobStore implements BlobStore {
  readonly #client: AwsClient;
  readonly #base: string;
  readonly #prefix: string;
  readonly #bucket: string;
  readonly #partBytes: number;
  readonly #timeoutMs: number;
  readonly #retries: number;
  /** Whether bytes sent are signed by their SHA-256: over plain http (over https the link guards them: `UNSIGNED-PAYLOAD`). */
  readonly #signPayload: boolean;
  readonly #now: () => number;

  private constructor(client: AwsClient, options: S3BlobStoreOptions, region: string) {
    this.#client = client;
    this.#bucket = options.bucket;
    this.#prefix = options.prefix ?? '';
    const endpoint = new URL(options.endpoint ?? `https://s3.${region}.amazonaws.com`);
    const root = endpoint.href.replace(/\/+$/, '');
    this.#base = options.forcePathStyle ? `${root}/${encodeURIComponent(this.#bucket)}` : `${endpoint.protocol}//${this.#bucket}.${endpoint.host}${endpoint.pathname.replace(/\/+$/, '')}`;
    this.#partBytes = options.partBytes ?? 8 * 1024 * 1024;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#retries = options.retries ?? 2;
    this.#signPayload = endpoint.protocol === 'http:';
    this.#now = options.now ?? Date.now;
  }

  /** Opens the store: loads `aws4fetch` (the error names it when it is not installed) and checks the options. */
  static async open(options: S3BlobStoreOptions): Promise<S3BlobStore> {
    const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
    if (typeof options.bucket !== 'string' || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(options.bucket)) {
      throw new Error(`S3BlobStore: bucket must be an S3 bucket name (3 to 63 of a-z, 0-9, . and -), not ${JSON.stringify(options.bucket)}`);
    }
    const partBytes = options.partBytes ?? S3_MIN_PART_BYTES;
    if (!Number.isSafeInteger(partBytes) || partBytes < S3_MIN_PART_BYTES) throw new Error('S3BlobStore: partBytes must be a whole number of at least 5 MiB (5242880)');
    const accessKeyId = options.accessKeyId ?? env.AWS_ACCESS_KEY_ID;
    const secretAccessKey = options.secretAccessKey ?? env.AWS_SECRET_ACCESS_KEY;
    if (!accessKeyId || !secretAccessKey) throw new Error('S3BlobStore needs credentials: the accessKeyId and secretAccessKey options, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
    const region = options.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1';
    let AwsClient: typeof import('aws4fetch').AwsClient;
    try {
      ({ AwsClient } = await import('aws4fetch'));
    } catch (error) {
      throw new Error('S3BlobStore needs the aws4fetch package: npm install aws4fetch', { cause: error });
    }
    const client = new AwsClient({
      accessKeyId,
      secretAccessKey,
      sessionToken: options.sessionToken ?? env.AWS_SESSION_TOKEN,
      service: 's3',
      region,
      retries: options.retries ?? 2,
    });
    return new S3BlobStore(client, options, region);
  }

  async put(id: string, source: ReadableStream<Uint8Array>, options: BlobPutOptions = {}): Promise<BlobWritten> {
    const refused = invalidBlobId(id);
    if (refused) throw await refuseStream(source, refused);
    const meter = new BlobMeter({ ...options, sha256: () => createHash('sha256') });
    const key = this.#key(id);
    const stored = { [STORE_TIME]: String(this.#now()) };
    let upload: string | undefined;
    const etags: string[] = [];
    let sending: Promise<void> | undefined;
    try {
      let whole: Uint8Array | undefined = new Uint8Array(0); // a blob of one short piece goes in one PUT
      // two part buffers in turn (one being sent, one filling), however late the collector frees
      for await (const piece of pieces(meter.read(source), this.#partBytes, 2)) {
        if (piece.length < this.#partBytes && upload === undefined) {
          whole = piece;
          break; // the last piece (shorter than a part)
        }
        whole = undefined;
        upload ??= await this.#createUpload(key, stored);
        await sending; // the part before is sent: at most this piece and the one filling are held
        const part = etags.length + 1;
        etags.push('');
        sending = this.#sendPart(key, upload, part, piece).then((etag) => void (etags[part - 1] = etag));
        sending.catch(() => undefined); // awaited at the next piece or the end
      }
      await sending;
      if (whole) {
        await this.#ok(await this.#call({ method: 'PUT', key, headers: { ...stored, 'content-type': 'application/octet-stream' }, body: whole }));
      } else {
        await this.#completeUpload(key, upload!, etags);
      }
      return meter.written();
    } catch (error) {
      await refuseStream(source, error as Error);
      await sending?.catch(() => undefined);
      if (upload) await this.#abortUpload(key, upload).catch(() => undefined); // sweep aborts what this one could not
      throw meter.failure ?? error;
    }
  }

  async get(id: string, range?: BlobRange): Promise<BlobRead | undefined> {
    if (invalidBlobId(id)) return undefined;
    resolveRange(0, range); // refuses negative and fractional numbers
    if (range && 'suffix' in range) {
      // not every S3-compatible server reads `bytes=-n`: the size first, then the same version's range
      const head = await this.#head(id);
      if (!head) return undefined;
      return this.#read(id, head.size, resolveRange(head.size, range), head.etag);
    }
    if (range && range.end !== undefined && range.end <= range.start) {
      const stat = await this.stat(id);
      return stat && this.#empty(stat.size, range.start);
    }
    const headers: Record<string, string> = range ? { range: `bytes=${range.start}-${range.end === undefined ? '' : range.end - 1}` } : {};
    const response = await this.#call({ method: 'GET', key: this.#key(id), headers });
    if (response.status === 404) return this.#none(response);
    if (response.status === 416) {
      await response.body?.cancel();
      const stat = await this.stat(id); // the range starts at or past the end
      return stat && this.#empty(stat.size, range!.start);
    }
    await this.#ok(response);
    return this.#opened(response, range ? range.start : 0, range?.end);
  }

  async stat(id: string): Promise<BlobStat | undefined> {
    if (invalidBlobId(id)) return undefined;
    const head = await this.#head(id);
    return head && { size: head.size, storeTime: head.storeTime };
  }

  async move(from: string, to: string): Promise<boolean> {
    const refused = invalidBlobId(to);
    if (refused) throw refused;
    if (invalidBlobId(from)) return false;
    if (from === to) return (await this.stat(from)) !== undefined;
    const head = await this.#head(from);
    if (!head) return false;
    if (head.size > COPY_MAX_BYTES) throw new StorageUnavailableError('S3BlobStore moves blobs of up to 5 GiB (one CopyObject)');
    const response = await this.#call({
      method: 'PUT',
      key: this.#key(to),
      headers: {
        'x-amz-copy-source': `/${this.#bucket}/${this.#keyPath(this.#key(from))}`,
        'x-amz-copy-source-if-match': head.etag,
        'x-amz-metadata-directive': 'COPY',
      },
    });
    if (response.status === 404 || response.status === 412) return this.#none(response).then(() => false); // moved or replaced meanwhile
    const answer = await (await this.#ok(response)).text();
    if (xmlBlocks(answer, 'Error').length > 0) throw this.#refusal(500, answer); // S3 may answer 200 and fail in the body
    await this.#ok(await this.#call({ method: 'DELETE', key: this.#key(from) }));
    return true;
  }

  async delete(id: string): Promise<boolean> {
    if (!(await this.stat(id))) return false;
    await this.#ok(await this.#call({ method: 'DELETE', key: this.#key(id) }));
    return true;
  }

  async sweep(prefix: string, before: number): Promise<number> {
    let deleted = 0;
    for await (const object of this.#list('Contents', { 'list-type': '2', prefix: this.#key(prefix) }, 'continuation-token', 'NextContinuationToken')) {
      const id = xmlText(object, 'Key')!.slice(this.#prefix.length);
      if (invalidBlobId(id)) continue; // not one of this store's blobs
      // Last-Modified is never before the store time; a moved blob's (a copy) may be after it
      const modified = Date.parse(xmlText(object, 'LastModified') ?? '');
      const storeTime = modified < before ? modified : (await this.stat(id))?.storeTime;
      if (storeTime !== undefined && storeTime < before && (await this.delete(id))) deleted++;
    }
    for await (const upload of this.#list('Upload', { uploads: '', prefix: this.#key(prefix) }, 'key-marker', 'NextKeyMarker', 'upload-id-marker', 'NextUploadIdMarker')) {
      if (Date.parse(xmlText(upload, 'Initiated') ?? '') < before) await this.#abortUpload(xmlText(upload, 'Key')!, xmlText(upload, 'UploadId')!);
    }
    return deleted;
  }

  /** The object key of a blob id (or of a prefix of ids). */
  #key(id: string): string {
    return `${this.#prefix}${id}`;
  }

  /** A key as a URL path: each `/`-separated segment encoded. */
  #keyPath(key: string): string {
    return key.split('/').map(encodeURIComponent).join('/');
  }

  async #head(id: string): Promise<{ size: number; storeTime: number; etag: string } | undefined> {
    const response = await this.#call({ method: 'HEAD', key: this.#key(id) });
    if (response.status === 404) return this.#none(response);
    await this.#ok(response);
    await response.body?.cancel();
    const modified = Date.parse(response.headers.get('last-modified') ?? '');
    const storeTime = Number(response.headers.get(STORE_TIME) ?? modified);
    return { size: Number(response.headers.get('content-length')), storeTime, etag: response.headers.get('etag') ?? '' };
  }

  /** A GET of `[start, end)` of the version `etag`; a replaced blob fails rather than mixing versions. */
  async #read(id: string, size: number, { start, end }: { start: number; end: number }, etag: string): Promise<BlobRead | undefined> {
    if (start >= end) return this.#empty(size, start);
    const response = await this.#call({ method: 'GET', key: this.#key(id), headers: { range: `bytes=${start}-${end - 1}`, 'if-match': etag } });
    if (response.status === 404) return this.#none(response);
    if (response.status === 412) {
      await response.body?.cancel();
      throw new StorageUnavailableError('the file was replaced while it was opened');
    }
    await this.#ok(response);
    return this.#opened(response, start, end);
  }

  /** The blob a GET answered: its size and range from `Content-Range` (206) or `Content-Length` (200). */
  async #opened(response: Response, start: number, askedEnd = Number.POSITIVE_INFINITY): Promise<BlobRead> {
    const contentRange = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.headers.get('content-range') ?? '');
    const length = Number(response.headers.get('content-length'));
    if (response.status === 206 && contentRange) {
      const [, first, last, size] = contentRange.map(Number) as [number, number, number, number];
      if (first !== start) throw new StorageUnavailableError('the S3 storage answered another range than the one asked');
      // some servers answer more than asked (s3rver reads `bytes=0-0` as `bytes=0-`): only what was asked
      const end = Math.min(last + 1, size, askedEnd);
      return { size, start, end, stream: end < last + 1 ? firstBytes(response.body!, end - start) : response.body! };
    }
    if (start === 0 || start >= length) {
      // the whole blob, or a range of an empty one (some servers answer 200 then)
      if (start === 0) return { size: length, start: 0, end: length, stream: response.body ?? emptyStream() };
      await response.body?.cancel();
      return this.#empty(length, start);
    }
    await response.body?.cancel();
    throw new StorageUnavailableError('the S3 storage answered the whole file to a range request');
  }

  #empty(size: number, start: number): BlobRead {
    const at = Math.min(start, size);
    return { size, start: at, end: at, stream: emptyStream() };
  }

  async #none(response: Response): Promise<undefined> {
    await response.body?.cancel();
    return undefined;
  }

  async #createUpload(key: string, headers: Record<string, string>): Promise<string> {
    const response = await this.#ok(await this.#call({ method: 'POST', key, query: { uploads: '' }, headers: { ...headers, 'content-type': 'application/octet-stream' } }));
    const uploadId = xmlText(await response.text(), 'UploadId');
    if (!uploadId) throw new StorageUnavailableError('the S3 storage answered CreateMultipartUpload without an UploadId');
    return uploadId;
  }

  async #sendPart(key: string, uploadId: string, part: number, bytes: Uint8Array): Promise<string> {
    const response = await this.#ok(await this.#call({ method: 'PUT', key, query: { partNumber: String(part), uploadId }, body: bytes }));
    await response.body?.cancel();
    const etag = response.headers.get('etag');
    if (!etag) throw new StorageUnavailableError('the S3 storage answered UploadPart without an ETag');
    return etag;
  }

  async #completeUpload(key: string, uploadId: string, etags: string[]): Promise<void> {
    const parts = etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${escapeXml(etag)}</ETag></Part>`).join('');
    const body = `<CompleteMultipartUpload>${parts}</CompleteMultipartUpload>`;
    const answer = await (await this.#ok(await this.#call({ method: 'POST', key, query: { uploadId }, headers: { 'content-type': 'application/xml' }, body }))).text();
    if (xmlBlocks(answer, 'Error').length > 0) throw this.#refusal(500, answer); // answered 200, then failed while joining the parts
  }

  async #abortUpload(key: string, uploadId: string): Promise<void> {
    const response = await this.#call({ method: 'DELETE', key, query: { uploadId } });
    if (response.status !== 404) await this.#ok(response); // NoSuchUpload: already gone
    await response.body?.cancel();
  }

  /** The blocks `<block>` of every page of a listing, following its continuation markers (`ask`: the query parameter, `answer`: the element). */
  async *#list(block: string, query: Record<string, string>, ...markers: string[]): AsyncGenerator<string> {
    let next: Record<string, string> = {};
    for (;;) {
      const page = await (await this.#ok(await this.#call({ method: 'GET', query: { ...query, ...next } }))).text();
      yield* xmlBlocks(page, block);
      if (xmlText(page, 'IsTruncated') !== 'true') return;
      next = {};
      for (let i = 0; i < markers.length; i += 2) {
        const value = xmlText(page, markers[i + 1]!);
        if (value) next[markers[i]!] = value;
      }
      if (Object.keys(next).length === 0) return;
    }
  }

  /** `response` if it succeeded (or answered one of `allowed`); otherwise the storage's refusal, read from its body. */
  async #ok(response: Response, allowed: number[] = []): Promise<Response> {
    if (response.ok || allowed.includes(response.status)) return response;
    const body = await response.text().catch(() => '');
    throw this.#refusal(response.status, body.slice(0, 4096));
  }

  #refusal(status: number, body: string): S3Refusal {
    return new S3Refusal(status, xmlText(body, 'Code') ?? '', xmlText(body, 'Message') ?? '');
  }

  /**
   * A request carrying bytes (a part, a small blob): its headers signed (with the bytes' SHA-256
   * over http, `UNSIGNED-PAYLOAD` over https, so aws4fetch hashes nothing), the bytes handed to fetch
   * uncopied with their length; a 5xx or 429 is tried again as aws4fetch would.
   */
  async #sendBytes(url: string, call: Call, bytes: Uint8Array, signal: AbortSignal): Promise<Response> {
    const sha256 = this.#signPayload ? createHash('sha256').update(bytes).digest('hex') : 'UNSIGNED-PAYLOAD';
    const headers = { ...call.headers, 'content-length': String(bytes.length), 'x-amz-content-sha256': sha256 };
    for (let attempt = 0; ; attempt++) {
      const signed = await this.#client.sign(url, { method: call.method, headers });
      const response = await fetch(url, { method: call.method, headers: signed.headers, body: bodyOf(bytes), signal, duplex: 'half' } as RequestInit);
      if ((response.status < 500 && response.status !== 429) || attempt >= this.#retries) return response;
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 50 * 2 ** attempt));
    }
  }

  /** One signed request; unreachable storage and no answer in `timeoutMs` are `StorageUnavailableError`. */
  async #call(call: Call): Promise<Response> {
    const url = new URL(call.key === undefined ? `${this.#base}/` : `${this.#base}/${this.#keyPath(call.key)}`);
    for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, value);
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new StorageUnavailableError(`the S3 storage did not answer within ${this.#timeoutMs} ms`)), this.#timeoutMs);
    try {
      if (call.body instanceof Uint8Array) return await this.#sendBytes(url.href, call, call.body, timeout.signal);
      return await this.#client.fetch(url.href, { method: call.method, headers: call.headers, body: call.body, signal: timeout.signal });
    } catch (error) {
      if (error instanceof StorageUnavailableError) throw error;
      throw new StorageUnavailableError(`the S3 storage is unreachable (${(error as Error).message})`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Whether fetch copies an ArrayBufferView body: Node's (undici's `Request` takes a copy of it, a part's
 * worth of memory more per request and retry), not Bun's or Deno's.
 */
const FETCH_COPIES_BYTES = (() => {
  const runtime = globalThis as { process?: { versions?: { node?: string } }; Bun?: unknown; Deno?: unknown };
  return runtime.process?.versions?.node !== undefined && runtime.Bun === undefined && runtime.Deno === undefined;
})();

/** `bytes` as a body fetch sends without copying them: one chunk of a stream where it would copy (its length given beside). */
function bodyOf(bytes: Uint8Array): BodyInit {
  if (!FETCH_COPIES_BYTES) return bytes as Uint8Array<ArrayBuffer>;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

/** The first `length` bytes of `stream`, the rest cancelled. */
function firstBytes(stream: ReadableStream<Uint8Array>, length: number): ReadableStream<Uint8Array> {
  let left = length;
  const reader = stream.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = left > 0 ? await reader.read() : { done: true, value: undefined };
      if (done || !value) {
        await reader.cancel().catch(() => undefined);
        controller.close();
        return;
      }
      const take = value.subarray(0, left);
      left -= take.length;
      controller.enqueue(take);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

function emptyStream(): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (controller) => controller.close() });
}

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
