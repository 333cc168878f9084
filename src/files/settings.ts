import { ApiError } from '../http/errors.js';
import type { BlobStore } from '../storage/blobs.js';
import { MemoryBlobStore } from '../storage/memory-blobs.js';
import type { Fields, StoredObject } from '../storage/types.js';

/** Files: uploads and downloads of the file class's bytes (PROTOCOL.md 6.6). */
export interface FileOptions {
  /** Where the bytes live. Default: an in-process `MemoryBlobStore` (gone on restart). */
  blobs?: BlobStore;
  /** Largest upload, in bytes; one byte more is `413`, answered before the rest is read. Default 100 MiB. */
  maxUploadBytes?: number;
  /** The file class: objects with `Name`, `Size`, `ContentType` and `Sha256`. Default `Document`. */
  className?: string;
}

/** What the file routes see of the options, defaults applied. */
export interface FileSettings {
  readonly blobs: BlobStore;
  readonly maxUploadBytes: number;
  readonly className: string;
}

export const DEFAULT_MAX_UPLOAD_BYTES = 100 * 1024 * 1024;

export function fileSettings(options: FileOptions = {}, now: () => number): FileSettings {
  const maxUploadBytes = options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
  if (!Number.isSafeInteger(maxUploadBytes) || maxUploadBytes < 0) throw new Error('files.maxUploadBytes must be a whole number of bytes');
  const className = options.className ?? 'Document';
  if (!/^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(className)) throw new Error('files.className must match [A-Za-z][A-Za-z0-9_]{0,63}');
  return { blobs: options.blobs ?? new MemoryBlobStore({ now }), maxUploadBytes, className };
}

/** The file class's fields an upload sets from the bytes it stored. */
const BYTE_FIELDS = ['Size', 'ContentType', 'Sha256'] as const;

/**
 * `400` when a create or update through the object routes would set a file's `Size`, `ContentType` or
 * `Sha256` to anything but what its bytes gave (`before`'s value): only an upload sets them, so they
 * always describe the bytes a download sends. `Name` and any other field may change; an object made
 * without bytes gets them from an upload with `replaceOID`.
 */
export function checkByteFields(settings: FileSettings, className: string, changes: Fields, before?: StoredObject): void {
  if (className !== settings.className) return;
  for (const name of BYTE_FIELDS) {
    if (Object.hasOwn(changes, name) && JSON.stringify(changes[name]) !== JSON.stringify(before?.fields[name])) {
      throw new ApiError('400', `${name} of a ${className} object is set by uploading its bytes (/v1/uploadFile), not written`);
    }
  }
}
