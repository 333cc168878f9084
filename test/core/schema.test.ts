/** Declared classes (PROTOCOL.md 6.8): writes checked on every path, contradictions refused at start-up. */
import { describe, expect, it } from 'vitest';
import { demoAccess } from '../../examples/demo-access.mjs';
import { demoSchema } from '../../examples/demo-schema.mjs';
import { ClassSchemas, createService, MemoryObjectStore, type SchemaDeclarations, type ServiceOptions } from '../../src/index.js';
import { call, demoData, demoService, expectError, login } from '../helpers.js';

async function session(options: ServiceOptions = {}) {
  const service = await demoService({ access: demoAccess, schema: demoSchema, ...options });
  return { service, headers: { sessionId: await login(service, 'alice') } };
}

describe('declared classes', () => {
  it('keeps the demo data valid: every seeded object of a declared class fits its declaration', async () => {
    const schemas = new ClassSchemas(demoSchema, 'Document', new MemoryObjectStore());
    const objects = demoData().objects;
    expect(schemas.classNames.length).toBeGreaterThan(4);
    expect(schemas.isDeclared('Bild')).toBe(false); // the demo's one schemaless class
    let checked = 0;
    for (const object of objects) {
      const fields: Record<string, any> = {};
      for (const [name, value] of Object.entries(object)) if (!name.startsWith('~') && !name.startsWith('_')) fields[name] = value;
      if (!schemas.isDeclared(object['~ClassName'])) continue;
      await expect(schemas.check(object['~ClassName'], fields), `${object['~ObjectID']}`).resolves.toBeUndefined();
      checked++;
    }
    expect(checked).toBeGreaterThan(300);
  });

  it('refuses a create whose field has the wrong type, naming the field and the expectation', async () => {
    const { service, headers } = await session();
    const wrong = await call(service, 'POST', '/v1/object/Customer', { headers, json: { Name: 'Nora', Number: 'one' } });
    expectError(wrong, '400', 400);
    expect(wrong.body.status.statusMessage).toBe('field Number of Customer must be an integer of at least 1');
    const missing = await call(service, 'POST', '/v1/object/Customer', { headers, json: { City: 'Kiel' } });
    expectError(missing, '400', 400);
    expect(missing.body.status.statusMessage).toMatch(/^field Name of Customer is required: a string of at most 120 characters/);
    const long = await call(service, 'POST', '/v1/object/Customer', { headers, json: { Name: 'x'.repeat(121) } });
    expect(long.body.status.statusMessage).toBe('field Name of Customer must be a string of at most 120 characters');
    const ok = await call(service, 'POST', '/v1/object/Customer', { headers, json: { Name: 'Nora', Number: 7, Note: 'not declared, not strict' } });
    expect(ok.body.status.internalStatus).toBe('0');
    expect(ok.body.data).toMatchObject({ Name: 'Nora', Number: 7, Note: 'not declared, not strict' });
  });

  it('checks an update on the merged fields, and a reference to an object of the wrong class', async () => {
    const { service, headers } = await session();
    const range = await call(service, 'PATCH', '/v1/object/CUS00001', { headers, json: { Revenue: -5 } });
    expect(range.body.status.statusMessage).toBe('field Revenue of Customer must be a number of at least 0');
    const removed = await call(service, 'PATCH', '/v1/object/CUS00001', { headers, json: { Name: null } });
    expect(removed.body.status.statusMessage).toMatch(/^field Name of Customer is required/);
    const wrongClass = await call(service, 'PATCH', '/v1/object/CUS00001', { headers, json: { AccountManager: { '~ObjectID': 'CUS00002' } } });
    expectError(wrongClass, '400', 400);
    expect(wrongClass.body.status.statusMessage).toMatch(/^field AccountManager of Customer must be a reference .* to a Employee; CUS00002 is not a Employee$/);
    const scalarRef = await call(service, 'PATCH', '/v1/object/CUS00001', { headers, json: { AccountManager: 'EMP00001' } });
    expect(scalarRef.body.status.statusMessage).toMatch(/^field AccountManager of Customer must be a reference/);
    const fine = await call(service, 'PATCH', '/v1/object/CUS00001', { headers, json: { Revenue: null, City: 'Kiel' } });
    expect(fine.body.status.internalStatus).toBe('0');
  });

  it('a strict class refuses undeclared fields; an undeclared class takes anything', async () => {
    const { service, headers } = await session({ access: { rules: { '*': { read: ['*'], create: ['*'], update: ['*'] } } } });
    const strict = await call(service, 'POST', '/v1/object/UserGroup', { headers, json: { Name: 'ops', Colour: 'red' } });
    expectError(strict, '400', 400);
    expect(strict.body.status.statusMessage).toBe('field Colour is not declared for UserGroup (its declaration is strict)');
    const free = await call(service, 'POST', '/v1/object/Bild', { headers, json: { Anything: [1, { a: 2 }] } });
    expect(free.body.status.internalStatus).toBe('0');
  });

  it('checks writes made through a /v1/multi item and by a macro through its context store', async () => {
    const { service, headers } = await session({
      macros: { addCustomer: async (context, params) => (await context.store.put({ className: 'Customer', fields: { Name: params.name as any, Number: 0 } })).id },
    });
    const batch = await call(service, 'POST', '/v1/multi', { headers, json: [{ method: 'POST', path: '/v1/object/Customer', data: { Name: 5 } }] });
    expect(batch.body.data[0].httpStatus).toBe(400);
    expect(batch.body.data[0].result.status.statusMessage).toBe('field Name of Customer must be a string of at most 120 characters');
    const macro = await call(service, 'POST', '/v1/execute/addCustomer', { headers, json: { name: 'Via macro' } });
    expectError(macro, '400', 400);
    expect(macro.body.status.statusMessage).toBe('field Number of Customer must be an integer of at least 1');
  });

  it('refuses declarations that contradict themselves at createService, naming class and field', () => {
    const cases: Array<[SchemaDeclarations, RegExp]> = [
      [{ A: { fields: { X: 'text' as any } } }, /schema: class A, field X: unknown type "text"/],
      [{ A: { fields: { X: { type: 'ref' } } } }, /schema: class A, field X: a ref field names the class it references/],
      [{ A: { fields: { X: { type: 'number', min: 5, max: 1 } } } }, /schema: class A, field X: min 5 is above max 1/],
      [{ A: { fields: { X: { type: 'integer', enum: ['a'] } } } }, /schema: class A, field X: enum value "a" is not an integer/],
      [{ A: { fields: { X: 'string' }, indexes: ['Y'] } }, /schema: class A: indexes names Y, which is not a declared field/],
      [{ A: { fields: { X: { type: 'boolean', maxLength: 3 } } } }, /schema: class A, field X: maxLength is a whole number, for a string field only/],
      [{ A: { fields: { _X: 'string' } } }, /schema: class A, field _X/],
    ];
    for (const [schema, message] of cases) expect(() => createService({ schema }), JSON.stringify(schema)).toThrow(message);
  });
});
