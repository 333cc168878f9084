/**
 * The one write path (PROTOCOL.md 6.3, 6.4): every create, update and delete of an object, whoever asks
 * for it (the object routes, uploads, and whatever else writes objects for a request), goes through
 * these functions, so the access rules, the host's write hooks, file bytes and what follows a write
 * happen alike for every caller. Routes only read the request and shape the answer.
 */
import type { WriteContext } from './context.js';
import { checkByteFields } from '../../files/settings.js';
import { ApiError } from '../../http/errors.js';
import type { ApiRequest } from '../../http/request.js';
import { StoreConflictError } from '../../storage/errors.js';
import type { Fields, ObjectInput, StoredObject } from '../../storage/types.js';
import type { Guard } from '../access.js';
import { checkUnlocked } from './locks.js';
import { recycle } from './recycle.js';
import { internalFields, withoutInternal } from '../names.js';
import { served } from '../read/index.js';
import { retryOnConflict, type WriteChange, type WriteResult } from './writes.js';

/** Who writes: the service, the request being answered and its session's view of the rules. */
export interface Writer {
  ctx: WriteContext;
  request: ApiRequest;
  guard: Guard;
}

/** The writer of a request: its session's guard, made once per request. */
export function writerOf(ctx: WriteContext, request: ApiRequest, rightsControlKey?: string): Writer {
  return { ctx, request, guard: ctx.guard(request, rightsControlKey) };
}

/**
 * Runs `beforeWrite` (its fields replace the change's; `_` members never reach the store), then checks
 * the fields to be stored against the class's declaration (PROTOCOL.md 6.8): every create and update,
 * whoever asks for it, passes here.
 */
export async function beforeWrite(writer: Writer, change: WriteChange): Promise<Fields | undefined> {
  const hook = writer.ctx.writeHooks.beforeWrite;
  if (hook) {
    const replaced = await hook(writer.ctx.macroContext(writer.request), change);
    if (replaced) change.fields = replaced;
  }
  const fields = change.fields && withoutInternal(change.fields);
  if (fields) await writer.ctx.schema.check(change.className, fields);
  return fields;
}

/** What follows every write that happened: its change event (PROTOCOL.md 8) and the host's `afterWrite`. */
export async function afterWrite(writer: Writer, result: WriteResult): Promise<void> {
  await writer.ctx.events.publish(result);
  await writer.ctx.writeHooks.afterWrite?.(writer.ctx.macroContext(writer.request), result);
}

/** `403` unless the session may create an object of `className` with `fields` (the class's create rule, `authorize`); file fields checked. */
async function checkMayCreate(writer: Writer, className: string, fields: Fields): Promise<void> {
  const { ctx, guard } = writer;
  if ((await guard.scope('create', className)) !== 'all') throw new ApiError('403', `this session may not create ${className} objects`);
  checkByteFields(ctx.files, className, fields);
  if (!(await guard.may('create', className, undefined, fields))) throw new ApiError('403', `this session may not create ${className} objects`);
}

/**
 * Throws what a create of `className` with `fields` (already checked by `bodyFields`) would be refused
 * with, writing nothing: the create rule, then the declaration (PROTOCOL.md 6.12, checking rows before
 * an import). The host's `beforeWrite` is not run: it is told of writes, and this is none.
 */
export async function checkCreate(writer: Writer, className: string, fields: Fields): Promise<void> {
  await checkMayCreate(writer, className, fields);
  await writer.ctx.schema.check(className, withoutInternal(fields));
}

/** A new object of `className` with `fields` (already checked by `bodyFields`): `403` unless the session may create it. */
export async function createObject(writer: Writer, className: string, fields: Fields): Promise<StoredObject> {
  const { ctx } = writer;
  await checkMayCreate(writer, className, fields);
  const change: WriteChange = { action: 'create', className, fields };
  const object = await ctx.store.put({ className, fields: (await beforeWrite(writer, change))! });
  await afterWrite(writer, { action: 'create', className, object });
  return object;
}

/** How an update applies its changes (PROTOCOL.md 6.3, 6.7). */
export interface UpdateOptions {
  /** `storeMode=10`: the object becomes exactly the changes (members not given are removed; `_` fields stay). */
  replace?: boolean;
  /** The right the change needs: `update` (default), or `security` for per-object security entries. */
  right?: 'update' | 'security';
  /** The internal (`_`) fields to store instead of the object's own (only the service's own routes set them). */
  internal?: (before: StoredObject) => Fields;
}

/** The changes of an update: fields, or fields computed from the version about to be changed. */
export type Changes = Fields | ((before: StoredObject) => Fields);

/** `403` unless this session may change `before` (with `fields`, when known), `423` while another session holds its lock. */
async function checkChange(writer: Writer, before: StoredObject, right: 'update' | 'security', fields?: Fields): Promise<void> {
  const { ctx, guard, request } = writer;
  if (!(await guard.may(right, before.className, before))) throw new ApiError('403', `this session may not ${right === 'update' ? 'update' : 'change the security of'} ${before.className} objects`);
  await checkUnlocked(ctx, request.session, before.id);
  if (fields && !(await guard.may(right, before.className, before, fields))) throw new ApiError('403', `this session may not update this ${before.className} object`);
}

