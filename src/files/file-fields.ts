import type { StoredObject } from '../storage/types.js';

/** The file's media type as stored, when it is a valid header value. */
export function contentTypeOf(file: StoredObject): string {
  const type = file.fields.ContentType;
  return typeof type === 'string' && /^[\x21-\x7e][\x20-\x7e]*$/.test(type) ? type : 'application/octet-stream';
}

/** The file's `Name`, or its id. */
export function nameOf(file: StoredObject): string {
  return typeof file.fields.Name === 'string' && file.fields.Name !== '' ? file.fields.Name : file.id;
}
