import { parse as parseDisposition } from 'content-disposition';
import type { Session } from '../auth/sessions.js';
import * as v from 'valibot';
import type { ObjectsContext } from '../objects/context.js';
import { mediaType } from '../http/body.js';
import { okReply, type JsonReply } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import type { Guard } from '../objects/access.js';
import type { ServedData } from '../openapi/schemas.js';
import { checkMacros, objectAnswer, SERIALIZATION_PARAM, served } from '../objects/read/index.js';
import { afterWrite, beforeWrite, retryOnConflict, type WriteChange, type Writer } from '../objects/write/index.js';
import { internalFields, withoutInternal } from '../objects/names.js';
import { newObjectId, randomToken } from '../storage/ids.js';
import { kvKeys } from '../storage/keys.js';
import type { Fields, StoredObject } from '../storage/types.js';
import { openFilePart } from './multipart.js';

/** An upload lives this long from its start (PROTOCOL.md 6.6: unfinished uploads are dropped after an hour). */
export const UPLOAD_TTL_MS = 60 * 60_000;
/** Blob ids of unfinished uploads start with this; the file's own bytes are under its object id. */
export const UPLOAD_BLOB_PREFIX = 'upload-';
/** Room for the multipart framing around the file (boundaries, part headers) within the body limit. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
const MAX_NAME_LENGTH = 1024;
const MAX_TYPE_LENGTH = 255;
/** Unfinished uploads' bytes are swept at most this often, when uploads start. */
const SWEEP_EVERY_MS = 10 * 60_000;

const optionalText = (description: string) => v.optional(v.pipe(v.string(), v.description(description)));

/** The query of `POST /v1/uploadFile/{id}` with a raw body. */
export const ReceiveQuerySchema = v.object({
  name: optionalText('the file name, when no Content-Disposition header gives it'),
  contentType: optionalText("the file's content type (through the secure transport, where the body's own is application/octet-stream)"),
});

/** The query of `PATCH /v1/uploadFile/{id}`. */
export const FinishQuerySchema = v.object({ replaceOID: optionalText('the file object whose bytes this upload replaces'), ...SERIALIZATION_PARAM });

/** What the service keeps of an upload between its steps, in the key-value store. */
interface UploadState {
  /** The principal that started it: no other may send, read or finish it. */
  principalId: string;
  /** Set once bytes were received. */
  received?: { size: number; sha256: string; name: string; contentType: string };
}

const uploadKey = kvKeys.upload;
const uploadBlob = (uploadId: string) => `${UPLOAD_BLOB_PREFIX}${uploadId}`;

/** The three steps of an upload (PROTOCOL.md 6.6) and the sweep of the abandoned ones. */
export class Uploads {
  #lastSweep = Number.NEGATIVE_INFINITY;

  constructor(private readonly ctx: ObjectsContext) {}

  /** `GET /v1/uploadFile`: a new upload id (128 bits from the CSPRNG). */
  async start(request: ApiRequest) {
    const session = request.session!;
    await this.#mayUpload(request);
    this.#sweepNow();
    const uploadId = randomToken(16);
    const state: UploadState = { principalId: session.principalId };
    await this.ctx.kv.set(uploadKey(uploadId), JSON.stringify(state), UPLOAD_TTL_MS);
    return okReply({ uploadId });
  }

