/**
 * The recycle bin when the process dies between writes (PROTOCOL.md 6.3, issue 41): a real process
 * on the file store and on PostgreSQL is SIGKILLed right after each store write of updates, moves to
 * the bin and restores; a new service on the same data then finds the object live or in the bin
 * (never both, never twice), with the last version written, and a restore brings back exactly that.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ObjectStore } from '../src/index.js';
import { binClient } from '../src/testing/recycle-bin.js';
import { FileObjectStore } from '../stores/file-store.js';
import { PostgresObjectStore } from '../stores/postgres.js';
import { bundleForNode, spawnLines } from './support/processes.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from './support/servers.js';

const dir = mkdtempSync(join(tmpdir(), 'odbrest-recycle-crash-'));
const schema = `odbrest_bin_${RUN_ID}`;
const postgres = await serverAvailable('PostgreSQL', 'the recycle bin crash test on PostgresObjectStore');
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (postgres) await dropSchema(schema);
});
const child = bundleForNode(join(import.meta.dirname, 'fixtures/recycle-bin-process.ts'));

/**
 * Kills the child after its `at`-th write, then checks the object on the data it left and takes it
 * through one more update, move to the bin and restore: each answers the version last written.
 */
async function killedAt(at: number, args: string[], open: () => Promise<ObjectStore>): Promise<void> {
  const process_ = spawnLines(process.execPath, [await child, String(at), ...args]);
  try {
    await process_.waitFor((line) => line.startsWith('ready '), 60_000);
    await process_.waitFor((line) => line === 'cut', 60_000);
  } finally {
    process_.child.kill('SIGKILL');
    await process_.exited;
  }
  const id = process_.lines.find((line) => line.startsWith('ready '))!.slice('ready '.length);
  const answered = process_.lines.filter((line) => line.startsWith('A '));
  // the last version answered, and the one an update cut by the kill may have written
  const written = answered.filter((line) => line.startsWith('A update ')).length;
  const allowed = [written, written + 1];
  const store = await open();
  try {
    const call = await binClient(store);
    const context = `killed after write ${at} (${answered.join(', ') || 'nothing answered'})`;
    const read = await call('GET', `/v1/object/${id}`);
    const listed = ((await call('GET', '/v1/recycleBin')).data['~Elements'] as Array<Record<string, unknown>>).filter((element) => element['~ObjectID'] === id);
    const live = read.status === 200;
    expect(read.status === 200 || read.status === 404, context).toBe(true);
    expect(listed.length, `${context}: listed ${listed.length} times while ${live ? 'live' : 'not live'}`).toBe(live ? 0 : 1);
    const v = (live ? read.data.v : listed[0]!.v) as number;
    expect(allowed, `${context}: v=${v}`).toContain(v);
    if (!live) expect((await call('POST', `/v1/recycleBin/${id}/restore`)).data.v, context).toBe(v);
    expect((await call('PATCH', `/v1/object/${id}`, { v: 10 })).status, context).toBe(200);
    expect((await call('DELETE', `/v1/object/${id}?moveToRecycler=true`)).status, context).toBe(200);
    const restored = await call('POST', `/v1/recycleBin/${id}/restore`);
    expect([restored.status, restored.data.v], `${context}: the restore after it`).toEqual([200, 10]);
    expect((await call('GET', '/v1/recycleBin')).data['~Count'], context).toBe(0);
  } finally {
    await store.close?.();
  }
}

/** Every write of the two rounds (one per step): update, move to the bin, restore. */
const POINTS = [0, 1, 2, 3, 4, 5];

describe('the recycle bin when its process is SIGKILLed after any store write', () => {
  it('on the file store', { timeout: 300_000 }, async () => {
    for (const at of POINTS) {
      const path = join(dir, `bin-${at}.journal`);
      await killedAt(at, ['file', path], () => FileObjectStore.open({ path }));
    }
  });

  it.runIf(postgres)('on PostgreSQL', { timeout: 300_000 }, async () => {
    for (const at of POINTS) {
      const table = `bin_${at}`;
      await killedAt(at, ['postgres', DATABASE_URL, schema, table], async () => new PostgresObjectStore({ connectionString: DATABASE_URL, schema, table }));
    }
  });
});
