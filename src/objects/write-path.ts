/**
 * The one write path (PROTOCOL.md 6.3, 6.4): every create, update and delete of an object, whoever asks
 * for it (the object routes, uploads, and whatever else writes objects for a request), goes through
 * these functions, so the access rules, the host's write hooks, file bytes and what follows a write
 * happen alike for every caller. Routes only read the request and shape the answer.
 */
import type { ServiceContext } from '../context.js';
import { checkByteFields } from '../files/settings.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { StoreConflictError } from '../storage/errors.js';
import type { Fields, StoredObject } from '../storage/types.js';
import type { Guard } from './access.js';
import { internalFields, retryOnConflict, withoutInternal, type WriteChange, type WriteResult } from './writes.js';

/** Who writes: the service, the request being answered and its session's view of the rules. */
export interface Writer {
  ctx: ServiceContext;
  request: ApiRequest;
  guard: Guard;
}

/** Runs `beforeWrite` (its fields replace the change's; `_` members never reach the store). */
export async function beforeWrite(writer: Writer, change: WriteChange): Promise<Fields | undefined> {
  const hook = writer.ctx.writeHooks.beforeWrite;
  if (hook) {
    const replaced = await hook(writer.ctx.macroContext(writer.request), change);
    if (replaced) change.fields = replaced;
  }
  return change.fields && withoutInternal(change.fields);
}

/** What follows every write that happened: its change event (PROTOCOL.md 8) and the host's `afterWrite`. */
export async function afterWrite(writer: Writer, result: WriteResult): Promise<void> {
  writer.ctx.events.publish(result);
  await writer.ctx.writeHooks.afterWrite?.(writer.ctx.macroContext(writer.request), result);
}

/** A new object of `className` with `fields` (already checked by `bodyFields`): `403` unless the session may create it. */
export async function createObject(writer: Writer, className: string, fields: Fields): Promise<StoredObject> {
  const { ctx, guard } = writer;
  if ((await guard.scope('create', className)) !== 'all') throw new ApiError('403', `this session may not create ${className} objects`);
  checkByteFields(ctx.files, className, fields);
  if (!(await guard.may('create', className, undefined, fields))) throw new ApiError('403', `this session may not create ${className} objects`);
  const change: WriteChange = { action: 'create', className, fields };
  const object = await ctx.store.put({ className, fields: (await beforeWrite(writer, change))! });
  await afterWrite(writer, { action: 'create', className, object });
  return object;
}

/**
 * Changes `changes` of the object `read()` answers (it throws `404` for one the session may not see).
 * With `expected` (the `~StoreTime` a client read) only that version is changed (else `409`); without
 * it the change applies to the version read, read again when another write came first.
 */
export async function updateObject(writer: Writer, read: () => Promise<StoredObject>, changes: Fields, expected?: number): Promise<StoredObject> {
  const { ctx, guard } = writer;
  const write = async () => {
    const before = await read();
    if (!(await guard.may('update', before.className, before))) throw new ApiError('403', `this session may not update ${before.className} objects`);
    if (expected !== undefined && before.storeTime !== expected) throw new StoreConflictError();
    checkByteFields(ctx.files, before.className, changes, before);
    const change: WriteChange = { action: 'update', className: before.className, before, fields: { ...withoutInternal(before.fields), ...changes } };
    if (!(await guard.may('update', before.className, before, change.fields))) throw new ApiError('403', `this session may not update this ${before.className} object`);
    const fields = { ...(await beforeWrite(writer, change)), ...internalFields(before) };
    return { before, object: await ctx.store.put({ id: before.id, className: before.className, fields, ifStoreTime: before.storeTime }) };
  };
  const { before, object } = expected === undefined ? await retryOnConflict(write) : await write();
  await afterWrite(writer, { action: 'update', className: object.className, before, object });
  return object;
}

/** Deletes `before` (which the session may delete: checked here); a file object's bytes go with it (PROTOCOL.md 6.6). */
export async function deleteObject(writer: Writer, before: StoredObject): Promise<void> {
  const { ctx, guard } = writer;
  if (!(await guard.may('delete', before.className, before))) throw new ApiError('403', `this session may not delete ${before.className} objects`);
  await beforeWrite(writer, { action: 'delete', className: before.className, before });
  // a file's bytes go first: should the object's delete then fail, a retry finds it and nothing is
  // left behind; and again after it, should a replaceOID have put new bytes in between
  const isFile = before.className === ctx.files.className;
  if (isFile) await ctx.files.blobs.delete(before.id);
  await ctx.store.delete(before.id);
  if (isFile) await ctx.files.blobs.delete(before.id);
  await afterWrite(writer, { action: 'delete', className: before.className, before });
}