/** The fields an update stores: the changes merged (or, replacing, alone), through `beforeWrite`, with the internal fields. */
async function updatedFields(writer: Writer, before: StoredObject, changes: Fields, options: UpdateOptions): Promise<{ change: WriteChange; store: () => Promise<Fields> }> {
  const fields = options.replace ? { ...changes } : { ...withoutInternal(before.fields), ...changes };
  const change: WriteChange = { action: 'update', className: before.className, before, fields };
  return { change, store: async () => ({ ...(await beforeWrite(writer, change)), ...(options.internal ?? internalFields)(before) }) };
}

/**
 * Changes `changes` of the object `read()` answers (it throws `404` for one the session may not see).
 * With `expected` (the `~StoreTime` a client read) only that version is changed (else `409`); without
 * it the change applies to the version read, read again when another write came first.
 */
export async function updateObject(writer: Writer, read: () => Promise<StoredObject>, changes: Changes, expected?: number, options: UpdateOptions = {}): Promise<StoredObject> {
  const { ctx } = writer;
  const write = async () => {
    const before = await read();
    await checkChange(writer, before, options.right ?? 'update');
    if (expected !== undefined && before.storeTime !== expected) throw new StoreConflictError();
    const given = typeof changes === 'function' ? changes(before) : changes;
    checkByteFields(ctx.files, before.className, given, before);
    const { change, store } = await updatedFields(writer, before, given, options);
    if (!(await writer.guard.may(options.right ?? 'update', before.className, before, change.fields))) throw new ApiError('403', `this session may not update this ${before.className} object`);
    return { before, object: await ctx.store.put({ id: before.id, className: before.className, fields: await store(), ifStoreTime: before.storeTime }) };
  };
  const { before, object } = expected === undefined ? await retryOnConflict(write) : await write();
  await afterWrite(writer, { action: 'update', className: object.className, before, object });
  return object;
}

/**
 * Changes `changes` on every object `select()` answers, all or nothing (PROTOCOL.md 6.3 bulk `PATCH`):
 * any object this session may not update (`403`) or another session holds locked (`423`) stops it
 * before anything is written; the store's `putMany` writes them in one step where it has one (else
 * one after the other). A concurrent change to any of them selects and checks again.
 */
export async function updateObjects(writer: Writer, select: () => Promise<StoredObject[]>, changes: Fields, options: UpdateOptions = {}): Promise<StoredObject[]> {
  const { ctx, guard } = writer;
  const write = async () => {
    const befores = await select();
    for (const before of befores) {
      await checkChange(writer, before, 'update');
      checkByteFields(ctx.files, before.className, changes, before);
    }
    const planned = await Promise.all(befores.map((before) => updatedFields(writer, before, changes, options)));
    for (const { change } of planned) {
      const before = change.before!;
      if (!(await guard.may('update', before.className, before, change.fields))) throw new ApiError('403', `this session may not update ${before.className} object ${before.id} of the selection; nothing was written`);
    }
    const inputs: ObjectInput[] = [];
    for (const { change, store } of planned) inputs.push({ id: change.before!.id, className: change.className, fields: await store(), ifStoreTime: change.before!.storeTime });
    const objects = ctx.store.putMany ? await ctx.store.putMany(inputs) : await putOneByOne(ctx, inputs);
    return { befores, objects };
  };
  const { befores, objects } = await retryOnConflict(write);
  for (let i = 0; i < objects.length; i++) await afterWrite(writer, { action: 'update', className: objects[i]!.className, before: befores[i], object: objects[i] });
  return objects;
}

async function putOneByOne(ctx: WriteContext, inputs: ObjectInput[]): Promise<StoredObject[]> {
  const out: StoredObject[] = [];
  for (const input of inputs) out.push(await ctx.store.put(input));
  return out;
}

/**
 * Deletes `before` (which the session may delete: checked here); a file object's bytes go with it
 * (PROTOCOL.md 6.6). With `recycle` it goes to the session's recycle bin instead, bytes kept (6.3).
 */
export async function deleteObject(writer: Writer, before: StoredObject, options: { recycle?: boolean } = {}): Promise<void> {
  const { ctx, guard, request } = writer;
  if (!(await guard.may('delete', before.className, before))) throw new ApiError('403', `this session may not delete ${before.className} objects`);
  await checkUnlocked(ctx, request.session, before.id);
  await beforeWrite(writer, { action: 'delete', className: before.className, before });
  if (options.recycle && request.session) {
    // the bin takes the version deleted: one written since the read is read (and checked) again
    let current: StoredObject | undefined = before;
    for (let attempt = 1; current && !(await recycle(ctx, current, request.session.principalId)); attempt++) {
      if (attempt >= 5) throw new StoreConflictError();
      current = await served(ctx, guard, await ctx.store.get(before.id));
      if (current && !(await guard.may('delete', current.className, current))) throw new ApiError('403', `this session may not delete ${current.className} objects`);
    }
    if (!current) return; // deleted by another request meanwhile: as a delete of an object already gone
    before = current;
  } else {
    // a file's bytes go first: should the object's delete then fail, a retry finds it and nothing is
    // left behind; and again after it, should a replaceOID have put new bytes in between
    const isFile = before.className === ctx.files.className;
    if (isFile) await ctx.files.blobs.delete(before.id);
    await ctx.store.delete(before.id);
    if (isFile) await ctx.files.blobs.delete(before.id);
  }
  await afterWrite(writer, { action: 'delete', className: before.className, before });
}
