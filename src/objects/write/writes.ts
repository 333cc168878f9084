/**
 * Writing objects (PROTOCOL.md 6.3): the body turned into fields, references checked against the
 * store and the access rules, conditional writes on `~StoreTime`, and the host's write hooks.
 */
import { ApiError, clip } from '../../http/errors.js';
import type { MacroContext } from '../../macros/registry.js';
import { StoreConflictError } from '../../storage/errors.js';
import type { FieldValue, Fields, ObjectStore, StoredObject } from '../../storage/types.js';
import type { Guard } from '../access.js';

/** A write about to happen: `fields` is what will be stored (create, update); the hook may change it. */
export interface WriteChange {
  action: 'create' | 'update' | 'delete';
  className: string;
  /** The object as stored before (update, delete). */
  before?: StoredObject;
  /** The fields to store, after merging (create, update). */
  fields?: Fields;
}

/** A write that happened: `object` is what was stored (absent after a delete). */
export interface WriteResult {
  action: WriteChange['action'];
  className: string;
  before?: StoredObject;
  object?: StoredObject;
}

/** The host's write hooks (`objects.beforeWrite`, `objects.afterWrite`). */
export interface WriteHooks {
  /** May change `change.fields` (or return new fields) or refuse by throwing an `ApiError`. */
  beforeWrite?: (context: MacroContext, change: WriteChange) => Fields | void | Promise<Fields | void>;
  afterWrite?: (context: MacroContext, result: WriteResult) => void | Promise<void>;
}

/** One action of a write's `actions` parameter (PROTOCOL.md 6.3), `when` normalised to its letter. */
export interface WriteAction {
  type: string;
  /** `S` after a successful write (the default), `E` after a failed one, `A` after either. */
  when: 'S' | 'E' | 'A';
  [member: string]: unknown;
}

/**
 * A host action (`actions: {sendObject: fn}`): runs after a write with the written object (absent
 * after a failed create), or on each object of `POST /v1/action/{className}`. Throw an `ApiError` to
 * fail with your own code; the write itself stands.
 */
export type HostAction = (context: MacroContext, action: WriteAction, object: StoredObject | undefined) => void | Promise<void>;

/** What writes do beyond storing: deletes to the recycle bin or for good, the bin's days, host actions. */
export interface WriteOptions {
  deleteMode: 'delete' | 'recycle';
  recycleDays: number;
  actions: Readonly<Record<string, HostAction>>;
}

/** Days a recycled object waits by default (PROTOCOL.md 6.3). */
export const DEFAULT_RECYCLE_DAYS = 30;

/** The service's `WriteOptions` from the `objects` and `actions` options (an error names a bad one). */
export function writeOptions(objects: { deleteMode?: string; recycleDays?: number } = {}, actions: Readonly<Record<string, HostAction>> = {}): WriteOptions {
  const { deleteMode = 'delete', recycleDays = DEFAULT_RECYCLE_DAYS } = objects;
  if (deleteMode !== 'delete' && deleteMode !== 'recycle') throw new Error('objects.deleteMode must be "delete" or "recycle"');
  if (typeof recycleDays !== 'number' || !Number.isFinite(recycleDays) || recycleDays < 0) throw new Error('objects.recycleDays must be a number of days, at least 0');
  for (const [type, action] of Object.entries(actions)) {
    if (type === 'add' || type === 'remove') throw new Error(`actions.${type}: add and remove are built in`);
    if (typeof action !== 'function') throw new Error(`actions.${type} must be a function`);
  }
  return { deleteMode, recycleDays, actions };
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Store times as the protocol writes them, `YYYYMMDDThhmmss+hh:mm`, or ISO 8601 as the Dart client
 * sends them (`2026-01-01T10:00:00.123Z`), compared at whole seconds.
 */
export function parseStoreTime(text: unknown): number {
  if (typeof text === 'string' && ISO_TIME.test(text)) {
    const ms = Date.parse(text.replace(/(\.\d{3})\d+/, '$1'));
    if (Number.isFinite(ms)) return Math.floor(ms / 1000) * 1000;
  }
  const parts = typeof text === 'string' ? /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})([+-])(\d{2}):(\d{2})$/.exec(text) : null;
  if (!parts) throw new ApiError('400', '~StoreTime must be a store time as read, e.g. 20260115T090000+00:00, or ISO 8601 such as 2026-01-15T09:00:00.000Z');
  const [, y, mo, d, h, mi, s, , oh, om] = parts.map(Number) as number[];
  const offset = (parts[7] === '-' ? -1 : 1) * (oh! * 60 + om!) * 60_000;
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!) - offset;
}

/**
 * The body's members as fields: `~` members ignored; `_`/`$`/empty/overlong names refused;
 * `{"~ObjectID"}` a reference and `{"~Elements": [...]}` a set of references, each to an object the
 * session may read; any other JSON value stored as it is (but never one a store would read as a reference).
 */
export async function bodyFields(body: Record<string, unknown>, store: ObjectStore, guard: Guard, internal: ReadonlySet<string>): Promise<Fields> {
  // without prototype: a member named __proto__ or toString is a field like any other
  const fields = Object.create(null) as Fields;
  const targets = new Map<string, string>(); // referenced id -> the field naming it
  for (const [name, value] of Object.entries(body)) {
    if (name.startsWith('~')) continue;
    if (name === '' || name.length > 128) throw new ApiError('400', `field name ${clip(name)} must have 1 to 128 characters`);
    if (name.startsWith('_') || name.startsWith('$')) throw new ApiError('400', `field ${clip(name)} may not be written (names starting with _ or $ are reserved)`);
    // PostgreSQL cannot hold U+0000 in text: refused at the door on every store
    if (name.includes('\u0000')) throw new ApiError('400', `field name ${JSON.stringify(clip(name))} contains the character U+0000, which a field name may not hold`);
    fields[name] = fieldValue(name, value, targets);
  }
  if (targets.size > 0) {
    const found = new Map((await store.getMany([...targets.keys()])).map((object) => [object.id, object]));
    for (const [id, field] of targets) {
      const target = found.get(id);
      if (!target || internal.has(target.className) || !(await guard.readable(target))) {
        throw new ApiError('400', `field ${clip(field)} references ${clip(id)}, which does not exist or may not be read`);
      }
    }
  }
  return fields;
}

function reference(field: string, value: unknown, targets: Map<string, string>): string {
  const id = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)['~ObjectID'] : undefined;
  if (typeof id !== 'string' || id === '' || id.length > 128) throw new ApiError('400', `field ${clip(field)}: a reference must be {"~ObjectID": "<id>"}`);
  targets.set(id, field);
  return id;
}

function fieldValue(field: string, value: unknown, targets: Map<string, string>): FieldValue {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value as FieldValue;
  if (Object.hasOwn(value, '~ObjectID')) return { $ref: reference(field, value, targets) };
  if (Object.hasOwn(value, '~Elements')) {
    const elements = (value as Record<string, unknown>)['~Elements'];
    if (!Array.isArray(elements)) throw new ApiError('400', `field ${clip(field)}: ~Elements must be a list of references`);
    return { $set: [...new Set(elements.map((element) => reference(field, element, targets)))] };
  }
  if (Object.hasOwn(value, '$ref') || Object.hasOwn(value, '$set')) {
    throw new ApiError('400', `field ${clip(field)}: write references as {"~ObjectID": ...}, not $ref or $set`);
  }
  return value as FieldValue;
}

/** Runs `write` up to `attempts` times while it meets a concurrent change (a conditional write lost). */
export async function retryOnConflict<T>(write: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof StoreConflictError) || attempt >= attempts) throw error;
    }
  }
}
