/**
 * A write's `actions` (PROTOCOL.md 6.3): read and checked in full before anything is written, then run
 * in order after the write. `add` and `remove` are built in (they change a set field of another object
 * through the one write path); every other type is a host action (`actions: {sendObject: fn}`).
 */
import { ApiError, clip } from '../../http/errors.js';
import { isSet, type StoredObject } from '../../storage/types.js';
import { served } from '../read/index.js';
import { updateObject, type Writer } from './write-path.js';
import type { WriteAction } from './writes.js';

export const MAX_ACTIONS = 20;
const WHEN: Readonly<Record<string, WriteAction['when']>> = { Success: 'S', S: 'S', Error: 'E', E: 'E', Any: 'A', A: 'A' };
const BUILT_IN = new Set(['add', 'remove']);

/** The `actions` parameter as sent (JSON text), checked: `400` naming what is wrong, before any write. */
export function parseActions(text: string | undefined, hostTypes: Readonly<Record<string, unknown>>): WriteAction[] {
  if (text === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError('400', 'actions must be a JSON array of {"type", "when"?, ...}; it is not JSON');
  }
  if (!Array.isArray(parsed)) throw new ApiError('400', 'actions must be a JSON array of {"type", "when"?, ...}');
  if (parsed.length > MAX_ACTIONS) throw new ApiError('400', `actions holds ${parsed.length} actions; at most ${MAX_ACTIONS} are allowed`);
  return parsed.map((item, i) => {
    const at = `actions[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new ApiError('400', `${at} must be an object {"type", "when"?, ...}`);
    const { type, when = 'S', ...rest } = item as Record<string, unknown>;
    if (typeof type !== 'string' || type === '') throw new ApiError('400', `${at}.type must be a non-empty string`);
    if (!BUILT_IN.has(type) && !Object.hasOwn(hostTypes, type)) {
      const known = ['add', 'remove', ...Object.keys(hostTypes)].join(', ');
      throw new ApiError('400', `${at}.type ${clip(type)} is not a known action (known: ${known})`);
    }
    if (typeof when !== 'string' || !Object.hasOwn(WHEN, when)) throw new ApiError('400', `${at}.when must be Success, Error or Any (or S, E, A)`);
    const action: WriteAction = { ...rest, type, when: WHEN[when]! };
    if (BUILT_IN.has(type)) checkSetAction(action, at);
    return action;
  });
}

function checkSetAction(action: WriteAction, at: string): void {
  if (typeof action.object !== 'string' || action.object === '' || action.object.length > 128) throw new ApiError('400', `${at}.object must be the id of the object whose set field changes`);
  const field = action.field;
  if (typeof field !== 'string' || field === '' || field.length > 128 || /^[_$~]/.test(field)) {
    throw new ApiError('400', `${at}.field must name a set field (1 to 128 characters, not starting with _, $ or ~)`);
  }
  if (action.operation !== undefined && action.operation !== 'add' && action.operation !== 'addobject') {
    throw new ApiError('400', `${at}.operation must be add or addobject`);
  }
}

/**
 * Runs the actions due `after` a write (`success`: `S` and `A`; `error`: `E` and `A`) with `object`, in
 * order. The first to fail stops the rest; its error is the answer, saying that `done` stands.
 */
export async function runActions(writer: Writer, actions: readonly WriteAction[], after: 'success' | 'error', object: StoredObject | undefined, done = 'the write itself stands'): Promise<void> {
  for (let i = 0; i < actions.length; i++) {
    const action = actions[i]!;
    if (action.when !== 'A' && action.when !== (after === 'success' ? 'S' : 'E')) continue;
    try {
      if (BUILT_IN.has(action.type)) {
        if (object) await changeSet(writer, action, object);
      } else {
        await writer.ctx.writeOptions.actions[action.type]!(writer.ctx.macroContext(writer.request), action, object);
      }
    } catch (error) {
      if (!(error instanceof ApiError)) writer.ctx.onError(error);
      const message = error instanceof ApiError ? error.message : 'an unexpected error';
      throw new ApiError(error instanceof ApiError ? error.code : '500', `action ${i} (${clip(action.type)}) failed: ${message}; ${done}`);
    }
  }
}

/** `add`/`remove`: `object` into (or out of) the set field `action.field` of `action.object`, which needs the update right there. */
async function changeSet(writer: Writer, action: WriteAction, object: StoredObject): Promise<void> {
  const targetId = action.object as string;
  const field = action.field as string;
  const read = async () => {
    const target = await served(writer.ctx, writer.guard, await writer.ctx.store.get(targetId));
    if (!target) throw new ApiError('404', `no object ${clip(targetId)}`);
    return target;
  };
  await updateObject(writer, read, (before) => {
    const value = before.fields[field];
    if (value !== undefined && value !== null && !isSet(value)) throw new ApiError('400', `field ${clip(field)} of ${clip(targetId)} is not a set of references`);
    const members = value ? [...value.$set] : [];
    if (action.type === 'remove') return { [field]: { $set: members.filter((id) => id !== object.id) } };
    if (action.operation === 'addobject' || !members.includes(object.id)) members.push(object.id);
    return { [field]: { $set: members } };
  });
}
