/**
 * The file store on Bun and Deno (the README and stores/journal.ts promise Node, Bun and Deno; the
 * durability tests run on Node): a script run by each runtime opens `odbrest/file-store` from the
 * built package, writes, deletes, compacts, closes, reopens and reads back. The journal it leaves is
 * then read here, on Node, so the file format is the same whichever runtime wrote it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { FileObjectStore } from '../stores/file-store.js';
import { requireOrSkip } from './support/servers.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const bin = (name: string) => `${root}node_modules/.bin/${name}`;

const SCRIPT = `
import process from 'node:process';
import { FileObjectStore } from 'odbrest/file-store';

const path = process.env.ODBREST_TEST_JOURNAL;
let store = await FileObjectStore.open({ path });
const kept = await store.put({ className: 'Note', fields: { Text: 'grüße ✓', Nr: 1.5, List: [1, { deep: null }] } });
const gone = await store.put({ className: 'Note', fields: { Text: 'deleted again' } });
await store.delete(gone.id);
await store.compact();
const compactions = store.compactions;
await store.close();

store = await FileObjectStore.open({ path });
console.log(JSON.stringify({
  runtime: typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node',
  kept,
  compactions,
  read: (await store.get(kept.id)) ?? null,
  deleted: (await store.get(gone.id)) ?? null,
  count: await store.count('Note'),
  droppedBytes: store.droppedBytes,
}));
await store.close();
`;

/** How each runtime runs a module given as text, from the repository root (so 'odbrest/...' resolves to dist/). */
const RUNTIMES: Record<string, string[]> = {
  bun: ['-e', SCRIPT],
  deno: ['eval', SCRIPT], // eval runs with every permission
};

const dir = mkdtempSync(join(tmpdir(), 'odbrest-file-store-runtimes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const [runtime, args] of Object.entries(RUNTIMES)) {
  const installed = existsSync(bin(runtime)) || requireOrSkip(`no ${runtime} at node_modules/.bin/${runtime}`, `the file store on ${runtime}`);

  describe.runIf(installed)(`FileObjectStore on ${runtime}`, () => {
    it('puts, deletes, compacts, closes, reopens and reads back; Node reads the same journal', async () => {
      const path = join(dir, `${runtime}.journal`);
      const { stdout } = await run(bin(runtime), args, { cwd: root, env: { ...process.env, ODBREST_TEST_JOURNAL: path } });
      const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
      const fields = { Text: 'grüße ✓', Nr: 1.5, List: [1, { deep: null }] };
      expect(result).toEqual({
        runtime,
        kept: { id: expect.any(String), className: 'Note', storeTime: expect.any(Number), fields },
        compactions: 1,
        read: result.kept,
        deleted: null,
        count: 1,
        droppedBytes: 0,
      });

      const store = await FileObjectStore.open({ path });
      try {
        expect(store.droppedBytes).toBe(0);
        expect((await store.find({ className: 'Note' })).objects).toEqual([result.kept]);
      } finally {
        await store.close();
      }
    });
  });
}
