/** PostgreSQL answers listings through its indexes: checked on the plans of a table of 24,000 objects. */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresObjectStore } from '../stores/postgres.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from './support/servers.js';

const available = await serverAvailable('PostgreSQL', 'the PostgreSQL index test');
const schema = `odbrest_plans_${RUN_ID}`;

/** Every plan node as `Node Type` plus `on <index>` when it reads one. */
function planNodes(plan: unknown): string[] {
  const out: string[] = [];
  const walk = (node: any) => {
    out.push(node['Index Name'] ? `${node['Node Type']} on ${node['Index Name']}` : node['Node Type']);
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

  it('uses the class index for pages and the GIN index for filters, never a sequential scan', { timeout: 60_000 }, async () => {
    await admin.connect();
    await store.count('Customer'); // creates the table
    // Bulk rows straight in SQL (the columns are the store's documented layout): 24,000 puts would
    // take most of this suite's time budget and test nothing more.
    await admin.query(`INSERT INTO "${schema}".objects (id, class_name, store_time, data)
      SELECT c || i, c, 0, json_build_object('Name', 'name ' || i, 'City', 'city ' || (i % 100), 'Active', i % 2 = 0, 'Number', i)
      FROM generate_series(0, 5999) i, unnest(array['Customer', 'Order', 'Invoice', 'Ticket']) c ORDER BY i, c`);
    await admin.query(`ANALYZE "${schema}".objects`);

    const one = await store.explain({ className: 'Customer', where: { Name: 'name 4321' }, limit: 50 });
    const some = await store.explain({ className: 'Customer', where: { City: 'city 7' }, offset: 10, limit: 50 });
    const plain = await store.explain({ className: 'Customer', offset: 500, limit: 50, reverse: true });
    for (const [label, plans] of Object.entries({ 'one match': one, '1% match': some, 'no filter': plain })) {
      console.log(`${label}: page ${planNodes(plans.page).join(' < ')} | count ${planNodes(plans.count).join(' < ')}`);
    }
    expect(planNodes(one.page).join()).toContain('Bitmap Index Scan on objects_fields');
    expect(planNodes(one.count).join()).toContain('Bitmap Index Scan on objects_fields');
    expect(planNodes(some.page).join()).toContain('Bitmap Index Scan on objects_fields');
    expect(planNodes(plain.page).join()).toMatch(/Index Scan( Backward)? on objects_class_seq/);
    for (const plans of [one, some, plain]) {
      expect(planNodes(plans.page)).not.toContain('Seq Scan');
      expect(planNodes(plans.count)).not.toContain('Seq Scan');
    }

    expect(await store.find({ className: 'Customer', where: { Name: 'name 4321' } })).toMatchObject({ total: 1, objects: [{ id: 'Customer4321' }] });
    const found = await store.find({ className: 'Customer', where: { City: 'city 7' }, offset: 10, limit: 50 });
    expect(found.total).toBe(60);
    expect(found.objects.map((object) => object.fields.Number)).toEqual(Array.from({ length: 50 }, (_, i) => 7 + 100 * (i + 10)));
  });
});
