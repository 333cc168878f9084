/**
 * The naming rules every part of the objects folder shares (PROTOCOL.md 6.3): what a class name may
 * be, how long a path segment may be, and which fields are internal (`_`, never served or written
 * through the routes).
 */
import * as v from 'valibot';
import { ApiError, clip } from '../http/errors.js';
import type { Fields, StoredObject } from '../storage/types.js';

export const CLASS_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** `400` for a class name a request gives that no class could have. */
export function checkClassName(name: string, what: string): string {
  if (!CLASS_NAME.test(name)) throw new ApiError('400', `${what} ${clip(name)} must match [A-Za-z][A-Za-z0-9_]{0,63}`);
  return name;
}

/** A path segment naming an object or class (`what`: "object id", "class name"): at most 128 characters, else `400`. */
export const nameParam = (what: string, description: string) =>
  v.pipe(v.string(), v.maxLength(128, `${what} is longer than 128 characters`), v.description(description));

/** The path parameter `id` naming an object (for `GET /v1/object/{id}`, also a class with no object of that id): at most 128 characters. */
export const ObjectIdParams = (description: string) => v.object({ id: nameParam('object id', description) });

/** The check of a class name a request gives: one no class could have is `400` (`checkClassName`'s message). */
const classNameCheck = (what: string) =>
  v.check((name: string) => CLASS_NAME.test(name), (issue: v.CheckIssue<string>) => `${what} ${clip(String(issue.input))} must match [A-Za-z][A-Za-z0-9_]{0,63}`);

/** A class name in the path (`POST /v1/object/{className}`): one no class could have is `400`. */
export const classNameParam = (what: string, description: string) => v.pipe(v.string(), classNameCheck(what), v.description(description));

/** A listing's class name: longer than 128 characters, or a name that cannot be a class, is `400`. */
export const ClassNameParams = v.object({
  className: v.pipe(v.string(), v.check((name) => name.length <= 128, 'class name is longer than 128 characters'), classNameCheck('class name')),
});

/** The internal (`_`) fields of a stored object, kept as they are by an update. */
export function internalFields(object: StoredObject): Fields {
  const kept = Object.create(null) as Fields;
  for (const name of Object.keys(object.fields)) if (name.startsWith('_')) kept[name] = object.fields[name]!;
  return kept;
}

/** `fields` without `_` members: what a hook returns is cleaned too, the routes never write them. */
export function withoutInternal(fields: Fields): Fields {
  const out = Object.create(null) as Fields;
  for (const name of Object.keys(fields)) if (!name.startsWith('_')) out[name] = fields[name]!;
  return out;
}
