import type { ReadContext } from './context.js';
import { andThen, type MaybePromise } from '../../maybe.js';
import type { StoredObject } from '../../storage/types.js';
import type { Guard } from '../access.js';

/**
 * Objects of internal classes, and objects this session may not read, are answered exactly like
 * missing ones; without a promise where the guard answers at once.
 */
export function served(ctx: ReadContext, guard: Guard, object: StoredObject | undefined): MaybePromise<StoredObject | undefined> {
  if (!object || ctx.internalClasses.has(object.className)) return undefined;
  return andThen(guard.readable(object), (readable) => (readable ? object : undefined));
}