  /** `POST /v1/uploadFile/{id}`: the bytes, multipart or raw, streamed into the blob store. */
  async receive(request: ApiRequest, uploadId: string, query: v.InferOutput<typeof ReceiveQuerySchema>) {
    const body = request.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    try {
      const state = await this.#state(uploadId, request.session!);
      await this.#mayUpload(request);
      const { files } = this.ctx;
      const contentType = request.headers.get('content-type') ?? '';
      const multipart = mediaType(contentType) === 'multipart/form-data';
      const limit = multipart ? files.maxUploadBytes + MULTIPART_OVERHEAD_BYTES : files.maxUploadBytes;
      const declared = request.headers.get('content-length');
      if (declared !== null && Number(declared) > limit) throw tooLarge(files.maxUploadBytes);
      const part = multipart ? await openFilePart(body, contentType, limit) : undefined;
      const name = fileName(part ? part.filename : rawName(request, query.name));
      // under the secure transport the body's own type is application/octet-stream: the file's rides in the (signed) query
      const rawType = query.contentType || (request.secure ? '' : contentType.trim());
      const type = part ? part.contentType : rawType || 'application/octet-stream';
      if (type.length > MAX_TYPE_LENGTH) throw new ApiError('400', `the file's Content-Type is longer than ${MAX_TYPE_LENGTH} characters`);
      const written = await files.blobs.put(uploadBlob(uploadId), part?.stream ?? body, { maxBytes: files.maxUploadBytes });
      state.received = { ...written, name, contentType: type };
      const ttl = await this.ctx.kv.ttl(uploadKey(uploadId));
      if (ttl <= 0) throw expired();
      await this.ctx.kv.set(uploadKey(uploadId), JSON.stringify(state), ttl);
      return okReply({ size: written.size });
    } catch (error) {
      await body.cancel().catch(() => undefined); // a refused upload leaves the rest of the body unread
      throw error;
    }
  }

  /** `GET /v1/uploadFile/{id}`: how many bytes arrived. */
  async size(request: ApiRequest, uploadId: string) {
    const state = await this.#state(uploadId, request.session!);
    return okReply({ size: state.received?.size ?? 0 });
  }

  /** `PATCH /v1/uploadFile/{id}[?replaceOID=]`: the file object, created or given the new bytes. */
  async finish(request: ApiRequest, uploadId: string, { replaceOID, serialization }: v.InferOutput<typeof FinishQuerySchema>): Promise<JsonReply<ServedData>> {
    const session = request.session!;
    const { received } = await this.#state(uploadId, session);
    if (serialization) checkMacros(this.ctx, serialization); // an unknown macro is refused before the file object is made
    if (!received) throw new ApiError('400', 'no bytes were uploaded under this uploadId yet; POST them first');
    const guard = this.ctx.guard(request);
    const { className } = this.ctx.files;
    const fields = { Name: received.name, Size: received.size, ContentType: received.contentType, Sha256: received.sha256 };
    const target = replaceOID === undefined ? undefined : await this.#replaceable(replaceOID, guard, fields);
    if (!target && !(await guard.may('create', className, undefined, fields))) throw new ApiError('403', `this session may not create ${className} objects (upload files)`);
    // one finish per upload, even when two race
    if ((await this.ctx.kv.take(uploadKey(uploadId))) === undefined) throw expired();
    const id = target?.id ?? newObjectId();
    if (!(await this.ctx.files.blobs.move(uploadBlob(uploadId), id))) throw expired();
    const writer: Writer = { ctx: this.ctx, request, guard };
    const { change, object } = await (target ? this.#replaced(writer, target, fields) : this.#created(writer, id, fields));
    await afterWrite(writer, { action: change.action, className: change.className, before: change.before, object });
    return objectAnswer(this.ctx, request, guard, object, serialization);
  }

  /** The new file object, through the write hooks; its bytes go again if it cannot be stored. */
  async #created(writer: Writer, id: string, fields: Fields): Promise<{ change: WriteChange; object: StoredObject }> {
    const { className } = this.ctx.files;
    try {
      const change: WriteChange = { action: 'create', className, fields };
      const written = (await beforeWrite(writer, change))!;
      return { change, object: await this.ctx.store.put({ id, className, fields: written, ifStoreTime: null }) };
    } catch (error) {
      await this.ctx.files.blobs.delete(id).catch(() => undefined);
      throw error;
    }
  }

