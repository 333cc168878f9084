/**
 * Issue 50, items 2-4: what a declaration may hold (PROTOCOL.md 6.12), a stored declaration that cannot
 * be compiled, and field names the JavaScript object model owns, through HTTP on the memory store.
 * The same cases run on every store in the store contract (src/testing/model-edges.ts).
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore, type ServiceOptions } from '../../src/index.js';
import { call, demoService, expectError, login } from '../helpers.js';

const open = { read: ['*'], create: ['*'], update: ['*'], delete: ['*'] };
const admins = { users: { admins: 'admins' }, access: { rules: { Poison: open, Other: open, Owned: open, Needs: open } } } satisfies ServiceOptions;

async function adminService(options: ServiceOptions = {}) {
  const errors: unknown[] = [];
  const service = await demoService({ ...admins, onError: (error) => void errors.push(error), ...options });
  const alice = await login(service, 'alice');
  const as = (method: string, path: string, json?: unknown) => call(service, method, path, { headers: { sessionId: alice }, json });
  const raw = (method: string, path: string, body: string) => call(service, method, path, { headers: { sessionId: alice, 'content-type': 'application/json' }, body });
  return { service, as, raw, errors };
}

describe('what a declaration may hold (PROTOCOL.md 6.12)', () => {
  it('refuses 1e400, non-finite bounds, Min above Max, MaxLength 0, enum members of another type, U+0000, 201 fields: 400 naming the member', async () => {
    const { as, raw } = await adminService();
    const refused = async (body: string, message: RegExp) => {
      const answer = await raw('PUT', '/v1/model/classes/Poison', body);
      expectError(answer, '400', 400);
      expect(answer.body.status.statusMessage).toMatch(message);
    };
    await refused('{"Fields":{"N":{"Type":"number","Enum":[1,1e400]}}}', /^Fields\.N\.Enum\.1 must be a string or a finite number$/);
    await refused('{"Fields":{"N":{"Type":"number","Min":-1e400}}}', /^Fields\.N\.Min must be a finite number$/);
    await refused('{"Fields":{"N":{"Type":"number","Max":1e400}}}', /^Fields\.N\.Max must be a finite number$/);
    await refused('{"Fields":{"N":{"Type":"number","Min":5,"Max":1}}}', /field N: min 5 is above max 1/);
    await refused('{"Fields":{"S":{"Type":"string","MaxLength":0}}}', /^Fields\.S\.MaxLength must be a positive whole number$/);
    await refused('{"Fields":{"S":{"Type":"string","MaxLength":1.5}}}', /^Fields\.S\.MaxLength must be a positive whole number$/);
    await refused('{"Fields":{"N":{"Type":"integer","Enum":[1,"two"]}}}', /field N: enum value "two" is not an integer/);
    await refused('{"Fields":{"S":{"Type":"string","Enum":["a",2]}}}', /field S: enum value 2 is not a string/);
    await refused(`{"Fields":{"S":{"Type":"string","Enum":[${Array.from({ length: 1001 }, (_, i) => `"${i}"`).join(',')}]}}}`, /^Fields\.S\.Enum must list at most 1000 values$/);
    await refused('{"Fields":{"a\\u0000b":{"Type":"string"}}}', /^the name of Fields\."a\\u0000b" contains the character U\+0000/);
    await refused('{"Fields":{"S":{"Type":"string","Enum":["x\\u0000"]}}}', /^Fields\.S\.Enum\.0 contains the character U\+0000/);
    await refused('{"Fields":{"S":{"Type":"string"}},"Strict":true,"Indexes":["S\\u0000"]}', /^Indexes\.0 contains the character U\+0000/);
    await refused('{"Fields":{"S":{"Type":"string"}},"Description":"\\u0000"}', /^Description contains the character U\+0000/);
    const many = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`F${i}`, { Type: 'string' }]));
    await refused(JSON.stringify({ Fields: many }), /at most 200 fields/);
    // nothing was declared: the class takes anything
    expect((await as('POST', '/v1/object/Poison', { N: 'not a number' })).body.status.internalStatus).toBe('0');
    expect((await as('PUT', '/v1/model/classes/Fine', { Fields: { N: { Type: 'number', Enum: [1, 2.5, -3] }, S: { Type: 'string', MaxLength: 1, Enum: ['a'] } } })).status).toBe(200);
  });
});

describe('a stored declaration that cannot be compiled (older version, hand edit)', () => {
  it('leaves the other classes working, refuses writes to its class with 500 naming it, is logged and reported by _CheckReady; replacing it mends it', async () => {
    const store = new MemoryObjectStore();
    const first = await adminService({ store });
    expect((await first.as('PUT', '/v1/model/classes/Poison', { Fields: { N: { Type: 'number', Enum: [1, 2] } } })).status).toBe(200);
    expect((await first.as('PUT', '/v1/model/classes/Other', { Fields: { S: { Type: 'string', MaxLength: 3 } } })).status).toBe(200);
    // what an older version stored for Enum [1, 1e400]: Infinity became null
    const stored = (await store.find({ className: 'ModelClass', where: { _className: 'Poison' } })).objects[0]!;
    await store.put({ ...stored, fields: { ...stored.fields, _class: JSON.stringify({ declaration: { fields: { N: { type: 'number', enum: [1, null] } }, indexes: [], strict: false } }) } });
    const { as, errors, service } = await adminService({ store, data: undefined });
    // the other classes, declared or not
    expect((await as('POST', '/v1/object/Other', { S: 'abc' })).body.status.internalStatus).toBe('0');
    expectError(await as('POST', '/v1/object/Other', { S: 'abcd' }), '400', 400);
    expect((await as('POST', '/v1/object/Owned', { Any: 1 })).body.status.internalStatus).toBe('0');
    // its own class: refused, saying why and what to do
    const refused = await as('POST', '/v1/object/Poison', { N: 'not a number' });
    expectError(refused, '500', 500);
    expect(refused.body.status.statusMessage).toMatch(/^writes to Poison are refused: its stored declaration cannot be used \(.*enum value null is not a finite number\); an administrator replaces it/);
    expect(errors.map(String).join('\n')).toMatch(/the stored declaration of class Poison cannot be used/);
    const ready = await call(service, 'GET', '/_CheckReady', { noAppKey: true });
    expect(ready.status).toBe(200);
    expect(ready.body.data.Problems).toEqual([expect.stringMatching(/^class Poison: its stored declaration cannot be used/)]);
    // an administrator replaces it
    expect((await as('PUT', '/v1/model/classes/Poison', { Fields: { N: { Type: 'number', Enum: [1, 2] } } })).status).toBe(200);
    expect((await as('POST', '/v1/object/Poison', { N: 2 })).body.status.internalStatus).toBe('0');
    expectError(await as('POST', '/v1/object/Poison', { N: 3 }), '400', 400);
    expect((await call(service, 'GET', '/_CheckReady', { noAppKey: true })).body.data).toEqual({});
  });
});

/** `__proto__` starts with `_`: a name 6.3 refuses (`400`) in writes and declarations alike. */
const OWNED = ['constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];

describe('field names the JavaScript object model owns', () => {
  it('are stored, read and listed like any other field (an undeclared class)', async () => {
    const { raw, as } = await adminService();
    for (const name of OWNED) {
      const created = await raw('POST', '/v1/object/Owned', `{${JSON.stringify(name)}: {"x": 1}, "Other": 2}`);
      expect(created.body.status.internalStatus, `${name}: ${created.text}`).toBe('0');
      const id = created.body.data['~ObjectID'];
      const read = await as('GET', `/v1/object/${id}`);
      expect(read.text).toContain(`${JSON.stringify(name)}:{"x":1}`);
      expect(Object.hasOwn(read.body.data, 'x'), name).toBe(false);
      const listed = await as('GET', `/v1/object/Owned?query=${encodeURIComponent(JSON.stringify({ Other: 2 }))}`);
      expect(listed.body.data['~Elements'].at(-1)[name]).toEqual({ x: 1 });
    }
    const proto = await raw('POST', '/v1/object/Owned', '{"__proto__": {"x": 1}}');
    expectError(proto, '400', 400);
    expect(proto.body.status.statusMessage).toBe('field __proto__ may not be written (names starting with _ or $ are reserved)');
  });

  it('are declared, checked and required like any other field', async () => {
    const { as, raw } = await adminService();
    const Fields = Object.fromEntries(OWNED.map((name) => [name, { Type: 'integer', Max: 5 }]));
    const put = await raw('PUT', '/v1/model/classes/Owned', JSON.stringify({ Fields, Strict: true }));
    expect(put.status, put.text).toBe(200);
    expect(put.body.data.Members.map((member: { Name: string }) => member.Name)).toEqual(OWNED);
    // a write without them is fine (none is required); each checked when present
    expect((await as('POST', '/v1/object/Owned', {})).body.status.internalStatus).toBe('0');
    for (const name of OWNED) {
      const bad = await raw('POST', '/v1/object/Owned', `{${JSON.stringify(name)}: 9}`);
      expectError(bad, '400', 400);
      expect(bad.body.status.statusMessage).toBe(`field ${name} of Owned must be an integer of at most 5`);
      expect((await raw('POST', '/v1/object/Owned', `{${JSON.stringify(name)}: 4}`)).body.status.internalStatus, name).toBe('0');
    }
    // required: a write without it is refused
    const required = await raw('PUT', '/v1/model/classes/Needs', '{"Fields":{"toString":{"Type":"string","Required":true}}}');
    expect(required.status, required.text).toBe(200);
    expectError(await as('POST', '/v1/object/Needs', { Other: 1 }), '400', 400);
    expect((await raw('POST', '/v1/object/Needs', '{"toString":"here"}')).body.status.internalStatus).toBe('0');
    // __proto__ is no field name (it starts with _): 400 naming it, never 0 for a field then ignored
    const proto = await raw('PUT', '/v1/model/classes/Needs', '{"Fields":{"__proto__":{"Type":"string","Required":true}}}');
    expectError(proto, '400', 400);
    expect(proto.body.status.statusMessage).toMatch(/field __proto__: a field name has 1 to 128 characters and does not start with ~, _ or \$/);
  });
});
