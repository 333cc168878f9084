/**
 * Errors a store throws. A store never speaks HTTP: the service maps these to envelopes in one place
 * (`http/envelope.ts`): unavailable is `503`, a conflict `409`, a refused value `400`. Each is branded,
 * so one thrown by a store built on another copy of odbrest (ESM and CommonJS) is still recognised.
 */
import { brandClass } from '../brand.js';

/** The storage backend is unreachable or overloaded; the request may be retried later. */
export class StorageUnavailableError extends Error {
  constructor(message = 'storage unavailable', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageUnavailableError';
  }
}

/** A conditional write (`ObjectInput.ifStoreTime`) found another version than the one expected; nothing was written. */
export class StoreConflictError extends Error {
  constructor(message = 'the object changed since it was read', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreConflictError';
  }
}

/** The store cannot hold a value it was given (for example U+0000 in PostgreSQL text); nothing was written. */
export class StoreValueError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreValueError';
  }
}

/**
 * A blob grew past the `maxBytes` given to `BlobStore.put`; the store stopped reading its stream at
 * that point, cancelled it, and kept nothing. The routes answer `413`.
 */
export class BlobTooLargeError extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number, options?: { cause?: unknown }) {
    super(`the file is larger than ${maxBytes} bytes`, options);
    this.name = 'BlobTooLargeError';
    this.maxBytes = maxBytes;
  }
}

brandClass(StorageUnavailableError, 'StorageUnavailableError');
brandClass(StoreConflictError, 'StoreConflictError');
brandClass(StoreValueError, 'StoreValueError');
brandClass(BlobTooLargeError, 'BlobTooLargeError');
