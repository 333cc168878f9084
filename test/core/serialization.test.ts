/**
 * The `serialization` parameter (PROTOCOL.md 6.1) on every route that answers objects: each type and
 * flag, host styles and macros, and each bad value its own `400` (never a `full` answer).
 */
import { describe, expect, test } from 'vitest';
import { ApiError, MemoryObjectStore, type ServiceOptions } from '../../src/index.js';
import { call, demoService, expectError, login } from '../helpers.js';

const META = ['~ClassName', '~ObjectID', '~StoreTime'];
const q = (serialization: unknown) => `serialization=${encodeURIComponent(typeof serialization === 'string' ? serialization : JSON.stringify(serialization))}`;

/** A team of five customers (a set field), which alice may write. */
const TEAM = { Name: 'Key accounts', Lead: { '~ObjectID': 'EMP00001' }, Members: { '~Elements': ['CUS00001', 'CUS00002', 'CUS00003', 'CUS00004', 'CUS00005'].map((id) => ({ '~ObjectID': id })) } };

async function session(options: ServiceOptions = {}, user: 'alice' | 'bob' = 'alice') {
  const service = await demoService({
    ...options,
    access: options.access ?? { rules: { Team: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'] }, Customer: { read: ['*'], update: ['sales'], delete: ['admins'], security: ['admins'] }, Document: { read: ['*'], create: ['*'] } } },
  });
  const headers = { sessionId: await login(service, user) };
  return {
    service,
    get: (path: string) => call(service, 'GET', path, { headers }),
    send: (method: string, path: string, json: unknown) => call(service, method, path, { headers, json }),
  };
}

describe('types', () => {
  test('no serialization, and {"type":"full"}, answer the object in full', async () => {
    const { get } = await session();
    const plain = (await get('/v1/object/CUS00003')).body.data;
    expect(plain.AccountManager.Name1).toBe('Alice');
    expect((await get(`/v1/object/CUS00003?${q({ type: 'full' })}`)).body.data).toEqual(plain);
  });

  test('empty: the three metadata members only', async () => {
    const { get } = await session();
    const result = await get(`/v1/object/CUS00003?${q({ type: 'empty' })}`);
    expect(result.body.status.internalStatus).toBe('0');
    expect(Object.keys(result.body.data)).toEqual(META);
    expect(result.body.data['~ObjectID']).toBe('CUS00003');
  });

  test('oid: ~ObjectID only, in a listing too (counts as before)', async () => {
    const { get } = await session();
    const data = (await get(`/v1/objects/Customer?perPage=3&${q({ type: 'oid' })}`)).body.data;
    expect(data).toEqual({ '~Count': 3, '~UnfilteredCount': 300, '~Elements': [{ '~ObjectID': 'CUS00001' }, { '~ObjectID': 'CUS00002' }, { '~ObjectID': 'CUS00003' }] });
  });

  test('custom: the metadata and the listed fields, in the list\'s order; absent and _ fields are not invented', async () => {
    const { get } = await session();
    const data = (await get(`/v1/object/CUS00003?${q({ type: 'custom', custom: { type: 'empty', fieldList: ['City', 'Name', 'Nickname'] } })}`)).body.data;
    expect(Object.keys(data)).toEqual([...META, 'City', 'Name']);
    expect(data).toMatchObject({ City: 'Cologne', Name: 'David Bauer' });
  });

  test('custom: a listed reference is nested in full as before', async () => {
    const { get } = await session();
    const data = (await get(`/v1/object/CUS00003?${q({ type: 'custom', custom: { fieldList: ['AccountManager'] } })}`)).body.data;
    expect(Object.keys(data)).toEqual([...META, 'AccountManager']);
    expect(data.AccountManager).toMatchObject({ '~ObjectID': 'EMP00001', Name1: 'Alice' });
  });

  test('custom: fieldCustom pages a set field; ~Count is the page, ~UnfilteredCount the whole set', async () => {
    const { get, send } = await session();
    const team = (await send('POST', '/v1/object/Team', TEAM)).body.data;
    const custom = { type: 'custom', custom: { type: 'empty', fieldList: ['Members'], fieldCustom: { Members: { page: 1, perPage: 2 } } } };
    const data = (await get(`/v1/object/${team['~ObjectID']}?${q(custom)}`)).body.data;
    expect(Object.keys(data)).toEqual([...META, 'Members']);
    expect(data.Members['~Count']).toBe(2);
    expect(data.Members['~UnfilteredCount']).toBe(5);
    expect(data.Members['~Elements'].map((e: any) => e['~ObjectID'])).toEqual(['CUS00003', 'CUS00004']);
    expect(data.Members['~Elements'][0].Name).toBe('David Bauer');
    // the last, short page, and a page past the end
    const last = (await get(`/v1/object/${team['~ObjectID']}?${q({ ...custom, custom: { ...custom.custom, fieldCustom: { Members: { page: 2, perPage: 2 } } } })}`)).body.data;
    expect(last.Members).toMatchObject({ '~Count': 1, '~UnfilteredCount': 5 });
    const past = (await get(`/v1/object/${team['~ObjectID']}?${q({ ...custom, custom: { ...custom.custom, fieldCustom: { Members: { page: 9, perPage: 2 } } } })}`)).body.data;
    expect(past.Members).toEqual({ '~Count': 0, '~UnfilteredCount': 5, '~Elements': [] });
  });

  test('class: the host\'s preview list for a class, full for a class without one', async () => {
    const styles = { Customer: { preview: ['Name', 'City'], detailview: ['Name', 'City', 'Revenue', 'AccountManager'] } };
    const { get } = await session({ objects: { serialization: { styles } } });
    const preview = (await get(`/v1/objects/Customer?perPage=1&${q({ type: 'class', style: 'preview' })}`)).body.data['~Elements'][0];
    expect(Object.keys(preview)).toEqual([...META, 'Name', 'City']);
    const detail = (await get(`/v1/object/CUS00003?${q({ type: 'class', style: 'detailview' })}`)).body.data;
    expect(Object.keys(detail)).toEqual([...META, 'Name', 'City', 'Revenue', 'AccountManager']);
    const employee = (await get(`/v1/object/EMP00001?${q({ type: 'class', style: 'preview' })}`)).body.data;
    expect(employee).toMatchObject({ Name1: 'Alice', Name2: 'Schmidt', Name3: 'Head of sales' });
  });

  test('class: a per-class override wins over the style', async () => {
    const { get } = await session({ objects: { serialization: { styles: { Customer: { preview: ['Name'] } } } } });
    const data = (await get(`/v1/object/CUS00003?${q({ type: 'class', style: 'preview', Customer: { type: 'oid' } })}`)).body.data;
    expect(data).toEqual({ '~ObjectID': 'CUS00003' });
    const other = (await get(`/v1/object/EMP00001?${q({ type: 'class', style: 'preview', Customer: { type: 'oid' }, Employee: { type: 'empty' } })}`)).body.data;
    expect(Object.keys(other)).toEqual(META);
  });

  test('macro: the registered serialization macro builds each object, with the request\'s context', async () => {
    const seen: string[] = [];
    const { get } = await session({
      objects: {
        serialization: {
          macros: {
            card: async (context, { obj, objectJson }) => {
              seen.push(`${context.session?.principalId}:${obj.id}`);
              return { id: obj.id, title: `${obj.fields.Name} (${obj.fields.City})`, manager: (objectJson.AccountManager as any)?.Name1 };
            },
          },
        },
      },
    });
    const data = (await get(`/v1/objects/Customer?perPage=2&${q({ type: 'macro', macro: 'card' })}`)).body.data;
    expect(data['~Elements']).toEqual([
      { id: 'CUS00001', title: 'Ben Bauer (Hamburg)', manager: 'Alice' },
      { id: 'CUS00002', title: expect.stringMatching(/\(/), manager: expect.any(String) },
    ]);
    expect(seen).toEqual(['USR00001:CUS00001', 'USR00001:CUS00002']);
  });

  test('macro: an unknown name is 404, also before a write (nothing is written)', async () => {
    const { get, send } = await session();
    const result = await get(`/v1/object/CUS00003?${q({ type: 'macro', macro: 'nope' })}`);
    expectError(result, '404', 404);
    expect(result.body.status.statusMessage).toBe('no serialization macro nope');
    expectError(await send('PATCH', `/v1/object/CUS00003?${q({ type: 'macro', macro: 'nope' })}`, { City: 'Ulm' }), '404', 404);
    expect((await get('/v1/object/CUS00003')).body.data.City).toBe('Cologne');
  });

  test('a registered ordinary macro is no serialization macro', async () => {
    const { get } = await session({ macros: { card: () => ({}) } });
    expectError(await get(`/v1/object/CUS00003?${q({ type: 'macro', macro: 'card' })}`), '404', 404);
  });

  test('macro: stored objects in its answer are served as GET serves them (no _ fields)', async () => {
    const { get } = await session({ access: { rules: { User: { read: ['*'] } } }, objects: { serialization: { macros: { owner: async (context) => ({ user: await context.store.get('USR00001') }) } } } });
    const result = await get(`/v1/object/CUS00003?${q({ type: 'macro', macro: 'owner' })}`);
    expect(result.body.data.user).toMatchObject({ '~ObjectID': 'USR00001', Name: 'alice' });
    expect(result.text).not.toMatch(/_password|_licences/);
  });
});

describe('flags', () => {
  test('getSize: the file class\'s Size, 0 for other objects, on any type', async () => {
    const { get } = await session();
    expect((await get(`/v1/object/DOC00001?${q({ type: 'oid', getSize: true })}`)).body.data).toEqual({ '~ObjectID': 'DOC00001', '~Size': 92 });
    const full = (await get(`/v1/object/DOC00003?${q({ type: 'full', getSize: true })}`)).body.data;
    expect(full).toMatchObject({ Name: 'logo.svg', Size: 114, '~Size': 114 });
    expect((await get(`/v1/object/CUS00001?${q({ type: 'empty', getSize: true })}`)).body.data['~Size']).toBe(0);
    // the configured file class
    const files = await session({ files: { className: 'Customer' } });
    expect((await files.get(`/v1/object/DOC00001?${q({ type: 'oid', getSize: true })}`)).body.data['~Size']).toBe(0);
  });

  test('securityRights: read, write, create, delete, security bits as the guard answers them', async () => {
    // alice (admins, sales): customers read, update, delete and security, no create
    const alice = await session();
    const cus = (await alice.get(`/v1/object/CUS00001?${q({ type: 'oid', securityRights: true })}`)).body.data;
    expect(cus).toEqual({ '~ObjectID': 'CUS00001', '~SecurityRights': 1 | 2 | 8 | 16 });
    expect((await alice.get(`/v1/object/DOC00001?${q({ type: 'oid', securityRights: true })}`)).body.data['~SecurityRights']).toBe(1 | 4);
    const team = (await alice.send('POST', `/v1/object/Team?${q({ type: 'oid', securityRights: true })}`, TEAM)).body.data;
    expect(team['~SecurityRights']).toBe(1 | 2 | 4 | 8);
    // bob (support): reads customers only
    const bob = await session({}, 'bob');
    const listed = (await bob.get(`/v1/objects/Customer?perPage=2&${q({ type: 'empty', securityRights: true })}`)).body.data['~Elements'];
    expect(listed.map((e: any) => e['~SecurityRights'])).toEqual([1, 1]);
  });

  test('securityRights asks the host\'s authorize per object', async () => {
    const { get } = await session({
      access: {
        rules: { Customer: { read: ['*'], update: ['*'] } },
        authorize: (_context, { action, object }) => !(action === 'update' && object?.id === 'CUS00002'),
      },
    });
    const listed = (await get(`/v1/objects/Customer?perPage=2&${q({ type: 'oid', securityRights: true })}`)).body.data['~Elements'];
    expect(listed).toEqual([
      { '~ObjectID': 'CUS00001', '~SecurityRights': 3 },
      { '~ObjectID': 'CUS00002', '~SecurityRights': 1 },
    ]);
  });

  test('both flags together on a custom serialization', async () => {
    const { get } = await session();
    const data = (await get(`/v1/object/DOC00002?${q({ type: 'custom', custom: { fieldList: ['Name'] }, getSize: true, securityRights: true })}`)).body.data;
    expect(data).toMatchObject({ Name: 'Preisliste 2026 – Übersicht.csv', '~Size': 44, '~SecurityRights': 1 | 4 });
    expect(Object.keys(data).sort()).toEqual([...META, 'Name', '~SecurityRights', '~Size'].sort());
  });
});

describe('access rules hold whatever the type', () => {
  test('an unreadable referenced object stays metadata only in a custom and a class serialization', async () => {
    // the default rules: ContactPerson objects are read only by themselves
    const styles = { Employee: { preview: ['Name1', 'Mitarbeiteransprechpartner'] } };
    const { get } = await session({ objects: { serialization: { styles } } });
    const custom = (await get(`/v1/object/EMP00001?${q({ type: 'custom', custom: { fieldList: ['Mitarbeiteransprechpartner'] } })}`)).body.data;
    expect(Object.keys(custom.Mitarbeiteransprechpartner)).toEqual(META);
    const preview = (await get(`/v1/object/EMP00001?${q({ type: 'class', style: 'preview' })}`)).body.data;
    expect(Object.keys(preview.Mitarbeiteransprechpartner)).toEqual(META);
  });

  test('a custom list cannot reach internal fields', async () => {
    const { get } = await session({ access: { rules: { User: { read: ['*'] } } } });
    const result = await get(`/v1/object/USR00001?${q({ type: 'custom', custom: { fieldList: ['Name', 'Groups'] } })}`);
    expect(Object.keys(result.body.data)).toEqual([...META, 'Name', 'Groups']);
    expect(result.text).not.toMatch(/_password|_licences/);
  });
});

describe('write answers', () => {
  test('POST and PATCH answer as serialization asks', async () => {
    const { send } = await session();
    const created = await send('POST', `/v1/object/Team?${q({ type: 'oid' })}`, TEAM);
    expect(created.body.data).toEqual({ '~ObjectID': expect.stringMatching(/^[0-9A-Z]{8}$/) });
    const updated = await send('PATCH', `/v1/object/CUS00003?${q({ type: 'custom', custom: { fieldList: ['City'] } })}`, { City: 'Ulm' });
    expect(Object.keys(updated.body.data)).toEqual([...META, 'City']);
    expect(updated.body.data.City).toBe('Ulm');
  });

  test('a bad serialization on a write is 400 and nothing is written', async () => {
    const { get, send } = await session();
    expectError(await send('PATCH', `/v1/object/CUS00003?${q({ type: 'oids' })}`, { City: 'Ulm' }), '400', 400);
    expect((await get('/v1/object/CUS00003')).body.data.City).toBe('Cologne');
    await send('POST', '/v1/object/Team', TEAM);
    expectError(await send('POST', `/v1/object/Team?${q('{')}`, TEAM), '400', 400);
    expect((await get('/v1/objects/Team')).body.data['~UnfilteredCount']).toBe(1);
  });

  test('an upload\'s PATCH answers as serialization asks, and a bad one uploads nothing', async () => {
    const { service, get } = await session();
    const headers = { sessionId: await login(service) };
    const upload = async () => {
      const uploadId = (await call(service, 'GET', '/v1/uploadFile', { headers })).body.data.uploadId;
      await call(service, 'POST', `/v1/uploadFile/${uploadId}`, { headers: { ...headers, 'content-type': 'text/plain' }, body: 'hello' });
      return uploadId;
    };
    const bad = await call(service, 'PATCH', `/v1/uploadFile/${await upload()}?${q({ type: 'custom', custom: { fieldList: ['_file'] } })}`, { headers });
    expectError(bad, '400', 400);
    expect((await get('/v1/objects/Document')).body.data['~UnfilteredCount']).toBe(3);
    const done = await call(service, 'PATCH', `/v1/uploadFile/${await upload()}?${q({ type: 'oid', getSize: true })}`, { headers });
    expect(done.body.data).toEqual({ '~ObjectID': expect.any(String), '~Size': 5 });
  });
});

describe('bad values are 400 naming them', () => {
  const cases: Array<[string, string, string]> = [
    ['malformed JSON', '{"type":', 'serialization must be a JSON object, e.g. {"type":"oid"}; this is not JSON'],
    ['not an object', '["oid"]', 'serialization must be a JSON object, e.g. {"type":"oid"}'],
    ['a string', '"oid"', 'serialization must be a JSON object, e.g. {"type":"oid"}'],
    ['no type', '{}', 'serialization.type is required (one of full, empty, oid, custom, class, macro)'],
    ['an unknown type', '{"type":"preview"}', 'serialization.type must be one of full, empty, oid, custom, class, macro'],
    ['a type of the wrong type', '{"type":1}', 'serialization.type must be one of full, empty, oid, custom, class, macro'],
    ['an unknown member', '{"type":"oid","fields":["Name"]}', 'serialization.fields is not a member of an oid serialization (it takes type, getSize, securityRights)'],
    ['a member of another type', '{"type":"full","macro":"x"}', 'serialization.macro is not a member of a full serialization (it takes type, getSize, securityRights)'],
    ['a flag that is no boolean', '{"type":"oid","getSize":"yes"}', 'serialization.getSize must be true or false'],
    ['securityRights no boolean', '{"type":"empty","securityRights":1}', 'serialization.securityRights must be true or false'],
    ['custom without custom', '{"type":"custom"}', 'serialization.custom is required'],
    ['custom that is no object', '{"type":"custom","custom":["Name"]}', 'serialization.custom must be a JSON object'],
    ['custom.type not empty', '{"type":"custom","custom":{"type":"full"}}', 'serialization.custom.type must be "empty" (the listed fields are added to the metadata)'],
    ['an unknown custom member', '{"type":"custom","custom":{"fields":[]}}', 'serialization.custom.fields is not a member of custom (it takes type, fieldList, fieldCustom)'],
    ['a fieldList that is no list', '{"type":"custom","custom":{"fieldList":"Name"}}', 'serialization.custom.fieldList must be a list of field names'],
    ['a fieldList entry of the wrong type', '{"type":"custom","custom":{"fieldList":["Name",3]}}', 'serialization.custom.fieldList[1] must be a field name (a string)'],
    ['an internal field in the list', '{"type":"custom","custom":{"fieldList":["Name","_password"]}}', 'serialization.custom.fieldList[1] names an internal field (starting with _), which is never served'],
    ['an empty field name', '{"type":"custom","custom":{"fieldList":[""]}}', 'serialization.custom.fieldList[0] must be a field name, not empty'],
    ['an internal field in fieldCustom', '{"type":"custom","custom":{"fieldCustom":{"_x":{"page":0,"perPage":1}}}}', 'serialization.custom.fieldCustom._x names an internal field (starting with _), which is never served'],
    ['a bad page', '{"type":"custom","custom":{"fieldCustom":{"Members":{"page":-1,"perPage":1}}}}', 'serialization.custom.fieldCustom.Members.page must be a whole number from 0 to 1000000000'],
    ['a bad perPage', '{"type":"custom","custom":{"fieldCustom":{"Members":{"perPage":0}}}}', 'serialization.custom.fieldCustom.Members.perPage must be a whole number from 1 to 1000'],
    ['an unknown fieldCustom member', '{"type":"custom","custom":{"fieldCustom":{"Members":{"size":3}}}}', 'serialization.custom.fieldCustom.Members.size is not a member of a fieldCustom entry (it takes page, perPage)'],
    ['an unknown style', '{"type":"class","style":"list"}', 'serialization.style must be "preview" or "detailview"'],
    ['an override that is no serialization', '{"type":"class","Customer":"oid"}', 'serialization.Customer must be a JSON object'],
    ['an override that is a list', '{"type":"class","Customer":[{"type":"oid"}]}', 'serialization.Customer must be a JSON object'],
    ['a fieldCustom entry that is a list', '{"type":"custom","custom":{"fieldCustom":{"Members":[0,2]}}}', 'serialization.custom.fieldCustom.Members must be a JSON object'],
    ['an override of an unknown type', '{"type":"class","Customer":{"type":"tiny"}}', 'serialization.Customer.type must be one of full, empty, oid, custom, macro'],
    ['a class override of type class', '{"type":"class","Customer":{"type":"class"}}', 'serialization.Customer.type must be one of full, empty, oid, custom, macro'],
    ['a class member that is no class name', '{"type":"class","my class":{"type":"oid"}}', 'serialization.my class is neither a member of a class serialization (type, style, getSize, securityRights) nor a class name'],
    ['a macro without a name', '{"type":"macro"}', 'serialization.macro is required'],
    ['a macro name of the wrong type', '{"type":"macro","macro":["a"]}', 'serialization.macro must be a macro name'],
  ];
  for (const [name, value, message] of cases) {
    test(name, async () => {
      const { get } = await session();
      for (const path of ['/v1/object/CUS00003', '/v1/objects/Customer']) {
        const result = await get(`${path}?${q(value)}`);
        expectError(result, '400', 400);
        expect(result.body.status.statusMessage).toBe(message);
      }
    });
  }
});

test('a host macro throwing ApiError answers with its code', async () => {
  const { get } = await session({
    objects: {
      serialization: {
        macros: {
          strict: () => {
            throw new ApiError('403', 'not for you');
          },
        },
      },
    },
  });
  expectError(await get(`/v1/object/CUS00003?${q({ type: 'macro', macro: 'strict' })}`), '403', 403);
});

test('bad styles and macros options are refused at start-up', async () => {
  const { createService } = await import('../../src/index.js');
  expect(() => createService({ objects: { serialization: { styles: { Customer: { list: ['Name'] } as never } } } })).toThrow('objects.serialization.styles.Customer: list is not a style (preview, detailview)');
  expect(() => createService({ objects: { serialization: { styles: { Customer: { preview: ['_password'] } } } } })).toThrow(/must be a list of field names/);
  expect(() => createService({ objects: { serialization: { macros: { card: 'x' as never } } } })).toThrow('objects.serialization.macros: macro card must be a function');
});

describe('listings', () => {
  test('each element of a listing is the object as GET /v1/object/{id} serves it; a stored field named like a metadata member never replaces it', async () => {
    const store = new MemoryObjectStore();
    const { get } = await session({ store });
    // written straight to the store (the write routes drop ~ members): the serializer owns the metadata
    const spoof = await store.get('CUS00002');
    await store.put({ ...spoof!, fields: { ...spoof!.fields, '~ObjectID': 'CUS99999', '~ClassName': 'User', Nickname: 'Beni' } });
    const set = (await get('/v1/objects/Customer?perPage=4&orderBy=-Number')).body.data;
    expect(set['~Elements'].map((element: Record<string, unknown>) => element['~ObjectID'])).toEqual(['CUS00300', 'CUS00299', 'CUS00298', 'CUS00297']);
    for (const element of set['~Elements']) expect(element).toEqual((await get(`/v1/object/${element['~ObjectID']}`)).body.data);
    const spoofed = (await get('/v1/objects/Customer?perPage=2')).body.data['~Elements'][1];
    expect(spoofed).toMatchObject({ '~ClassName': 'Customer', '~ObjectID': 'CUS00002', Nickname: 'Beni' });
    expect(Object.keys(spoofed).slice(0, 3)).toEqual(META);
    expect(spoofed.AccountManager).toMatchObject({ '~ObjectID': expect.stringMatching(/^EMP/), Name1: expect.any(String) });
    expect((await get('/v1/object/CUS00002')).body.data).toEqual(spoofed);
  });
});