  /**
   * The file `replaceOID` named, given the new bytes' fields, through the write hooks: written only
   * over the version read (read again when another write came first). A file deleted meanwhile stays
   * deleted, and so do the bytes just moved under its id (`404`).
   */
  async #replaced(writer: Writer, target: StoredObject, fields: Fields): Promise<{ change: WriteChange; object: StoredObject }> {
    let before: StoredObject | undefined = target;
    return retryOnConflict(async () => {
      before ??= await this.ctx.store.get(target.id);
      if (!before || before.className !== target.className) {
        await this.ctx.files.blobs.delete(target.id).catch(() => undefined);
        throw new ApiError('404', `file ${target.id} was deleted while its bytes were replaced`);
      }
      const change: WriteChange = { action: 'update', className: before.className, before, fields: { ...withoutInternal(before.fields), ...fields } };
      const written = { ...(await beforeWrite(writer, change)), ...internalFields(before) };
      const ifStoreTime = before.storeTime;
      before = undefined; // a conflict reads it again
      return { change, object: await this.ctx.store.put({ id: target.id, className: target.className, fields: written, ifStoreTime }) };
    });
  }

  /** The file `replaceOID` names: `404` unless it is a file the session may read, `403` unless it may update it. */
  async #replaceable(objectId: string, guard: Guard, fields: Fields): Promise<StoredObject> {
    const file = await served(this.ctx, guard, await this.ctx.store.get(objectId));
    if (!file || file.className !== this.ctx.files.className) throw new ApiError('404', `no file ${objectId.slice(0, 100)} to replace`);
    if (!(await guard.may('update', file.className, file, { ...file.fields, ...fields }))) {
      throw new ApiError('403', `this session may not update ${file.className} objects (replace a file's bytes)`);
    }
    return file;
  }

  /** Starting and sending an upload need the file class's create or update rule (which one is known at `PATCH`). */
  async #mayUpload(request: ApiRequest): Promise<void> {
    const guard = this.ctx.guard(request);
    const { className } = this.ctx.files;
    if ((await guard.scope('create', className)) === 'all' || (await guard.scope('update', className)) !== 'none') return;
    throw new ApiError('403', `this session may not create or update ${className} objects (upload files)`);
  }

  /** The upload's state; `404` when it is unknown, expired, finished or another principal's. */
  async #state(uploadId: string, session: Session): Promise<UploadState> {
    const raw = /^[A-Za-z0-9_-]{22}$/.test(uploadId) ? await this.ctx.kv.get(uploadKey(uploadId)) : undefined;
    const state = raw === undefined ? undefined : (JSON.parse(raw) as UploadState);
    if (!state || state.principalId !== session.principalId) throw expired();
    return state;
  }

  /** Drops the bytes of uploads older than an hour, in the background, at most every ten minutes. */
  #sweepNow(): void {
    const now = this.ctx.now();
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    this.ctx.files.blobs.sweep(UPLOAD_BLOB_PREFIX, now - UPLOAD_TTL_MS).catch((error: unknown) => this.ctx.onError(error));
  }
}

/** A raw body's name: `filename` of its `Content-Disposition` header, else the `name` query parameter. */
function rawName(request: ApiRequest, fromQuery: string | undefined): string | undefined {
  const disposition = request.headers.get('content-disposition');
  if (disposition) {
    try {
      const name = parseDisposition(disposition).parameters.filename;
      if (name) return name;
    } catch {
      throw new ApiError('400', 'Content-Disposition of the upload is malformed');
    }
  }
  return fromQuery;
}

function fileName(name: string | undefined): string {
  if (name === undefined || name === '') return 'upload';
  if (name.length > MAX_NAME_LENGTH) throw new ApiError('400', `the file name is longer than ${MAX_NAME_LENGTH} characters`);
  return name;
}

function tooLarge(limit: number): ApiError {
  return new ApiError('413', `the upload is larger than ${limit} bytes`);
}

function expired(): ApiError {
  return new ApiError('404', 'no such upload: unknown, finished, or started more than an hour ago');
}
