/**
 * The memory store answers from indexes (per field, per order, creation order past holes); here it is
 * checked against the plain definition (`matches` and `orderComparator` over every object in creation
 * order) through thousands of random writes and queries, enough to cross its internal thresholds
 * (sorting candidates against walking an order index, compacting holes, dropping unused indexes).
 */
import { describe, expect, it } from 'vitest';
import { matches, MemoryObjectStore, orderComparator, type Fields, type FindQuery, type Where } from '../../src/index.js';
import { prng } from '../support/prng.js';

const KINDS = [0, 1, 2, '0', 'a', true, false, null, undefined, { $ref: 'R1' }, { $ref: 'R2' }, { $set: ['R1', 'R2'] }, [1]] as const;
const TEXTS = ['', 'a', 'b', 'ab', 'Z', '\uFFFF', '😀', '😀a', 'é'];

describe('MemoryObjectStore against the definition of find', () => {
  it('answers like a scan over thousands of random writes and queries', async () => {
    const next = prng(20260115).next;
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    const store = new MemoryObjectStore();
    /** The expected state: per class, objects in creation order. */
    const classes = new Map<string, Array<{ id: string; fields: Fields }>>([['C', []], ['D', []]]);
    const where = new Map<string, string>();

    const randomFields = (): Fields => {
      const fields: Fields = {};
      const kind = pick(KINDS);
      if (kind !== undefined) fields.g = structuredClone(kind) as Fields[string];
      if (next() < 0.9) fields.n = Math.floor(next() * 20);
      if (next() < 0.8) fields.s = pick(TEXTS);
      if (next() < 0.3) fields.h = Math.floor(next() * 3);
      return fields;
    };
    const write = async (createShare: number) => {
      const ids = [...where.keys()];
      if (next() < createShare || ids.length < 10) {
        const created = await store.put({ className: 'C', fields: randomFields() });
        classes.get('C')!.push({ id: created.id, fields: created.fields });
        where.set(created.id, 'C');
        return;
      }
      const id = pick(ids);
      const className = where.get(id)!;
      const list = classes.get(className)!;
      const at = list.findIndex((object) => object.id === id);
      const roll = next();
      if (roll < 0.5) {
        const fields = randomFields();
        await store.put({ id, className, fields, ifStoreTime: (await store.get(id))!.storeTime });
        list[at] = { id, fields };
      } else if (roll < 0.85) {
        expect(await store.delete(id)).toBe(true);
        list.splice(at, 1);
        where.delete(id);
      } else {
        const other = className === 'C' ? 'D' : 'C';
        const fields = randomFields();
        await store.put({ id, className: other, fields });
        list.splice(at, 1);
        classes.get(other)!.push({ id, fields });
        where.set(id, other);
      }
    };

    /** `count` ids of stored objects, of any class. */
    const ids = (count: number) => {
      const stored = [...where.keys()];
      return Array.from({ length: count }, () => pick(stored));
    };
    const randomCondition = (): Where => {
      const conditions: Where[] = [
        { g: pick(KINDS.filter((kind) => kind === null || typeof kind !== 'object')) ?? null },
        { g: { $ref: pick(['R1', 'R2', 'R3']) } },
        { g: { $in: [pick([0, 1, 'a', true, null]), pick([2, '0', false])] } },
        { g: { $in: [] } },
        { g: { $ne: pick([0, 'a', null]) } },
        { g: { $exists: next() < 0.5 } },
        { n: Math.floor(next() * 20) },
        { n: { $in: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] } },
        { n: { $gte: Math.floor(next() * 20), $lt: 15 } },
        { s: { $gt: pick(TEXTS) } },
        { s: { $prefix: pick(['', 'a', '😀']) } },
        // ranges: answered from the field's order index (counted there when too many to sort)
        { n: { $gt: Math.floor(next() * 20) - 1 } },
        { n: { $lte: Math.floor(next() * 24) - 2, $gte: 2 } },
        { g: { $gt: pick([0, 1, -1]) } },
        { g: { $lt: pick(['0', 'a', '']) } },
        { s: { $gte: pick(TEXTS), $lt: pick(TEXTS) } },
        { n: { $gt: 3, $lt: 'z' } },
        { h: { $gte: 1 }, n: { $lt: 10 } },
        { h: { $in: [0, 1] }, n: { $lt: 10 } },
        { h: 1, g: { $exists: true } },
        { h: { $exists: next() < 0.5 } },
        { h: { $exists: true, $ne: 1 } },
        // as a folder or a `self` listing narrows a filter: `$and` with `$oids` (ids of both classes and unknown ones)
        { $and: [{}, { $oids: [...pick([[], ids(3), ids(40)]), 'NOSUCH01'] }] },
        { $and: [{ n: { $lt: 10 } }, { $and: [{ $oids: ids(60) }] }] },
        { $and: [{}, { h: { $exists: false } }] },
        { $and: [{ s: pick(TEXTS) }, { g: { $exists: true } }] },
        { $and: [null as unknown as Where, { h: 1 }] },
        { $and: 'not a list' as unknown as Where[] },
        { $or: [{ $oids: ids(20) }, { h: 2 }] },
        { $or: [{ h: { $exists: true } }, { n: 3 }] },
        {},
      ];
      return pick(conditions);
    };
    const check = async () => {
      const className = next() < 0.85 ? 'C' : 'D';
      const query: FindQuery = { className, where: randomCondition() };
      if (next() < 0.5) query.orderBy = { field: pick(['n', 's', 'g', 'h', 'none']), descending: next() < 0.5 };
      if (next() < 0.3) query.reverse = true;
      if (next() < 0.7) query.offset = Math.floor(next() * next() * 2000);
      if (next() < 0.8) query.limit = Math.floor(next() * 60);
      let expected = classes.get(className)!.filter((object) => matches(object.fields, query.where, { id: object.id, storeTime: 0, className }));
      if (query.orderBy) expected = expected.sort((a, b) => orderComparator(query.orderBy!)(a.fields, b.fields));
      if (query.reverse) expected.reverse();
      const offset = query.offset ?? 0;
      const page = expected.slice(offset, offset + (query.limit ?? expected.length));
      const found = await store.find(query);
      expect({ query, total: found.total, ids: found.objects.map((object) => object.id) }).toEqual({
        query,
        total: expected.length,
        ids: page.map((object) => object.id),
      });
      expect(found.objects.map((object) => object.fields)).toEqual(page.map((object) => object.fields));
      expect(await store.count(className, query.where)).toBe(expected.length);
    };

    for (let round = 0; round < 30; round++) {
      const writes = round === 12 ? 0 : round < 10 ? 600 : 120;
      for (let i = 0; i < writes; i++) await write(round < 10 ? 0.65 : 0.3);
      if (round === 12) {
        // delete most of class C at once, so holes outnumber the live objects and the class is compacted
        for (const { id } of classes.get('C')!.splice(0, Math.floor(classes.get('C')!.length * 0.8))) {
          await store.delete(id);
          where.delete(id);
        }
      }
      for (let i = 0; i < 25; i++) await check();
      if (round === 9) expect(classes.get('C')!.length).toBeGreaterThan(2048); // candidates beyond sorting them
    }
    expect(classes.get('C')!.length).toBeGreaterThan(500);
  });
});
