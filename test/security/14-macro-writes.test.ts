/**
 * Issue 23, item 5: a macro that wrote through its context's store skipped the write path: access
 * rules, beforeWrite/afterWrite and the deletion of a file's bytes. The store a macro gets through
 * /v1/execute is now the session's: reads as it may read, writes through createObject,
 * updateObject and deleteObject.
 */
import { describe, expect, test } from 'vitest';
import { demoAccess } from '../../examples/demo-access.mjs';
import { MemoryBlobStore, type Macros, type ServiceOptions } from '../../src/index.js';
import { call, demoService, login } from '../helpers.js';

const macros: Macros = {
  createCustomer: async (ctx, params) => (await ctx.store.put({ className: 'Customer', fields: { Name: String(params.name) } })).id,
  renameCustomer: async (ctx, params) => (await ctx.store.put({ id: String(params.id), className: 'Customer', fields: { Name: String(params.name) } })).fields.Name,
  deleteObject: async (ctx, params) => ctx.store.delete(String(params.id)),
  readObject: async (ctx, params) => ((await ctx.store.get(String(params.id))) ? 'found' : 'absent'),
};

async function setup(options: ServiceOptions = {}) {
  const writes: string[] = [];
  const blobs = new MemoryBlobStore();
  const service = await demoService({
    access: demoAccess,
    macros,
    files: { blobs },
    objects: {
      beforeWrite: (_ctx, change) => void writes.push(`before ${change.action} ${change.className}`),
      afterWrite: (_ctx, result) => void writes.push(`after ${result.action} ${result.className}`),
    },
    ...options,
  });
  return { service, writes, blobs };
}

const run = (service: Awaited<ReturnType<typeof setup>>['service'], sessionId: string, name: string, json: unknown) =>
  call(service, 'POST', `/v1/execute/${name}`, { headers: { sessionId }, json });

describe("a macro's store", () => {
  test('a write runs beforeWrite and afterWrite, as POST and PATCH /v1/object do', async () => {
    const { service, writes } = await setup();
    const alice = await login(service, 'alice'); // sales: creates and updates customers
    const created = await run(service, alice, 'createCustomer', { name: 'Macro GmbH' });
    expect(created.body.status.internalStatus, created.text).toBe('0');
    const renamed = await run(service, alice, 'renameCustomer', { id: created.body.data, name: 'Macro AG' });
    expect(renamed.body.data).toBe('Macro AG');
    expect(writes).toEqual(['before create Customer', 'after create Customer', 'before update Customer', 'after update Customer']);
  });

  test('a write the session may not do is a 403 envelope, and nothing is written', async () => {
    const { service, writes } = await setup();
    const bob = await login(service, 'bob'); // support: reads customers, writes none
    const refused = await run(service, bob, 'createCustomer', { name: 'Nope' });
    expect([refused.status, refused.body.status.internalStatus, refused.body.data]).toEqual([403, '403', {}]);
    const update = await run(service, bob, 'renameCustomer', { id: 'CUS00001', name: 'Nope' });
    expect(update.body.status.internalStatus).toBe('403');
    const deleted = await run(service, bob, 'deleteObject', { id: 'CUS00001' });
    expect(deleted.body.status.internalStatus).toBe('403');
    expect(writes).toEqual([]);
    const alice = await login(service, 'alice');
    expect((await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId: alice } })).body.data.Name).not.toBe('Nope');
  });

  test('reads answer only what the session may read: another user is absent for bob', async () => {
    const { service } = await setup();
    const bob = await login(service, 'bob');
    expect((await run(service, bob, 'readObject', { id: 'USR00001' })).body.data).toBe('absent');
    expect((await run(service, bob, 'readObject', { id: 'USR00002' })).body.data).toBe('found');
    expect((await run(service, bob, 'renameCustomer', { id: 'USR00001', name: 'x' })).body.status.internalStatus).toBe('404');
  });

  test('deleting a file object deletes its bytes', async () => {
    const { service, blobs } = await setup();
    const alice = await login(service, 'alice'); // admins: deletes documents
    const uploadId = (await call(service, 'GET', '/v1/uploadFile', { headers: { sessionId: alice } })).body.data.uploadId;
    await call(service, 'POST', `/v1/uploadFile/${uploadId}`, { headers: { sessionId: alice, 'content-type': 'text/plain' }, body: 'secret bytes' });
    const file = (await call(service, 'PATCH', `/v1/uploadFile/${uploadId}`, { headers: { sessionId: alice } })).body.data;
    expect(await blobs.stat(file['~ObjectID'])).toBeDefined();
    const deleted = await run(service, alice, 'deleteObject', { id: file['~ObjectID'] });
    expect(deleted.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: true });
    expect(await blobs.stat(file['~ObjectID'])).toBeUndefined();
  });
});
