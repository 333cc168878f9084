import type { ServiceContext } from '../context.js';
import { ApiError } from '../http/errors.js';
import type { StoredObject } from '../storage/types.js';
import type { Guard } from './access.js';

/** A path segment naming an object or class: at most 128 characters. */
export function validName(value: string, what: string): string {
  if (value.length > 128) throw new ApiError('400', `${what} is longer than 128 characters`);
  return value;
}

/** Objects of internal classes, and objects this session may not read, are answered exactly like missing ones. */
export async function served(ctx: ServiceContext, guard: Guard, object: StoredObject | undefined): Promise<StoredObject | undefined> {
  return object && !ctx.internalClasses.has(object.className) && (await guard.readable(object)) ? object : undefined;
}
