/**
 * The query object's `macro`/`macroLevel` and `folderPath`/`folderType` (PROTOCOL.md 6.2), through the
 * one selection path: combined with field conditions and the other members, counted and paged after
 * the macro's filtering, every bad input a 400 naming the member.
 */
import { describe, expect, test } from 'vitest';
import { ApiError, type FoldersHook, type MacroContext, type SelectionMacro, type ServiceOptions, type StoredObject } from '../../src/index.js';
import { call, demoService, expectError, login } from '../helpers.js';

type Listed = { '~ObjectID': string; City: string; Number: number };

async function lister(options: ServiceOptions = {}) {
  const service = await demoService(options);
  const sessionId = await login(service);
  const list = (query: unknown, extra = '') =>
    call(service, 'GET', `/v1/objects/Customer?query=${encodeURIComponent(JSON.stringify(query))}${extra}`, { headers: { sessionId } });
  return Object.assign(list, { service, sessionId });
}

const ids = (answer: { body: { data: { '~Elements': Listed[] } } }) => answer.body.data['~Elements'].map((o) => o['~ObjectID']);
const numbered = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `CUS${String(from + i).padStart(5, '0')}`);

describe('query member macro', () => {
  const seen: { macroLevel?: number; count: number; user?: unknown }[] = [];
  // keeps the customers with an even Number
  const evenNumbers: SelectionMacro = async (context: MacroContext, { objects, macroLevel }) => {
    seen.push({ macroLevel, count: objects.length, user: (await context.user())?.fields.Name });
    return objects.filter((object) => (object.fields.Number as number) % 2 === 0);
  };
  const macros = {
    evenNumbers,
    asIds: ((_, { objects }) => objects.slice(0, 3).map((object) => object.id)) satisfies SelectionMacro,
    wider: (() => ['CUS00001', 'EMP00001', 'CUS00002']) satisfies SelectionMacro,
    broken: () => {
      throw new Error('secret detail');
    },
    refusing: () => {
      throw new ApiError('409', 'the macro refuses');
    },
    notAList: () => 'yes',
  };

  test('filters the selection before paging: ~UnfilteredCount and pages count the kept objects; macroLevel and the session are passed on', async () => {
    const list = await lister({ macros });
    seen.length = 0;
    const answer = await list({ City: 'Berlin', macro: 'evenNumbers', macroLevel: 2 }, '&perPage=10&page=1&orderBy=Number');
    expect(answer.status).toBe(200);
    const all = await list({ City: 'Berlin' }, '&perPage=1000&orderBy=Number');
    const even = (all.body.data['~Elements'] as Listed[]).filter((o) => o.Number % 2 === 0).map((o) => o['~ObjectID']);
    expect(even.length).toBeGreaterThan(10);
    expect(answer.body.data['~UnfilteredCount']).toBe(even.length);
    expect(answer.body.data['~Count']).toBe(10);
    expect(ids(answer)).toEqual(even.slice(10, 20));
    expect(seen).toEqual([{ macroLevel: 2, count: 50, user: expect.any(String) }]);
  });

  test('combines with queryString, oids and sortIndex', async () => {
    const list = await lister({ macros });
    const answer = await list({ queryString: 'Number < 11', oids: numbered(1, 8), sortIndex: '!Number', macro: 'evenNumbers' });
    expect(ids(answer)).toEqual(['CUS00008', 'CUS00006', 'CUS00004', 'CUS00002']);
    expect(answer.body.data['~UnfilteredCount']).toBe(4);
  });

  test('may return ids; what it returns beyond the selection is never answered', async () => {
    const list = await lister({ macros });
    expect(ids(await list({ macro: 'asIds' }, '&orderBy=Number'))).toEqual(numbered(1, 3));
    const wider = await list({ City: 'Hamburg', macro: 'wider' });
    expect(ids(wider)).toEqual(['CUS00001']);
  });

  test.each([
    [{ macro: 'nothing' }, 'query member macro: no macro nothing'],
    [{ macro: 'xApi_FindObjects' }, 'query member macro: no macro xApi_FindObjects'],
    [{ macro: 3 }, 'query member macro must be the name of a registered macro'],
    [{ macro: 'evenNumbers', macroLevel: 3 }, 'query member macroLevel must be an integer from -1 to 2'],
    [{ macro: 'evenNumbers', macroLevel: '1' }, 'query member macroLevel must be an integer from -1 to 2'],
    [{ macro: 'evenNumbers', macroLevel: 0.5 }, 'query member macroLevel must be an integer from -1 to 2'],
    [{ macro: 'broken' }, 'query member macro: macro broken failed'],
    [{ macro: 'notAList' }, 'query member macro: macro notAList must return the objects (or object ids) to keep'],
  ])('%j: 400 naming the member', async (query, message) => {
    const list = await lister({ macros });
    const answer = await list(query);
    expectError(answer, '400', 400);
    expect(answer.body.status.statusMessage).toBe(message);
  });

  test("a macro's own ApiError is answered as /v1/execute answers it", async () => {
    const list = await lister({ macros });
    const listed = await list({ macro: 'refusing' });
    const executed = await call(list.service, 'POST', '/v1/execute/refusing', { headers: { sessionId: list.sessionId } });
    expectError(listed, '409', 409);
    expect([listed.status, listed.body]).toEqual([executed.status, executed.body]);
  });

  test(`a selection of more than 10,000 objects is 400 before the macro runs`, async () => {
    const objects = Array.from({ length: 10_001 }, (_, i) => ({ '~ClassName': 'Row', N: i }));
    let ran = false;
    const service = await demoService({ data: { objects: [...(await import('../helpers.js')).demoData().objects, ...objects] }, macros: { all: (_: MacroContext, { objects: rows }: { objects: StoredObject[] }) => ((ran = true), rows) } });
    const sessionId = await login(service);
    const get = (query: unknown) => call(service, 'GET', `/v1/objects/Row?perPage=1&query=${encodeURIComponent(JSON.stringify(query))}`, { headers: { sessionId } });
    const refused = await get({ macro: 'all' });
    expectError(refused, '400', 400);
    expect(refused.body.status.statusMessage).toBe('query member macro: the selection holds 10001 objects, a macro filters at most 10000 (narrow it with other members)');
    expect(ran).toBe(false);
    const narrowed = await get({ N: { $lt: 10_000 }, macro: 'all' });
    expect([narrowed.status, narrowed.body.data['~UnfilteredCount'], ran]).toEqual([200, 10_000, true]);
  });

  test('bulk PATCH selects through the macro too', async () => {
    const service = await demoService({ macros, access: { rules: { Customer: { read: ['*'], update: ['*'] } } } });
    const sessionId = await login(service);
    const query = encodeURIComponent(JSON.stringify({ oids: numbered(1, 4), macro: 'evenNumbers' }));
    const patched = await call(service, 'PATCH', `/v1/objects/Customer?query=${query}`, { headers: { sessionId }, json: { Note: 'even' } });
    expect(patched.status).toBe(200);
    expect(ids(patched)).toEqual(['CUS00002', 'CUS00004']);
  });
});

