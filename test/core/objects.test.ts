import { demoAccess } from '../../examples/demo-access.mjs';
import { describe, expect, test } from 'vitest';
import { ApiError, MemoryObjectStore, type ObjectSet, type ServiceOptions, type StoredObject } from '../../src/index.js';
import { call, demoService, expectError, login } from '../helpers.js';

async function session(options: Parameters<typeof demoService>[0] = {}) {
  const service = await demoService(options);
  const headers = { sessionId: await login(service) };
  return { service, get: (path: string) => call(service, 'GET', path, { headers }) };
}

describe('GET /v1/object/{objectId}', () => {
  test('answers the object with metadata and nested references', async () => {
    const { get } = await session({ access: { rules: { ContactPerson: { read: ['*'] } } } });
    const result = await get('/v1/object/CUS00003');
    expect(result.status).toBe(200);
    expect(result.body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
    const data = result.body.data;
    expect(Object.keys(data)).toEqual(['~ClassName', '~ObjectID', '~StoreTime', 'Name', 'Number', 'City', 'Active', 'Revenue', 'AccountManager']);
    expect(data).toMatchObject({ '~ClassName': 'Customer', '~ObjectID': 'CUS00003', Name: 'David Bauer', Number: 3, City: 'Cologne', Active: true, Revenue: 4119 });
    // depth 1: the employee in full; depth 2: contact person in full; depth 3: only metadata
    expect(data.AccountManager).toMatchObject({ '~ClassName': 'Employee', '~ObjectID': 'EMP00001', Name1: 'Alice' });
    expect(data.AccountManager.Mitarbeiteransprechpartner).toMatchObject({ '~ObjectID': 'CON00001', Name1: 'Carol' });
    expect(Object.keys(data.AccountManager.Mitarbeiteransprechpartner.Bild)).toEqual(['~ClassName', '~ObjectID', '~StoreTime']);
  });

  test('the nesting depth is configurable', async () => {
    const { get } = await session({ objects: { serializationDepth: 0 } });
    const data = (await get('/v1/object/CUS00003')).body.data;
    expect(Object.keys(data.AccountManager)).toEqual(['~ClassName', '~ObjectID', '~StoreTime']);
  });

  test('~StoreTime is the time of the last store, as YYYYMMDDThhmmss+00:00', async () => {
    const { get } = await session({ store: new MemoryObjectStore({ now: () => Date.UTC(2025, 2, 4, 5, 6, 7) }) });
    expect((await get('/v1/object/CUS00001')).body.data['~StoreTime']).toBe('20250304T050607+00:00');
  });

  test('a missing id that is no class is 404', async () => {
    const { get } = await session();
    const result = await get('/v1/object/NOPE1234');
    expectError(result, '404', 404);
    expect(result.body.status.statusMessage).toBe('no object or class NOPE1234');
  });

  test('internal fields are never served', async () => {
    const { get } = await session();
    const result = await get('/v1/object/USR00001');
    expect(result.body.data.Name).toBe('alice');
    expect(result.text).not.toMatch(/_password|_licences|pbkdf2/);
  });
});

describe('class listings', () => {
  test('GET /v1/objects/{className} answers a set, 50 per page by default', async () => {
    const { get } = await session();
    const data = (await get('/v1/objects/Customer')).body.data;
    expect(data['~Count']).toBe(50);
    expect(data['~UnfilteredCount']).toBe(300);
    expect(data['~Elements']).toHaveLength(50);
    expect(data['~Elements'][0]['~ObjectID']).toBe('CUS00001');
    expect(data['~Elements'][49]['~ObjectID']).toBe('CUS00050');
  });

  test('the /v1/object/{className} form lists too', async () => {
    const { get } = await session();
    expect((await get('/v1/object/Customer?perPage=3')).body.data).toEqual((await get('/v1/objects/Customer?perPage=3')).body.data);
  });

  test('page and perPage', async () => {
    const { get } = await session();
    const data = (await get('/v1/objects/Customer?page=2&perPage=7')).body.data;
    expect(data['~Elements'].map((o: { Number: number }) => o.Number)).toEqual([15, 16, 17, 18, 19, 20, 21]);
    const last = (await get('/v1/objects/Customer?page=42&perPage=7')).body.data;
    expect(last['~Elements'].map((o: { Number: number }) => o.Number)).toEqual([295, 296, 297, 298, 299, 300]);
  });

  test('a page past the end is an empty set with the full count', async () => {
    const { get } = await session();
    expect((await get('/v1/objects/Customer?page=100')).body.data).toEqual({ '~Count': 0, '~UnfilteredCount': 300, '~Elements': [] });
  });

  test('perPage=0 answers only the count', async () => {
    const { get } = await session();
    expect((await get('/v1/objects/Customer?perPage=0&query={"City":"Berlin"}')).body.data).toEqual({ '~Count': 0, '~UnfilteredCount': 50, '~Elements': [] });
  });

  test('perPage 1000 is allowed, over the cap is 400', async () => {
    const { get } = await session();
    expect((await get('/v1/objects/Customer?perPage=1000')).body.data['~Count']).toBe(300);
    const result = await get('/v1/objects/Customer?perPage=1001');
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe('perPage must be an integer from 0 to 1000');
  });

  test('query filters by field equality, combined with paging and reverseOrder', async () => {
    const { get } = await session();
    const query = encodeURIComponent(JSON.stringify({ City: 'Berlin', Active: false }));
    const data = (await get(`/v1/objects/Customer?query=${query}`)).body.data;
    expect(data['~UnfilteredCount']).toBe(7); // multiples of 42
    expect(data['~Elements']).toHaveLength(7);
    expect(data['~Elements'].every((o: { City: string; Active: boolean }) => o.City === 'Berlin' && !o.Active)).toBe(true);
    const reversed = (await get(`/v1/objects/Customer?query=${query}&reverseOrder=true&perPage=2`)).body.data;
    expect(reversed['~Elements'].map((o: { Number: number }) => o.Number)).toEqual([294, 252]);
    const byName = (await get(`/v1/objects/Customer?query=${encodeURIComponent('{"Name":"Ben Bauer"}')}`)).body.data;
    expect(byName['~Elements'].map((o: { Number: number }) => o.Number)).toEqual([1, 101, 201]);
  });

  test.each([
    ['page=-1', 'page must be an integer from 0 to 1000000000'],
    ['page=1.5', 'page must be an integer from 0 to 1000000000'],
    ['perPage=abc', 'perPage must be an integer from 0 to 1000'],
    ['reverseOrder=yes', 'reverseOrder must be true or false'],
    ['query=not-json', 'query must be a JSON object of field values, e.g. {"Name":"Alice"}'],
    ['query=[1]', 'query must be a JSON object of field values, e.g. {"Name":"Alice"}'],
    ['query={"City":[1]}', 'query member City must be a scalar, a reference {"~ObjectID": ...} or an object of operators'],
    ['query={"_passwordHash":"x"}', 'query member _passwordHash may not name internal field _passwordHash'],
  ])('%s is 400', async (params, message) => {
    const { get } = await session();
    const result = await get(`/v1/objects/Customer?${params.replace(/[{}"[\]$]/g, encodeURIComponent)}`);
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe(message);
  });

  test('a class without objects is the empty set, never 404 (PROTOCOL 6.2); a name that is no class is 404; one that cannot be a class 400', async () => {
    const { get } = await session({ schema: { Unicorn: { fields: { Name: 'string' } } } });
    const empty = await get('/v1/objects/Unicorn');
    expect([empty.status, empty.body]).toEqual([200, { status: { internalStatus: '0', statusMessage: 'ok' }, data: { '~Count': 0, '~UnfilteredCount': 0, '~Elements': [] } }]);
    expectError(await get('/v1/objects/Pegasus'), '404', 404);
    expectError(await get('/v1/objects/__proto__'), '400', 400);
  });
});

describe('serialization and listing hooks', () => {
  test('xApi_BuildSerialization may change or replace any object serialization', async () => {
    const { get } = await session({
      macros: {
        xApi_BuildSerialization: (_ctx, { obj, objectJson }: { obj: StoredObject; objectJson: Record<string, unknown> }) => {
          if (obj.className === 'Customer') objectJson.Label = `${obj.fields.Name} (${obj.fields.City})`;
          if (obj.className === 'Employee') return { '~ClassName': 'Employee', '~ObjectID': obj.id, Short: obj.fields.Name1 };
          return undefined;
        },
      },
    });
    const data = (await get('/v1/object/CUS00002')).body.data;
    expect(data.Label).toBe('Clara Bauer (Munich)');
    expect(data.AccountManager).toEqual({ '~ClassName': 'Employee', '~ObjectID': 'EMP00002', Short: 'Bob' });
  });

  test('xApi_FindObjects fills the set of a listing', async () => {
    let seen: ObjectSet | undefined;
    const { get } = await session({
      macros: {
        xApi_FindObjects: async (ctx, { objectSet }: { objectSet: ObjectSet }) => {
          seen = { ...objectSet };
          const { objects } = await ctx.store.find({ className: 'Customer', where: { City: 'Zurich' }, limit: 2 });
          objectSet.elements.push(...objects);
          objectSet.unfilteredCount = 99;
          return true;
        },
      },
    });
    const data = (await get('/v1/objects/Customer?page=3&perPage=2&reverseOrder=true&orderBy=-Number&query={"Active":true}')).body.data;
    expect(seen).toMatchObject({ className: 'Customer', orderBy: { field: 'Number', descending: true }, page: 3, perPage: 2, reverseOrder: true, where: { Active: true } });
    expect(data['~Count']).toBe(2);
    expect(data['~UnfilteredCount']).toBe(99);
    expect(data['~Elements'].map((o: { City: string }) => o.City)).toEqual(['Zurich', 'Zurich']);
  });

  test('xApi_FindObjects returning false fails the listing with 500 and a message', async () => {
    const { get } = await session({ macros: { xApi_FindObjects: () => false } });
    const result = await get('/v1/objects/Customer');
    expectError(result, '500', 500);
    expect(result.body.status.statusMessage).toBe('xApi_FindObjects could not list Customer');
  });
});

describe('POST /v1/execute/{macroName}', () => {
  async function macroSession(macros: NonNullable<ServiceOptions['macros']>, options: ServiceOptions = {}) {
    const service = await demoService({ macros, ...options });
    const headers = { sessionId: await login(service) };
    return { service, exec: (name: string, init: { json?: unknown; body?: string; headers?: Record<string, string> } = {}) => call(service, 'POST', `/v1/execute/${name}`, { ...init, headers: { ...headers, ...init.headers } }) };
  }

  test('passes the parameters and the session; data is what the macro returns', async () => {
    const { exec } = await macroSession({
      add: (ctx, { a, b }: { a: number; b: number }) => ({ sum: a + b, caller: ctx.session?.user, apps: ctx.session?.appNames }),
    });
    expect((await exec('add', { json: { a: 2, b: 40 } })).body).toEqual({
      status: { internalStatus: '0', statusMessage: 'ok' },
      data: { sum: 42, caller: 'alice', apps: ['crm'] },
    });
  });

  test('the body is optional; a macro returning nothing answers {}', async () => {
    const calls: unknown[] = [];
    const { exec } = await macroSession({ touch: (_ctx, params) => void calls.push(params) });
    expect((await exec('touch')).body.data).toEqual({});
    expect(calls).toEqual([{}]);
  });

  test('macros can use the store (as the session may: alice of sales updates customers)', async () => {
    const { exec, service } = await macroSession({
      rename: async (ctx, { id, name }: { id: string; name: string }) => {
        const object = await ctx.store.get(id);
        if (!object) throw new ApiError('404', `no customer ${id}`);
        await ctx.store.put({ ...object, fields: { ...object.fields, Name: name } });
        return { ok: true };
      },
    }, { access: demoAccess });
    expect((await exec('rename', { json: { id: 'CUS00007', name: 'Renamed' } })).body.data).toEqual({ ok: true });
    expect((await service.store.get('CUS00007'))?.fields.Name).toBe('Renamed');
    expectError(await exec('rename', { json: { id: 'NOPE', name: 'x' } }), '404', 404);
  });

  test('a macro may fail with its own code, message and HTTP status', async () => {
    const { exec } = await macroSession({ strict: () => { throw new ApiError('1001', 'customer is locked', { status: 409 }); } });
    const result = await exec('strict');
    expect(result.status).toBe(409);
    expect(result.body).toEqual({ status: { internalStatus: '1001', statusMessage: 'customer is locked' }, data: {} });
  });

  test('any other exception is a 500 without details; the host’s onError receives it', async () => {
    const seen: unknown[] = [];
    const { exec } = await macroSession({ broken: () => { throw new Error('db password is hunter2'); } }, { onError: (error) => seen.push(error) });
    const result = await exec('broken');
    expectError(result, '500', 500);
    expect(result.text).not.toContain('hunter2');
    expect(result.text).not.toContain('at ');
    expect(seen).toEqual([new Error('db password is hunter2')]);
  });

  test('unknown macros and the xApi_ hooks are 404', async () => {
    const { exec } = await macroSession({ xApi_FindObjects: () => true });
    expectError(await exec('nothing'), '404', 404);
    expectError(await exec('xApi_FindObjects'), '404', 404);
  });

  test('parameters must be a JSON object', async () => {
    const { exec } = await macroSession({ any: () => ({}) });
    const result = await exec('any', { json: [1, 2] });
    expectError(result, '400', 400);
    expect(result.body.status.statusMessage).toBe('macro parameters must be a JSON object');
    expectError(await exec('any', { body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), '415', 415);
  });

  test('macros can be registered and removed at run time', async () => {
    const { exec, service } = await macroSession({});
    service.macros.register('late', () => ({ late: true }));
    expect((await exec('late')).body.data).toEqual({ late: true });
    service.macros.unregister('late');
    expectError(await exec('late'), '404', 404);
  });
});

describe('internal classes', () => {
  async function withProviderEntry(options: Parameters<typeof demoService>[0] = {}) {
    const { service, get } = await session(options);
    await service.store.put({ id: 'PRV00001', className: 'OAuthProvider', fields: { name: 'Google', type: 'google', additionalData: '{"clientSecret":"s3cr3t"}' } });
    await service.store.put({ id: 'LNK00001', className: 'ExternalIdentity', fields: { provider: 'google', subject: '42', user: { $ref: 'USR00001' } } });
    await service.store.put({ id: 'REF00001', className: 'Note', fields: { About: { $ref: 'PRV00001' }, Private: { $ref: 'SEC00001' } } });
    await service.store.put({ id: 'SEC00001', className: 'Secret', fields: { Value: 'hidden' } });
    return { service, get };
  }

  test.each(['/v1/object/PRV00001', '/v1/object/LNK00001', '/v1/objects/OAuthProvider', '/v1/objects/ExternalIdentity', '/v1/object/OAuthProvider'])(
    '%s is 404: provider entries and identity links are never served',
    async (path) => {
      const { get } = await withProviderEntry();
      const result = await get(path);
      expectError(result, '404', 404);
      expect(result.text).not.toContain('s3cr3t');
    },
  );

  test('a reference to an internal object shows only its metadata; hosts can add their own classes', async () => {
    const { get } = await withProviderEntry({ objects: { internalClasses: ['Secret'] } });
    const data = (await get('/v1/object/REF00001')).body.data;
    expect(data.About).toEqual({ '~ClassName': 'OAuthProvider', '~ObjectID': 'PRV00001', '~StoreTime': expect.any(String) });
    expect(data.Private).toEqual({ '~ClassName': 'Secret', '~ObjectID': 'SEC00001', '~StoreTime': expect.any(String) });
    expectError(await get('/v1/objects/Secret'), '404', 404);
  });
});

test('the serialization hook never sees internal objects, also below the nesting depth', async () => {
  const seen: string[] = [];
  const { service, get } = await session({
    objects: { serializationDepth: 0 },
    macros: {
      xApi_BuildSerialization: (_ctx, { obj, objectJson }: { obj: StoredObject; objectJson: Record<string, unknown> }) => {
        seen.push(obj.className);
        return { ...objectJson, Hooked: true };
      },
    },
  });
  await service.store.put({ id: 'PRV00002', className: 'OAuthProvider', fields: { name: 'Google', additionalData: '{"clientSecret":"s3cr3t"}' } });
  await service.store.put({ id: 'REF00002', className: 'Note', fields: { About: { $ref: 'PRV00002' } } });
  seen.length = 0; // the login serialized the user
  const data = (await get('/v1/object/REF00002')).body.data;
  expect(data.Hooked).toBe(true);
  expect(data.About).toEqual({ '~ClassName': 'OAuthProvider', '~ObjectID': 'PRV00002', '~StoreTime': expect.any(String) });
  expect(seen).toEqual(['Note']);
});
