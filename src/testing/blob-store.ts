/**
 * The BlobStore contract, written once and run against every implementation (memory, a folder on
 * disk, PostgreSQL, and any store a host writes):
 *
 *   const { blobStoreContract } = storeContracts(vitest);   // odbrest/testing
 *   blobStoreContract('MyBlobStore', { create: async () => new MyBlobStore(...) });
 *
 * `create` returns a new, empty store for each test. Durable stores pass `reopen` (close, open the
 * same data again; it closes the store it is given); stores that keep parts of unfinished writes somewhere (temporary files, rows)
 * pass `leftovers`, which counts them, so the contract can check that a failed write left nothing.
 */
import type { BlobRange, BlobStore } from '../storage/blobs.js';
import { BlobTooLargeError, StoreValueError } from '../storage/errors.js';
import { endlessStream, failingStream, patternBytes, readAll, sameBytes, sha256Hex, streamOf } from './blobs.js';
import { openedStores } from './opened-stores.js';
import type { TestApi } from './test-api.js';

export interface BlobStoreHarness {
  /** A new, empty store. */
  create(): Promise<BlobStore>;
  /** Closes `store` and opens the same data again (durable stores only). */
  reopen?(store: BlobStore): Promise<BlobStore>;
  /** How many parts of unfinished writes the store holds (temporary files, uncommitted rows). */
  leftovers?(store: BlobStore): Promise<number>;
}

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export function blobStoreContract(name: string, harness: BlobStoreHarness, test: TestApi): void {
  const { describe, it, expect } = test;
  describe(`BlobStore contract: ${name}`, () => {
    const { fresh, reopened } = openedStores(() => harness.create(), test);
    const bytesOf = async (store: BlobStore, id: string, range?: BlobRange) => {
      const read = await store.get(id, range);
      return read && readAll(read.stream);
    };
    const expectNoLeftovers = async (store: BlobStore) => {
      if (harness.leftovers) expect(await harness.leftovers(store)).toBe(0);
    };

    describe('put and get', () => {
      it('stores a blob and answers its size and SHA-256; get streams the same bytes', async () => {
        const store = await fresh();
        const bytes = patternBytes(100_000, 3);
        expect(await store.put('first', streamOf(bytes, [7_000, 1, 30_000]))).toEqual({ size: 100_000, sha256: sha256Hex(bytes) });
        const read = (await store.get('first'))!;
        expect({ size: read.size, start: read.start, end: read.end }).toEqual({ size: 100_000, start: 0, end: 100_000 });
        expect(sameBytes(await readAll(read.stream), bytes)).toBe(true);
        const stat = (await store.stat('first'))!;
        expect(stat.size).toBe(100_000);
        expect(Math.abs(stat.storeTime - Date.now())).toBeLessThan(60_000);
        await expectNoLeftovers(store);
      });

      it('stores a 0-byte blob', async () => {
        const store = await fresh();
        expect(await store.put('empty', streamOf(new Uint8Array(0)))).toEqual({ size: 0, sha256: EMPTY_SHA256 });
        const read = (await store.get('empty'))!;
        expect({ size: read.size, start: read.start, end: read.end }).toEqual({ size: 0, start: 0, end: 0 });
        expect(sameBytes(await readAll(read.stream), new Uint8Array(0))).toBe(true);
        expect(await store.stat('empty')).toMatchObject({ size: 0 });
        expect(await store.put('empties', new ReadableStream({ start: (c) => (c.enqueue(new Uint8Array(0)), c.close()) }))).toEqual({ size: 0, sha256: EMPTY_SHA256 });
      });

      it('stores a large blob of many chunks of odd sizes, empty chunks among them, byte for byte', async () => {
        const store = await fresh();
        const bytes = patternBytes(5 * 1024 * 1024 + 123, 5);
        const written = await store.put('large', streamOf(bytes, [65_536, 0, 1, 300_001, 4_096, 1_000_003]));
        expect(written).toEqual({ size: bytes.length, sha256: sha256Hex(bytes) });
        const back = (await bytesOf(store, 'large'))!;
        expect(back.length).toBe(bytes.length);
        expect(sha256Hex(back)).toBe(sha256Hex(bytes));
      });

      it('replaces a blob as a whole', async () => {
        const store = await fresh();
        await store.put('doc', streamOf(patternBytes(700_000, 1)));
        const second = patternBytes(1_000, 2);
        await store.put('doc', streamOf(second));
        expect(sameBytes(await bytesOf(store, 'doc'), second)).toBe(true);
        expect(await store.stat('doc')).toMatchObject({ size: 1_000 });
      });

      it('keeps ids that differ only in case apart', async () => {
        const store = await fresh();
        await store.put('Case_a', streamOf(patternBytes(10, 1)));
        await store.put('case_A', streamOf(patternBytes(20, 2)));
        expect(sameBytes(await bytesOf(store, 'Case_a'), patternBytes(10, 1))).toBe(true);
        expect(sameBytes(await bytesOf(store, 'case_A'), patternBytes(20, 2))).toBe(true);
      });

      it('the bytes read are not the store\'s: changing them changes nothing stored', async () => {
        const store = await fresh();
        const bytes = patternBytes(1_000, 9);
        const source = bytes.slice();
        await store.put('mine', new ReadableStream({ start: (c) => (c.enqueue(source), c.close()) }));
        source.fill(0); // a source that reuses its buffer
        (await bytesOf(store, 'mine'))!.fill(0);
        expect(sameBytes(await bytesOf(store, 'mine'), bytes)).toBe(true);
      });
    });

    describe('ranges', () => {
      const size = 600_001;
      const bytes = patternBytes(size, 11);
      const cases: Array<[string, BlobRange, number, number]> = [
        ['the first byte', { start: 0, end: 1 }, 0, 1],
        ['the last byte', { start: size - 1 }, size - 1, size],
        ['a suffix', { suffix: 500 }, size - 500, size],
        ['a suffix longer than the blob (all of it)', { suffix: size + 10 }, 0, size],
        ['a middle part across many pieces', { start: 65_000, end: 333_333 }, 65_000, 333_333],
        ['a range past the end (clipped)', { start: size - 10, end: size + 100 }, size - 10, size],
        ['from the end (empty)', { start: size }, size, size],
        ['from past the end (empty)', { start: size + 5, end: size + 50 }, size, size],
        ['an empty suffix', { suffix: 0 }, size, size],
        ['an end before the start (empty)', { start: 10, end: 5 }, 10, 10],
      ];
      for (const [label, range, start, end] of cases) {
        it(`reads ${label}`, async () => {
          const store = await fresh();
          await store.put('ranged', streamOf(bytes, [100_000]));
          const read = (await store.get('ranged', range))!;
          expect({ size: read.size, start: read.start, end: read.end }).toEqual({ size, start, end });
          expect(sameBytes(await readAll(read.stream), bytes.slice(start, end))).toBe(true);
        });
      }

      it('any range of a 0-byte blob is empty', async () => {
        const store = await fresh();
        await store.put('none', streamOf(new Uint8Array(0)));
        for (const range of [{ start: 0, end: 1 }, { suffix: 1 }, { start: 3 }]) {
          const read = (await store.get('none', range))!;
          expect({ size: read.size, start: read.start, end: read.end }).toEqual({ size: 0, start: 0, end: 0 });
          expect(sameBytes(await readAll(read.stream), new Uint8Array(0))).toBe(true);
        }
      });

      it('refuses negative and fractional ranges with a StoreValueError', async () => {
        const store = await fresh();
        await store.put('ranged', streamOf(patternBytes(10)));
        for (const range of [{ start: -1 }, { start: 0, end: 1.5 }, { suffix: -3 }, { start: Number.NaN }]) {
          await expect(store.get('ranged', range)).rejects.toBeInstanceOf(StoreValueError);
        }
      });

      it('a download cancelled half way can be followed by writes and deletes of the same blob', async () => {
        const store = await fresh();
        await store.put('cancelled', streamOf(patternBytes(2_000_000)));
        const reader = (await store.get('cancelled'))!.stream.getReader();
        await reader.read();
        await reader.cancel();
        await store.put('cancelled', streamOf(patternBytes(10, 2)));
        expect(sameBytes(await bytesOf(store, 'cancelled'), patternBytes(10, 2))).toBe(true);
        expect(await store.delete('cancelled')).toBe(true);
      });

      it('a download under way while the blob is replaced gives the old bytes or fails, never a mix', async () => {
        const store = await fresh();
        const old = patternBytes(3_000_000, 1);
        await store.put('busy', streamOf(old));
        const reader = (await store.get('busy'))!.stream.getReader();
        const parts: Uint8Array[] = [(await reader.read()).value!];
        await store.put('busy', streamOf(patternBytes(3_000_000, 2)));
        const rest = await (async () => {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return 'complete';
            parts.push(value);
          }
        })().catch(() => 'failed');
        const got = new Uint8Array(await new Blob(parts as Uint8Array<ArrayBuffer>[]).arrayBuffer());
        if (rest === 'complete') expect(sha256Hex(got)).toBe(sha256Hex(old));
        else expect(sameBytes(got, old.subarray(0, got.length))).toBe(true);
      });
    });

    describe('missing and malformed ids', () => {
      it('answers undefined and false for an id with no blob', async () => {
        const store = await fresh();
        await store.put('there', streamOf(patternBytes(5)));
        expect(await store.get('nothere')).toBeUndefined();
        expect(await store.get('nothere', { start: 0, end: 1 })).toBeUndefined();
        expect(await store.stat('nothere')).toBeUndefined();
        expect(await store.delete('nothere')).toBe(false);
        expect(await store.move('nothere', 'other')).toBe(false);
        expect(await store.stat('other')).toBeUndefined();
      });

      it('answers malformed ids as missing, and never reaches outside the store with them', async () => {
        const store = await fresh();
        for (const id of ['', '../there', 'a/b', '.', '..', 'x'.repeat(101), 'é', 'a b', 'nul\u0000']) {
          expect(await store.get(id)).toBeUndefined();
          expect(await store.stat(id)).toBeUndefined();
          expect(await store.delete(id)).toBe(false);
          expect(await store.move(id, 'target')).toBe(false);
        }
      });

      it('refuses to put under a malformed id with a StoreValueError, and cancels the stream', async () => {
        const store = await fresh();
        for (const id of ['', '../escape', 'x'.repeat(101), 'a.b']) {
          const { stream, state } = endlessStream();
          await expect(store.put(id, stream)).rejects.toBeInstanceOf(StoreValueError);
          expect(state.cancelled).toBe(true);
        }
        await store.put('ok', streamOf(patternBytes(3)));
        await expect(store.move('ok', '../escape')).rejects.toBeInstanceOf(StoreValueError);
        expect(sameBytes(await bytesOf(store, 'ok'), patternBytes(3))).toBe(true);
        await expectNoLeftovers(store);
      });

      it('accepts the longest id, and every character an id may have', async () => {
        const store = await fresh();
        const id = `${'x'.repeat(64)}AZaz09_-${'y'.repeat(28)}`;
        expect(id.length).toBe(100);
        await store.put(id, streamOf(patternBytes(3)));
        expect(sameBytes(await bytesOf(store, id), patternBytes(3))).toBe(true);
      });
    });

    describe('delete, move and sweep', () => {
      it('deletes a blob', async () => {
        const store = await fresh();
        await store.put('gone', streamOf(patternBytes(300_000)));
        await store.put('stays', streamOf(patternBytes(30)));
        expect(await store.delete('gone')).toBe(true);
        expect(await store.get('gone')).toBeUndefined();
        expect(await store.stat('gone')).toBeUndefined();
        expect(await store.delete('gone')).toBe(false);
        expect(sameBytes(await bytesOf(store, 'stays'), patternBytes(30))).toBe(true);
      });

      it('moves a blob to a new id, and over an existing one', async () => {
        const store = await fresh();
        const bytes = patternBytes(400_000, 4);
        await store.put('upload1', streamOf(bytes));
        await store.put('file1', streamOf(patternBytes(900_000, 5)));
        expect(await store.move('upload1', 'file1')).toBe(true);
        expect(await store.get('upload1')).toBeUndefined();
        expect(sameBytes(await bytesOf(store, 'file1'), bytes)).toBe(true);
        expect(await store.move('file1', 'file2')).toBe(true);
        expect(sameBytes(await bytesOf(store, 'file2'), bytes)).toBe(true);
        expect(await store.stat('file1')).toBeUndefined();
        expect(await store.move('file2', 'file2')).toBe(true);
        expect(sameBytes(await bytesOf(store, 'file2'), bytes)).toBe(true);
        expect(await store.move('upload1', 'file2')).toBe(false);
        expect(sameBytes(await bytesOf(store, 'file2'), bytes)).toBe(true);
      });

      it('sweeps blobs of a prefix stored before a time, and no others', async () => {
        const store = await fresh();
        for (const id of ['up-a', 'up-b', 'upper', 'file']) await store.put(id, streamOf(patternBytes(100)));
        expect(await store.sweep('up-', Date.now() - 60_000)).toBe(0);
        expect(await store.sweep('up-', Date.now() + 60_000)).toBe(2);
        expect(await store.stat('up-a')).toBeUndefined();
        expect(await store.stat('up-b')).toBeUndefined();
        expect(await store.stat('upper')).toMatchObject({ size: 100 });
        expect(await store.stat('file')).toMatchObject({ size: 100 });
      });
    });

    describe('size limit and failed writes', () => {
      it('accepts a blob of exactly maxBytes', async () => {
        const store = await fresh();
        expect(await store.put('fits', streamOf(patternBytes(1000)), { maxBytes: 1000 })).toMatchObject({ size: 1000 });
        expect(await store.put('nothing', streamOf(new Uint8Array(0)), { maxBytes: 0 })).toMatchObject({ size: 0 });
      });

      it('stops reading at maxBytes: BlobTooLargeError, the stream cancelled, nothing kept', async () => {
        const store = await fresh();
        const { stream, state } = endlessStream(1000);
        const error = await store.put('huge', stream, { maxBytes: 1_000_000 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(BlobTooLargeError);
        expect(error).toMatchObject({ maxBytes: 1_000_000, message: 'the file is larger than 1000000 bytes' });
        expect(state.cancelled).toBe(true);
        expect(state.given).toBeLessThanOrEqual(1_000_000 + 3 * 1000);
        await expect(store.put('over', streamOf(patternBytes(1001)), { maxBytes: 1000 })).rejects.toBeInstanceOf(BlobTooLargeError);
        expect(await store.stat('huge')).toBeUndefined();
        expect(await store.stat('over')).toBeUndefined();
        await expectNoLeftovers(store);
      });

      it('a stream that fails part way: put rejects with its error and keeps nothing; an older blob stays', async () => {
        const store = await fresh();
        const old = patternBytes(50_000, 8);
        await store.put('kept', streamOf(old));
        const gone = new Error('the client went away');
        await expect(store.put('kept', failingStream(patternBytes(1_500_000), gone))).rejects.toBe(gone);
        await expect(store.put('new', failingStream(patternBytes(1_500_000), gone))).rejects.toBe(gone);
        await expect(store.put('new', failingStream(new Uint8Array(0), gone))).rejects.toBe(gone);
        expect(sameBytes(await bytesOf(store, 'kept'), old)).toBe(true);
        expect(await store.stat('new')).toBeUndefined();
        await expectNoLeftovers(store);
      });

      it('an upload dropped while the store waits for more bytes: put rejects with the abort, keeps nothing', async () => {
        const store = await fresh();
        let source!: ReadableStreamDefaultController<Uint8Array>;
        let asked!: () => void;
        const waiting = new Promise<void>((resolve) => (asked = resolve));
        const stream = new ReadableStream<Uint8Array>({
          start: (controller) => void (source = controller),
          pull: () => asked(), // the store has taken what there was and asks for more
        });
        source.enqueue(patternBytes(700_000));
        const putting = store.put('stalled', stream);
        await waiting;
        const abort = new DOMException('The upload was dropped', 'AbortError');
        source.error(abort);
        await expect(putting).rejects.toBe(abort);
        expect(await store.stat('stalled')).toBeUndefined();
        await expectNoLeftovers(store);
      });
    });

    describe('concurrency', () => {
      it('concurrent puts under different ids all land', async () => {
        const store = await fresh();
        const ids = Array.from({ length: 12 }, (_, i) => `many${i}`);
        const written = await Promise.all(ids.map((id, i) => store.put(id, streamOf(patternBytes(100_000 + i * 7_919, i + 1), [10_000]))));
        for (const [i, id] of ids.entries()) {
          const bytes = patternBytes(100_000 + i * 7_919, i + 1);
          expect(written[i]).toEqual({ size: bytes.length, sha256: sha256Hex(bytes) });
          expect(sameBytes(await bytesOf(store, id), bytes)).toBe(true);
        }
        await expectNoLeftovers(store);
      });

      it('concurrent puts under one id leave exactly one of them, whole', async () => {
        const store = await fresh();
        const versions = Array.from({ length: 6 }, (_, i) => patternBytes(300_000 + i * 1_000, i + 20));
        await Promise.all(versions.map((bytes) => store.put('contested', streamOf(bytes, [16_384]))));
        const got = (await bytesOf(store, 'contested'))!;
        expect(versions.map(sha256Hex)).toContain(sha256Hex(got));
        expect((await store.stat('contested'))!.size).toBe(got.length);
        await expectNoLeftovers(store);
      });
    });

    if (harness.reopen) {
      const reopen = harness.reopen;
      it('keeps blobs across a restart', async () => {
        const store = await fresh();
        const bytes = patternBytes(1_200_000, 12);
        await store.put('durable', streamOf(bytes));
        await store.put('zero', streamOf(new Uint8Array(0)));
        const again = await reopened(store, reopen);
        expect(sameBytes(await bytesOf(again, 'durable'), bytes)).toBe(true);
        expect(await again.stat('zero')).toMatchObject({ size: 0 });
      });
    }
  });
}