describe('query members folderPath and folderType', () => {
  const folders: Record<string, string[]> = { '/Key accounts': ['CUS00001', 'CUS00002', 'CUS00007', 'EMP00001'], '/Empty': [] };
  const calls: unknown[] = [];
  const hook: FoldersHook = (_context, folder) => {
    calls.push(folder);
    const found = folder.folderPath === undefined ? folders['/Key accounts'] : folders[folder.folderPath];
    if (!found) throw new ApiError('404', `no folder ${folder.folderPath}`);
    return found;
  };

  test("only the folder's objects, combined with field conditions and the other members", async () => {
    const list = await lister({ folders: hook });
    calls.length = 0;
    expect(ids(await list({ folderPath: '/Key accounts' }, '&orderBy=Number'))).toEqual(['CUS00001', 'CUS00002', 'CUS00007']);
    expect(ids(await list({ folderPath: '/Key accounts', City: 'Hamburg' }))).toEqual(['CUS00001', 'CUS00007']);
    const typed = await list({ folderType: 'accounts', folderPath: '/Key accounts', sortIndex: '!Number', oids: ['CUS00001', 'CUS00002'] });
    expect([ids(typed), typed.body.data['~UnfilteredCount']]).toEqual([['CUS00002', 'CUS00001'], 2]);
    expect((await list({ folderPath: '/Empty' })).body.data).toEqual({ '~Count': 0, '~UnfilteredCount': 0, '~Elements': [] });
    expect(calls).toContainEqual({ folderType: 'accounts', folderPath: '/Key accounts' });
  });

  test("the hook's own error (an unknown folder) is answered", async () => {
    const list = await lister({ folders: hook });
    expectError(await list({ folderPath: '/Nowhere' }), '404', 404);
  });

  test.each([
    [{ folderPath: '/Key accounts' }, undefined, 'query member folderPath: this service has no folders hook'],
    [{ folderType: 'accounts' }, undefined, 'query member folderType: this service has no folders hook'],
    [{ folderPath: '' }, hook, 'query member folderPath must be a string of 1 to 1024 characters'],
    [{ folderType: 7 }, hook, 'query member folderType must be a string of 1 to 128 characters'],
  ])('%j: 400 naming the member', async (query, folders, message) => {
    const list = await lister(folders ? { folders } : {});
    const answer = await list(query);
    expectError(answer, '400', 400);
    expect(answer.body.status.statusMessage).toBe(message);
  });
});

test('event subscriptions refuse macro and folder members (an event is tested alone)', async () => {
  const service = await demoService();
  const sessionId = await login(service);
  for (const query of [{ macro: 'x' }, { folderPath: '/a' }]) {
    const subscribe = encodeURIComponent(JSON.stringify([{ className: 'Customer', query }]));
    const answer = await call(service, 'GET', `/v1/events?subscribe=${subscribe}`, { headers: { sessionId } });
    expectError(answer, '400', 400);
    expect(answer.body.status.statusMessage).toMatch(/cannot be subscribed to/);
  }
});
