/**
 * Declarations and field names over a store (PROTOCOL.md 6.3, 6.12; issue 50 items 2-4), part of the
 * ObjectStore contract: the service on the store under test. A stored declaration that cannot be
 * compiled (written through the store, as an older version or a hand edit would) refuses only its own
 * class's writes; field names the JavaScript object model owns are fields like any other; U+0000 in a
 * field name is `400` before the store sees it.
 */
import { createService } from '../index.js';
import { MemoryKeyValueStore } from '../storage/memory-kv.js';
import type { ObjectStore } from '../storage/types.js';
import type { TestApi } from './test-api.js';

const OWNED = ['constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];
const open = { read: ['*'], create: ['*'], update: ['*'], delete: ['*'] };

/** A client of a new service on `store`, logged in through a custom login, every right on the classes used here. */
async function modelClient(store: ObjectStore) {
  const principal = (await store.find({ className: 'ModelTester', limit: 1 })).objects[0] ?? (await store.put({ className: 'ModelTester', fields: { Name: 'tester', _licences: ['model'] } }));
  const service = createService({
    store,
    kv: new MemoryKeyValueStore(),
    onError: () => undefined,
    customLogin: { className: 'ModelTester', authenticate: async () => principal },
    access: { rules: { Owned: open, Poison: open, Other: open, Declared: open } },
    schema: { Declared: { fields: Object.fromEntries(OWNED.map((name) => [name, { type: 'integer', max: 5, required: name === 'toString' }])), strict: true } },
  });
  await service.ready;
  let sessionId = '';
  const call = async (method: string, path: string, body?: string) => {
    const headers: Record<string, string> = { appkey: 'contract', ...(sessionId && { sessionId }) };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await service.fetch(new Request(`http://odbrest.contract${path}`, { method, headers, body }));
    const answer = (await response.json().catch(() => ({}))) as { status?: { internalStatus?: string; statusMessage?: string }; data?: Record<string, unknown> };
    return { status: response.status, code: answer.status?.internalStatus, message: answer.status?.statusMessage ?? '', data: answer.data ?? {}, text: JSON.stringify(answer) };
  };
  sessionId = String((await call('POST', '/v1/auth/df', JSON.stringify({ user: 'tester', pass: 'x', appNames: ['model'] }))).data.sessionId ?? '');
  if (!sessionId) throw new Error("the contract's login failed");
  return call;
}

export function modelEdgesContract(harness: { create(): Promise<ObjectStore> }, { describe, expect, it }: TestApi): void {
  describe('declarations and field names over this store (PROTOCOL.md 6.3, 6.12)', () => {
    it('a stored declaration that cannot be compiled refuses its own class (500 naming it) and leaves the others working', async () => {
      const store = await harness.create();
      try {
        // what an older version stored for Enum [1, 1e400] (Infinity became null), and text that is no declaration
        await store.put({ id: 'MODEL_Poison', className: 'ModelClass', fields: { _className: 'Poison', _class: JSON.stringify({ declaration: { fields: { N: { type: 'number', enum: [1, null] } } } }) } });
        await store.put({ id: 'MODEL_Other', className: 'ModelClass', fields: { _className: 'Other', _class: '{not json' } });
        const call = await modelClient(store);
        for (const className of ['Poison', 'Other']) {
          const refused = await call('POST', `/v1/object/${className}`, '{"N": 1}');
          expect([refused.status, refused.code], refused.text).toEqual([500, '500']);
          expect(refused.message).toMatch(new RegExp(`^writes to ${className} are refused: its stored declaration cannot be used`));
        }
        const fine = await call('POST', '/v1/object/Owned', '{"N": "anything"}');
        expect(fine.code, fine.text).toBe('0');
        const ready = await call('GET', '/_CheckReady');
        expect((ready.data.Problems as string[]).map((problem) => problem.split(':')[0])).toEqual(['class Poison', 'class Other']);
      } finally {
        await store.close?.();
      }
    });

    it('fields named constructor, toString, valueOf...: stored, read and checked like any other; __proto__ and U+0000 in a name are 400', async () => {
      const store = await harness.create();
      try {
        const call = await modelClient(store);
        const body = JSON.stringify(Object.fromEntries(OWNED.map((name, i) => [name, { n: i }])));
        const created = await call('POST', '/v1/object/Owned', body);
        expect(created.code, created.text).toBe('0');
        const read = await call('GET', `/v1/object/${String(created.data['~ObjectID'])}`);
        for (const [i, name] of OWNED.entries()) expect(Object.hasOwn(read.data, name) && read.data[name], name).toEqual({ n: i });
        // a declared (strict) class: each checked when present, toString required
        const missing = await call('POST', '/v1/object/Declared', '{}');
        expect([missing.code, missing.message]).toEqual(['400', 'field toString of Declared is required: an integer of at most 5']);
        for (const name of OWNED) {
          const bad = await call('POST', '/v1/object/Declared', JSON.stringify({ toString: 1, [name]: 9 }));
          expect([bad.code, bad.message]).toEqual(['400', `field ${name} of Declared must be an integer of at most 5`]);
        }
        const good = await call('POST', '/v1/object/Declared', JSON.stringify(Object.fromEntries(OWNED.map((name) => [name, 5]))));
        expect(good.code, good.text).toBe('0');
        const proto = await call('POST', '/v1/object/Owned', '{"__proto__": {"x": 1}}');
        expect([proto.code, proto.message]).toEqual(['400', 'field __proto__ may not be written (names starting with _ or $ are reserved)']);
        const nul = await call('POST', '/v1/object/Owned', '{"a\\u0000b": 1}');
        expect([nul.code, nul.message]).toEqual(['400', 'field name "a\\u0000b" contains the character U+0000, which a field name may not hold']);
        expect(await store.count('Owned')).toBe(1);
      } finally {
        await store.close?.();
      }
    });
  });
}
