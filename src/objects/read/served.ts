import type { ReadContext } from './context.js';
import type { StoredObject } from '../../storage/types.js';
import type { Guard } from '../access.js';

/** Objects of internal classes, and objects this session may not read, are answered exactly like missing ones. */
export async function served(ctx: ReadContext, guard: Guard, object: StoredObject | undefined): Promise<StoredObject | undefined> {
  return object && !ctx.internalClasses.has(object.className) && (await guard.readable(object)) ? object : undefined;
}
