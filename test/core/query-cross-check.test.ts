/**
 * Randomized cross-check (PROTOCOL.md 6.2: "every store answers query text identically"): a seeded
 * generator of query texts over demo-like data (items referencing people directly and in sets, people
 * referencing teams), each listed through the service by a memory-store and a PostgreSQL-store
 * service: the status, the ids in order and `~Count` must be the same. A failure names the seed and
 * the text; set QUERY_SEED to replay one.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Service } from '../../src/index.js';
import { PostgresObjectStore } from '../../stores/postgres.js';
import { call, demoData, demoService, login, type CallResult } from '../helpers.js';
import { prng, type Prng } from '../support/prng.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from '../support/servers.js';

const available = await serverAvailable('PostgreSQL', 'the query cross-check of the memory and PostgreSQL stores');
const schema = `odbrest_xcheck_${RUN_ID}`;
const SEED = Number(process.env.QUERY_SEED ?? 20261126);
const QUERIES = 500;


const WORDS = ['Apfel', 'apfel', 'Birne', 'Äpfel', 'straße', 'B', 'b', '', 'x y', '10', 'Zoo', 'zebra', '50%', 'a_b', 'O\'Neil', 'Ünal'];
const CITIES = ['Berlin', 'Bonn', 'Köln', 'bremen', null];

/** Demo-like objects: 10 teams, 40 people, 300 items (numbers, strings, booleans, nulls, absent fields, references, sets). */
function data() {
  const r = prng(4242);
  const objects: Record<string, unknown>[] = [];
  const id = (prefix: string, i: number) => `${prefix}${String(i).padStart(5, '0')}`;
  for (let i = 0; i < 10; i++) objects.push({ '~ClassName': 'Team', '~ObjectID': id('TEAM', i), Name: `Team ${r.pick(WORDS)} ${i}`, Size: r.int(20), Lead: { $ref: id('PER', r.int(40)) } });
  for (let i = 0; i < 40; i++) {
    const person: Record<string, unknown> = { '~ClassName': 'Person', '~ObjectID': id('PER', i), Name: `${r.pick(WORDS)}${i % 7}`, Age: 18 + r.int(60) };
    const city = r.pick(CITIES);
    if (r.next() < 0.8) person.City = city;
    if (r.next() < 0.85) person.Team = { $ref: id('TEAM', r.int(12)) }; // TEAM00010, TEAM00011 do not exist
    objects.push(person);
  }
  for (let i = 0; i < 300; i++) {
    const item: Record<string, unknown> = { '~ClassName': 'Item', '~ObjectID': id('ITM', i), Name: `${r.pick(WORDS)} ${r.pick(WORDS)}`.trim() };
    const qty = r.next();
    if (qty < 0.6) item.Qty = r.int(100) - 20;
    else if (qty < 0.7) item.Qty = r.int(1000) / 8;
    else if (qty < 0.8) item.Qty = String(r.int(100));
    else if (qty < 0.9) item.Qty = null;
    if (r.next() < 0.7) item.Flag = r.next() < 0.5;
    if (r.next() < 0.5) item.Note = r.pick(WORDS);
    if (r.next() < 0.8) item.Owner = r.next() < 0.95 ? { $ref: id('PER', r.int(42)) } : id('PER', r.int(40));
    if (r.next() < 0.6) item.Tags = { $set: Array.from({ length: r.int(4) }, () => id('PER', r.int(42))) };
    objects.push(item);
  }
  return { objects: [...(demoData().objects as Record<string, unknown>[]).filter((o) => ['User', 'UserGroup', 'Employee'].includes(o['~ClassName'] as string)), ...objects] };
}

/** The paths and the values that suit them. */
const STRING = [...WORDS, 'Berlin', 'bremen', 'PER00003', 'TEAM00002'];
const FIELDS: [string, 'string' | 'number' | 'boolean' | 'ref'][] = [
  ['Name', 'string'],
  ['Qty', 'number'],
  ['Flag', 'boolean'],
  ['Note', 'string'],
  ['Missing', 'string'],
  ['Owner', 'ref'],
  ['Tags', 'ref'],
  ['Owner.Name', 'string'],
  ['Owner.Age', 'number'],
  ['Owner.City', 'string'],
  ['Owner.Team', 'ref'],
  ['Owner.Team.Name', 'string'],
  ['Owner.Team.Size', 'number'],
  ['Tags.Name', 'string'],
  ['Tags.City', 'string'],
  ['Tags.Team.Lead.Name', 'string'],
  ['Owner.Team.Lead.Age', 'number'],
  ['~ObjectID', 'ref'],
];

