/** The BlobStore contract on PostgreSQL, in this run's own schema. */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresBlobStore } from '../../stores/postgres.js';
import { patternBytes, readAll, sameBytes, streamOf } from '../support/blobs.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from '../support/servers.js';
import { blobStoreContract } from './suites.js';

const available = await serverAvailable('PostgreSQL', 'the BlobStore contract on PostgresBlobStore');
const schema = `odbrest_blobs_${RUN_ID}`;
let tables = 0;
const tableOf = new WeakMap<object, string>();

function open(table: string) {
  const store = new PostgresBlobStore({ connectionString: DATABASE_URL, schema, table });
  tableOf.set(store, table);
  return store;
}

/** Chunk rows no blob points at (the remains of a write that did not finish). */
async function orphanChunks(table: string): Promise<number> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM "${schema}"."${table}_chunks" c WHERE NOT EXISTS (SELECT 1 FROM "${schema}"."${table}" b WHERE b.version = c.version)`,
    );
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

describe.runIf(available)('PostgresBlobStore', () => {
  afterAll(() => dropSchema(schema));
  blobStoreContract('PostgresBlobStore', {
    create: async () => open(`blobs_${tables++}`),
    reopen: async (store) => {
      await store.close?.();
      return open(tableOf.get(store)!);
    },
    leftovers: async (store) => orphanChunks(tableOf.get(store)!),
  });

  it('keeps a blob in chunk rows of 256 KiB, and a delete removes every one of them', async () => {
    const table = `blobs_${tables++}`;
    const store = open(table);
    const bytes = patternBytes(3 * 256 * 1024 + 5, 2);
    await store.put('chunked', streamOf(bytes, [100_000]));
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    const lengths = async () =>
      (await client.query<{ n: number }>(`SELECT octet_length(data) AS n FROM "${schema}"."${table}_chunks" ORDER BY seq`)).rows.map((row) => row.n);
    try {
      expect(await lengths()).toEqual([262_144, 262_144, 262_144, 5]);
      expect(sameBytes(await readAll((await store.get('chunked'))!.stream), bytes)).toBe(true);
      await store.put('chunked', streamOf(bytes.subarray(0, 10)));
      expect(await lengths()).toEqual([10]); // the replaced version's chunks are gone
      expect(await store.delete('chunked')).toBe(true);
      expect(await lengths()).toEqual([]);
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('a put while PostgreSQL is unreachable fails with StorageUnavailableError and cancels the stream', async () => {
    const store = new PostgresBlobStore({ connectionString: 'postgres://postgres@127.0.0.1:1/test', connectTimeoutMs: 500, schema, table: 'unreachable' });
    let cancelled = false;
    const source = new ReadableStream<Uint8Array>({ pull: (c) => c.enqueue(new Uint8Array(10)), cancel: () => void (cancelled = true) });
    await expect(store.put('x', source)).rejects.toMatchObject({ name: 'StorageUnavailableError' });
    expect(cancelled).toBe(true);
    await expect(store.get('x')).rejects.toMatchObject({ name: 'StorageUnavailableError' });
    await store.close();
  });
});
