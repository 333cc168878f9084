/** PostgreSQL answers listings through its indexes: checked on the plans of a table of 24,000 objects. */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { importObjects, type FindQuery, type FindResult } from '../src/index.js';
import { call, demoData, demoService, login } from './helpers.js';
import { PostgresObjectStore } from '../stores/postgres.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from './support/servers.js';

const available = await serverAvailable('PostgreSQL', 'the PostgreSQL index test');
const schema = `odbrest_plans_${RUN_ID}`;

/** Every plan node (sub- and init-plans included) as `Node Type`, plus `on <index>` (and `backward` when read so) or `of <table>`. */
function planNodes(plan: unknown): string[] {
  const out: string[] = [];
  const walk = (node: any) => {
    const on = node['Index Name'] ? ` on ${node['Index Name']}` : node['Relation Name'] ? ` of ${node['Relation Name']}` : '';
    out.push(`${node['Node Type']}${on}${node['Scan Direction'] === 'Backward' ? ' backward' : ''}`);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk((plan as any[])[0].Plan);
  return out;
}

describe.runIf(available)('PostgresObjectStore indexes', () => {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
  afterAll(async () => {
    await store.close();
    await admin.end();
    await dropSchema(schema);
  });

  it('answers equality, reference and $in filters from the GIN index and pages from the class index, never reading the class', { timeout: 60_000 }, async () => {
    await admin.connect();
    await store.count('Customer'); // creates the table
    // Bulk rows straight in SQL (the columns are the store's documented layout; its triggers keep the
    // totals): 24,000 puts would take most of this suite's time budget and test nothing more.
    await admin.query(`INSERT INTO "${schema}".objects (id, class_name, store_time, data, body)
      SELECT id, c, 0, fields::jsonb, fields FROM (
        SELECT c || i AS id, c, json_build_object('Name', 'name ' || i, 'City', 'city ' || (i % 100), 'Active', i % 2 = 0, 'Number', i,
          'Manager', json_build_object('$ref', 'EMP' || (i % 100)), 'Team', json_build_object('$set', json_build_array('EMP' || (i % 50), 'EMP' || (i % 70))))::text AS fields
        FROM generate_series(0, 5999) i, unnest(array['Customer', 'Order', 'Invoice', 'Ticket']) c ORDER BY i, c) rows`);
    await admin.query(`VACUUM ANALYZE "${schema}".objects`);

    const cases: Record<string, { query: FindQuery; uses: RegExp }> = {
      'equality, one match': { query: { className: 'Customer', where: { Name: 'name 4321' }, limit: 50 }, uses: /Bitmap Index Scan on objects_fields/ },
      'equality, 1%, page 2': { query: { className: 'Customer', where: { City: 'city 7' }, offset: 50, limit: 50 }, uses: /Bitmap Index Scan on objects_fields/ },
      'reference, direct or in a set': { query: { className: 'Customer', where: { Team: { $ref: 'EMP7' } }, limit: 50 }, uses: /Bitmap Index Scan on objects_fields/ },
      $in: { query: { className: 'Customer', where: { Name: { $in: ['name 1', 'name 2', 'name 5999'] } }, limit: 50 }, uses: /Bitmap Index Scan on objects_fields/ },
      // the trigram index of the searchable text (pg_trgm, where this server has it): words of 3+ characters
      'full text ($text, seFulltext)': { query: { className: 'Customer', where: { $text: 'NAME 4321' }, limit: 50 }, uses: /Bitmap Index Scan on objects_text/ },
      'no filter, deep page, newest first': { query: { className: 'Customer', offset: 500, limit: 50, reverse: true }, uses: /Index Only Scan on objects_class_seq/ },
      'no filter, first page': { query: { className: 'Customer', limit: 50 }, uses: /Index Scan on objects_class_seq/ },
    };
    for (const [label, { query, uses }] of Object.entries(cases)) {
      const nodes = planNodes(await store.explain(query));
      console.log(`${label}: ${nodes.join(' < ')}`);
      expect(nodes.join(), label).toMatch(uses);
      expect(nodes.filter((node) => /Seq Scan/.test(node) && / of objects$/.test(node)), label).toEqual([]);
      // an unfiltered total comes from the stats table, not from counting the class
      if (!query.where) expect(nodes.filter((node) => node.startsWith('Aggregate')).length, label).toBe(1); // sum over the stats slots
    }

    expect(await store.find({ className: 'Customer', where: { Name: 'name 4321' } })).toMatchObject({ total: 1, objects: [{ id: 'Customer4321' }] });
    const found = await store.find({ className: 'Customer', where: { City: 'city 7' }, offset: 10, limit: 50 });
    expect(found.total).toBe(60);
    expect(found.objects.map((object) => object.fields.Number)).toEqual(Array.from({ length: 50 }, (_, i) => 7 + 100 * (i + 10)));
    // i % 50 = 7 or i % 70 = 7, both when i % 350 = 7
    const team = await store.find({ className: 'Customer', where: { Team: { $ref: 'EMP7' } }, limit: 3 });
    expect(team).toMatchObject({ total: 120 + 86 - 18, objects: [{ id: 'Customer7' }, { id: 'Customer57' }, { id: 'Customer77' }] });
    expect(await store.count('Customer', { Name: { $in: ['name 1', 'name 2', 'name 5999'] } })).toBe(3);
    const deep = await store.find({ className: 'Customer', offset: 500, limit: 2, reverse: true });
    expect(deep).toMatchObject({ total: 6000, objects: [{ id: 'Customer5499' }, { id: 'Customer5498' }] });
  });

  it('finds the objects referencing an id across classes from the _refs index, and counts classes from the stats, never reading a class', { timeout: 60_000 }, async () => {
    for (const query of [{ limit: 50 }, { offset: 600, limit: 50 }, { limit: 0 }, { where: { $classes: ['Order'] }, limit: 50 }]) {
      const nodes = planNodes(await store.explainReferencing('EMP7', query));
      console.log(`referencing ${JSON.stringify(query)}: ${nodes.join(' < ')}`);
      expect(nodes.join()).toMatch(/Bitmap Index Scan on objects_refs/);
      expect(nodes.filter((node) => /Seq Scan/.test(node) && / of objects$/.test(node))).toEqual([]);
      // nor the class index walked in page order, testing row after row
      expect(nodes.filter((node) => /^Index (Only )?Scan on objects_class_seq/.test(node))).toEqual([]);
    }
    // per class: Team holds EMP7 when i % 50 = 7 or i % 70 = 7 (120 + 86 - 18), Manager when i % 100 = 7 (among those)
    const found = await store.referencing('EMP7', { limit: 3 });
    expect(found).toMatchObject({ total: 4 * 188, objects: [{ id: 'Customer7' }, { id: 'Customer57' }, { id: 'Customer77' }] });
    expect((await store.referencing('EMP7', { offset: 188, limit: 1 })).objects.map((object) => object.id)).toEqual(['Invoice7']);
    expect((await store.referencing('EMP7', { where: { $classes: ['Order'] }, limit: 0 })).total).toBe(188);
    expect(await store.classCounts()).toEqual(['Customer', 'Invoice', 'Order', 'Ticket'].map((className) => ({ className, count: 6000 })));
  });

  it('answers equality, $in and orderBy on indexedFields from their btrees, deep page starts from the index alone', { timeout: 60_000 }, async () => {
    // the same table, opened again with two indexed fields: the columns and indexes are added at start
    const indexed = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects', indexedFields: ['City', 'Number'] });
    try {
      await indexed.count('Customer');
      await admin.query(`VACUUM ANALYZE "${schema}".objects`); // the visibility map that index-only scans need, as autovacuum keeps it
      const cases: Record<string, { query: FindQuery; uses: RegExp }> = {
        'equality, 1%, first page': { query: { className: 'Customer', where: { City: 'city 7' }, limit: 50 }, uses: /Index Scan on objects_f_City/ },
        'equality, 1%, deep page': { query: { className: 'Customer', where: { City: 'city 7' }, offset: 40, limit: 10 }, uses: /Index Only Scan on objects_f_City/ },
        $in: { query: { className: 'Customer', where: { City: { $in: ['city 1', 'city 2'] } }, limit: 50 }, uses: /Index Scan on objects_f_City/ },
        'ordered by a number, with an equality filter': {
          query: { className: 'Customer', where: { Active: true }, orderBy: { field: 'Number' }, limit: 50 },
          uses: /Index Scan on objects_o_Number/,
        },
        'ordered by a number, newest first': { query: { className: 'Customer', orderBy: { field: 'Number' }, reverse: true, limit: 50 }, uses: /Index Scan on objects_o_Number/ },
        // descending: the index read backward; ties keep creation order, put right group by group (Incremental Sort)
        'ordered by a number, descending': { query: { className: 'Customer', orderBy: { field: 'Number', descending: true }, limit: 50 }, uses: /Index Scan on objects_o_Number backward/ },
        'ordered by a number, descending, with an equality filter, deep page': {
          query: { className: 'Customer', where: { Active: true }, orderBy: { field: 'Number', descending: true }, offset: 500, limit: 50 },
          uses: /Index Scan on objects_o_Number backward/,
        },
        'ordered by a string with ties, descending': { query: { className: 'Customer', orderBy: { field: 'City', descending: true }, limit: 50 }, uses: /Index Scan on objects_o_City backward/ },
        'ordered by a string with ties, descending, reversed': { query: { className: 'Customer', orderBy: { field: 'City', descending: true }, reverse: true, limit: 50 }, uses: /Index Scan on objects_o_City(?! backward)/ },
      };
      for (const [label, { query, uses }] of Object.entries(cases)) {
        const nodes = planNodes(await indexed.explain(query));
        console.log(`${label}: ${nodes.join(' < ')}`);
        expect(nodes.join(), label).toMatch(uses);
        expect(nodes.filter((node) => /Seq Scan/.test(node) && / of objects$/.test(node)), label).toEqual([]);
        // the page comes in order from the index: the only sort is the final one of the (at most 51) rows
        if (label !== '$in') expect(nodes.slice(1), label).not.toContain('Sort');
      }
      const ordered = await indexed.find({ className: 'Customer', where: { Active: true }, orderBy: { field: 'Number' }, offset: 3, limit: 3 });
      expect(ordered).toMatchObject({ total: 3000, objects: [{ id: 'Customer6' }, { id: 'Customer8' }, { id: 'Customer10' }] });
      expect(await indexed.find({ className: 'Customer', where: { City: 'city 7' }, offset: 40, limit: 2 })).toMatchObject({
        total: 60,
        objects: [{ id: 'Customer4007' }, { id: 'Customer4107' }],
      });
      expect(await indexed.count('Customer', { City: { $in: ['city 1', 'city 2'] } })).toBe(120);
      // descending by a field with ties: the greatest value first, ties in creation order (PROTOCOL.md 6.2); reversed, all of it
      const ids = async (query: Partial<FindQuery>) => (await indexed.find({ className: 'Customer', limit: 3, ...query })).objects.map((object) => object.id);
      expect(await ids({ orderBy: { field: 'City', descending: true } })).toEqual(['Customer99', 'Customer199', 'Customer299']);
      expect(await ids({ orderBy: { field: 'City', descending: true }, reverse: true })).toEqual(['Customer5900', 'Customer5800', 'Customer5700']);
      expect(await ids({ orderBy: { field: 'Number', descending: true }, where: { Active: true }, offset: 500 })).toEqual(['Customer4998', 'Customer4996', 'Customer4994']);
    } finally {
      await indexed.close();
    }
  });

  it("query text's = on a field the declared schema says holds no reference is plain equality, served by the field's btree", { timeout: 60_000 }, async () => {
    /** The store as the service uses it, remembering the listings it is asked for. */
    class Recording extends PostgresObjectStore {
      readonly listings: FindQuery[] = [];
      override find(query: FindQuery): Promise<FindResult> {
        this.listings.push(query);
        return super.find(query);
      }
    }
    const recording = new Recording({ connectionString: DATABASE_URL, schema, table: 'objects', indexedFields: ['City', 'Number'] });
    try {
      // the demo's users, to log in with (their Employee references dangle: nothing here reads them)
      await importObjects(recording, { objects: demoData().objects.filter((o) => o['~ClassName'] === 'User' || o['~ClassName'] === 'UserGroup') }, 1000);
      await admin.query(`ANALYZE "${schema}".objects`);
      const planOf = async (declared: boolean) => {
        const service = await demoService({ store: recording, data: { objects: [] }, schema: declared ? { Customer: { fields: { City: 'string', Manager: { type: 'ref', class: 'Employee' } } } } : {} });
        const sessionId = await login(service);
        recording.listings.length = 0;
        const query = encodeURIComponent(JSON.stringify({ queryString: 'City = "city 7"' }));
        const answer = await call(service, 'GET', `/v1/objects/Customer?perPage=50&query=${query}`, { headers: { sessionId } });
        expect(answer.body.data['~UnfilteredCount'], answer.text).toBe(60);
        const listing = recording.listings.find((found) => found.className === 'Customer' && JSON.stringify(found.where).includes('City'))!;
        const nodes = planNodes(await recording.explain(listing));
        console.log(`query text =, ${declared ? 'declared string' : 'undeclared'}: ${JSON.stringify(listing.where)}: ${nodes.join(' < ')}`);
        return nodes.join();
      };
      expect(await planOf(true)).toMatch(/Index (Only )?Scan on objects_f_City/);
      // undeclared, the field might hold references: "=" also finds a reference to an object of that id (the GIN index)
      expect(await planOf(false)).toMatch(/Bitmap Index Scan on objects_fields/);
    } finally {
      await recording.close();
    }
  });
});