function quote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function queryText(r: Prng, depth = 0): string {
  const roll = r.next();
  if (depth < 3 && roll < 0.15) return `(${queryText(r, depth + 1)} ${r.pick(['and', 'or', '&&', '||', 'AND', 'Or'])} ${queryText(r, depth + 1)})`;
  if (depth < 3 && roll < 0.22) return `not ${queryText(r, depth + 1)}`;
  if (depth < 3 && roll < 0.27) return `${queryText(r, depth + 1)} and ${queryText(r, depth + 1)} or ${queryText(r, depth + 1)}`;
  const [path, kind] = r.pick(FIELDS);
  const value = (): string => {
    const k = r.next() < 0.85 ? kind : r.pick(['string', 'number', 'boolean', 'ref'] as const);
    if (k === 'number') return String(r.pick([0, 1, 5, 18, 30, 50, 77, -3, 12.5, 99]));
    if (k === 'boolean') return r.pick(['true', 'false', 'null']);
    if (k === 'ref') return r.pick(['PER00003', 'PER00010', 'PER00041', 'TEAM00002', 'ITM00007', 'nobody']);
    return quote(r.pick(STRING));
  };
  const op = r.next();
  if (op < 0.1) return `${path} is ${r.next() < 0.5 ? 'not ' : ''}null`;
  if (op < 0.2) return `${path} in (${Array.from({ length: 1 + r.int(4) }, value).join(', ')})`;
  if (op < 0.35) {
    const base = r.pick(STRING);
    const pattern = [...base].map((c) => (r.next() < 0.2 ? r.pick(['*', '?']) : c)).join('') + r.pick(['', '*', '?', '*?']);
    return `${path} like ${quote(r.next() < 0.2 ? r.pick(['*', '?*', '*a*', 'b*', '%', '_']) : pattern)}`;
  }
  return `${path} ${r.pick(['=', '==', '<>', '!=', '<', '<=', '>', '>='])} ${value()}`;
}

describe.runIf(available)('query text: memory and PostgreSQL answer alike', () => {
  const store = new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table: 'objects' });
  const services: { service: Service; sessionId: string }[] = [];
  beforeAll(async () => {
    for (const options of [{}, { store }]) {
      const service = await demoService({ ...options, data: data() as never });
      services.push({ service, sessionId: await login(service) });
    }
  }, 120_000);
  afterAll(async () => {
    await store.close();
    await dropSchema(schema);
  });

  test(`${QUERIES} generated queries (seed ${SEED}): the same ids, order and ~Count`, async () => {
    const r = prng(SEED);
    let answered = 0;
    for (let n = 0; n < QUERIES; n++) {
      const text = queryText(r);
      const order = r.next() < 0.3 ? `&orderBy=${r.pick(['Name', '-Qty', 'Flag', '-Note'])}` : '';
      const paging = r.next() < 0.3 ? `&perPage=${1 + r.int(40)}&page=${r.int(4)}` : '&perPage=1000';
      const path = `/v1/objects/Item?query=${encodeURIComponent(JSON.stringify({ queryString: text }))}${order}${paging}${r.next() < 0.1 ? '&reverseOrder=true' : ''}`;
      const [memory, postgres] = await Promise.all(services.map(({ service, sessionId }) => call(service, 'GET', path, { headers: { sessionId } })));
      const shape = (answer: CallResult) => ({
        status: answer.status,
        message: answer.status === 200 ? undefined : answer.body?.status?.statusMessage,
        count: answer.body?.data?.['~Count'],
        unfiltered: answer.body?.data?.['~UnfilteredCount'],
        ids: answer.status === 200 ? (answer.body.data['~Elements'] as { '~ObjectID': string }[]).map((o) => o['~ObjectID']) : undefined,
      });
      expect(shape(postgres!), `seed ${SEED}, query ${n}: ${text} ${order}${paging}`).toEqual(shape(memory!));
      expect(memory!.status, `seed ${SEED}, query ${n}: ${text}`).toBeLessThan(500);
      if (memory!.status === 200) answered++;
    }
    expect(answered).toBeGreaterThan(QUERIES * 0.8);
  }, 300_000);
});
