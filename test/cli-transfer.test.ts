/**
 * `odbrest export` and `odbrest import` (issue 29) as an operator runs them: the built CLI, configured
 * by api-config.yml files. A file store with many objects and a 100 MB file goes to PostgreSQL and
 * back out identically, in bounded memory; a broken export is refused with its line number and the
 * target left as it was; an import that stopped half-way resumes; objects the target's class
 * declarations refuse (one made at run time included) are refused the same way.
 */
import { execFile, spawn } from 'node:child_process';
import { appendFileSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { importObjects } from '../src/index.js';
import { FileObjectStore } from '../stores/file-store.js';
import { call, demoData, demoService, login } from './helpers.js';
import { DATABASE_URL, dropSchema, RUN_ID, serverAvailable } from './support/servers.js';

const root = new URL('..', import.meta.url).pathname;
const cli = join(root, 'dist/cli.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** The child's peak resident memory (VmHWM), in MiB. */
  peakMiB: number;
  /** Wall-clock seconds it ran. */
  seconds: number;
}

/** Runs the CLI to its end, sampling its peak memory from /proc. */
function runCli(args: string[], cwd: string): Promise<Run> {
  const start = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peakKiB = 0;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const sample = setInterval(() => {
      try {
        const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (hwm) peakKiB = Math.max(peakKiB, Number(hwm[1]));
      } catch {
        // exited between samples
      }
    }, 20);
    child.on('exit', (code) => {
      clearInterval(sample);
      resolve({ code: code ?? 1, stdout, stderr, peakMiB: Math.round(peakKiB / 1024), seconds: Math.round((performance.now() - start) / 100) / 10 });
    });
  });
}

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-transfer-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const fileConfig = (dir: string) => dirWith({ 'api-config.yml': `store: file:${join(dir, 'objects')}\nfiles: { blobs: file:${join(dir, 'blobs')} }\n` });

/** Fills a file store and a blob folder through the package's public entry points, as a host's script would. */
async function fillSource(dir: string, count: number, fileBytes: number): Promise<void> {
  const script = `
    import { FileObjectStore, FolderBlobStore } from ${JSON.stringify(join(root, 'dist/file-store.js'))};
    import { mkdirSync } from 'node:fs';
    mkdirSync(${JSON.stringify(join(dir, 'objects'))}, { recursive: true });
    const store = await FileObjectStore.open({ path: ${JSON.stringify(join(dir, 'objects', 'objects.journal'))} });
    const blobs = new FolderBlobStore({ path: ${JSON.stringify(join(dir, 'blobs'))} });
    const manager = await store.put({ id: 'EMP00001', className: 'Employee', fields: { Name: 'Boss', _secret: 'kept' } });
    let bytes = ${fileBytes};
    const chunk = new Uint8Array(1 << 20).map((_, i) => (i * 31) & 255);
    const written = await blobs.put('DOC00001', new ReadableStream({ pull(c) { if (bytes <= 0) return c.close(); const n = Math.min(bytes, chunk.length); bytes -= n; c.enqueue(chunk.slice(0, n)); } }));
    await store.put({ id: 'DOC00001', className: 'Document', fields: { Name: 'big.bin', Size: written.size, ContentType: 'application/octet-stream', Sha256: written.sha256 } });
    const batch = [];
    for (let i = 0; i < ${count}; i++) {
      batch.push(store.put({ className: 'Customer', fields: { Name: 'Customer ' + i, Revenue: i * 7, Manager: { $ref: manager.id }, Files: { $set: ['DOC00001'] }, Note: 'ü😀' } }));
      if (batch.length === 1000) await Promise.all(batch.splice(0));
    }
    await Promise.all(batch);
    await store.close();
  `;
  const file = join(dir, 'fill.mjs');
  writeFileSync(file, script);
  await new Promise<void>((resolve, reject) => execFile(process.execPath, [file], { maxBuffer: 1 << 20 }, (error) => (error ? reject(error) : resolve())));
}

const pgAvailable = await serverAvailable('PostgreSQL', 'odbrest export and import through PostgreSQL');

/**
 * The full size: 100,000 objects (about a minute in all on a loaded 2-core machine, the import
 * 25 s, since it writes PostgreSQL 500 rows per statement; one statement per object took 545 s).
 * ODBREST_TRANSFER_OBJECTS=N runs another size.
 */
const COUNT = Number(process.env.ODBREST_TRANSFER_OBJECTS ?? 100_000);

describe.runIf(pgAvailable)(`${COUNT} objects and a 100 MB file: file store -> PostgreSQL -> export again`, () => {
  const schema = `transfer_${RUN_ID}`;
  afterAll(() => dropSchema(schema));

  test('the second export is byte for byte the first (ids, store times, references, _ fields, bytes), in bounded memory', { timeout: 600_000 }, async () => {
    const source = mkdtempSync(join(tmpdir(), 'odbrest-transfer-'));
    await fillSource(source, COUNT, 100 * 1024 * 1024);
    const out1 = join(source, 'export-1');
    const out2 = join(source, 'export-2');
    const exported = await runCli(['export', '--out', out1, '--config', join(fileConfig(source), 'api-config.yml')], source);
    // not a terminal: one progress line per tenth of the objects
    expect(exported.stderr.split('\n').filter(Boolean).map((line) => line.replace(/ \(.*\)$/, ''))).toEqual(Array.from({ length: 10 }, (_, i) => `export: ${(i + 1) * 10}%`));
    expect(exported.stdout.trim()).toBe(`exported ${COUNT + 2} objects and 1 files to ${out1}`);

    const pg = dirWith({ 'api-config.yml': `store: { url: "${DATABASE_URL}", schema: ${schema}, table: objects }\nfiles: { blobs: { url: "${DATABASE_URL}", schema: ${schema}, table: blobs } }\n` });
    const imported = await runCli(['import', '--from', out1, '--config', join(pg, 'api-config.yml')], pg);
    expect(imported.stderr.split('\n').filter(Boolean).map((line) => line.replace(/ \(.*\)$/, ''))).toEqual(Array.from({ length: 10 }, (_, i) => `import: ${(i + 1) * 10}%`));
    expect(imported.stdout.trim()).toBe(`imported ${COUNT + 2} objects and 1 files from ${out1}`);
    const again = await runCli(['export', '--out', out2, '--config', join(pg, 'api-config.yml')], pg);
    expect(again.stdout.trim()).toBe(`exported ${COUNT + 2} objects and 1 files to ${out2}`);

    const [first, second] = await Promise.all([readFile(join(out1, 'odbrest-export.jsonl')), readFile(join(out2, 'odbrest-export.jsonl'))]);
    expect(second.equals(first)).toBe(true);
    expect(first.toString('utf8')).toContain('"_secret":"kept"');
    const [bytes1, bytes2] = await Promise.all([readFile(join(out1, 'files', 'DOC00001')), readFile(join(out2, 'files', 'DOC00001'))]);
    expect(bytes1.length).toBe(100 * 1024 * 1024);
    expect(bytes2.equals(bytes1)).toBe(true);

    // the import streams: its memory is far below the 100 MB file, and the page-at-a-time export from PostgreSQL too
    const figures = (run: Run) => `${run.seconds} s, peak RSS ${run.peakMiB} MiB`;
    console.log(`${COUNT} objects: export from the file store ${figures(exported)}; import into PostgreSQL ${figures(imported)}; export from PostgreSQL ${figures(again)}`);
    expect(imported.peakMiB).toBeLessThan(200);
    expect(again.peakMiB).toBeLessThan(200);
  });
});

describe('a broken export is refused with its line number, the target unchanged', () => {
  /** A small valid export, written by the CLI from a file store. */
  async function smallExport(): Promise<string> {
    const source = mkdtempSync(join(tmpdir(), 'odbrest-transfer-'));
    await fillSource(source, 3, 10);
    const out = join(source, 'export');
    const run = await runCli(['export', '--out', out, '--config', join(fileConfig(source), 'api-config.yml')], source);
    expect(run.code).toBe(0);
    return out;
  }
  const lines = (out: string) => readFileSync(join(out, 'odbrest-export.jsonl'), 'utf8').split('\n').filter(Boolean);
  /** The lines without the one containing `text`, the trailer's count following. */
  const withoutLine = (all: string[], text: string) => {
    const kept = all.filter((line) => !line.includes(text));
    const end = JSON.parse(kept.pop()!) as { objects: number };
    return [...kept, JSON.stringify({ ...end, objects: end.objects - 1 })];
  };
  const rewrite = (out: string, all: string[]) => writeFileSync(join(out, 'odbrest-export.jsonl'), `${all.join('\n')}\n`);

  /** Imports into a fresh file store; answers the run and the classes the target then holds. */
  async function importInto(out: string): Promise<{ run: Run; classes: string[]; target: string }> {
    const target = mkdtempSync(join(tmpdir(), 'odbrest-target-'));
    const run = await runCli(['import', '--from', out, '--config', join(fileConfig(target), 'api-config.yml')], target);
    const check = await runCli(['export', '--out', join(target, 'check'), '--config', join(fileConfig(target), 'api-config.yml')], target);
    const classes = [...new Set(lines(join(target, 'check')).slice(1, -1).map((line) => JSON.parse(line).className as string))];
    expect(check.code).toBe(0);
    return { run, classes, target };
  }

  test.each([
    ['truncated in the middle of a line', (out: string) => truncateSync(join(out, 'odbrest-export.jsonl'), statSync(join(out, 'odbrest-export.jsonl')).size - 7), /^odbrest: line 7: is cut off: the export is truncated/],
    ['without its last line', (out: string) => rewrite(out, lines(out).slice(0, -1)), /^odbrest: the export is truncated: its last line is missing/],
    ['with a duplicate id', (out: string) => { const all = lines(out); rewrite(out, [...all.slice(0, 4), all[2]!, ...all.slice(4)]); }, /^odbrest: line 5: object \w+ is already on line 3/],
    ['referencing a missing object', (out: string) => rewrite(out, withoutLine(lines(out), '"EMP00001","className"')), /^odbrest: line \d: references EMP00001, which is neither in the export nor in the target/],
    ['with bytes missing', (out: string) => writeFileSync(join(out, 'files', 'DOC00001'), 'short'), /^odbrest: line \d: the bytes of file DOC00001 \(files\/DOC00001\) are 5 bytes, not 10/],
    ['with a line that is not JSON', (out: string) => { const all = lines(out); all[3] = '{"id":'; rewrite(out, all); }, /^odbrest: line 4: is not JSON/],
    ['with a store time that is not whole seconds', (out: string) => { const all = lines(out); all[2] = all[2]!.replace(/"storeTime":(\d+)/, '"storeTime":$1.5'); rewrite(out, all); }, /^odbrest: line 3: storeTime must be epoch milliseconds in whole seconds/],
  ])('%s', { timeout: 60_000 }, async (_, breakIt, message) => {
    const out = await smallExport();
    breakIt(out);
    const { run, classes } = await importInto(out);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(classes).toEqual([]);
  });

  /** Declares Customer at run time in the file store of `target`, through the model route as an admin does it; answers the HTTP status. */
  async function declareCustomer(target: string, maxRevenue: number): Promise<number> {
    const store = await FileObjectStore.open({ path: join(target, 'objects', 'objects.journal') });
    try {
      const service = await demoService({ store, data: undefined, users: { admins: 'admins' } });
      const json = { Fields: { Name: { Type: 'string', Required: true }, Revenue: { Type: 'integer', Max: maxRevenue } } };
      return (await call(service, 'PUT', '/v1/model/classes/Customer', { headers: { sessionId: await login(service, 'alice') }, json })).status;
    } finally {
      await store.close();
    }
  }

  test('an object a run-time declaration of the target refuses (PROTOCOL.md 6.12) is refused with its line, nothing written', { timeout: 60_000 }, async () => {
    const out = await smallExport(); // customers with Revenue 0, 7 and 14
    const target = mkdtempSync(join(tmpdir(), 'odbrest-target-'));
    mkdirSync(join(target, 'objects'));
    const users = await FileObjectStore.open({ path: join(target, 'objects', 'objects.journal') });
    await importObjects(users, { objects: demoData().objects.filter((object) => ['User', 'UserGroup'].includes(object['~ClassName'])) }, 1000);
    await users.close();
    expect(await declareCustomer(target, 10)).toBe(200);
    const config = join(fileConfig(target), 'api-config.yml');
    const classesOf = async () => {
      const check = mkdtempSync(join(target, 'check-'));
      expect((await runCli(['export', '--out', check, '--config', config], target)).code).toBe(0);
      return [...new Set(lines(check).slice(1, -1).map((line) => JSON.parse(line).className as string))].sort();
    };
    const before = await classesOf();
    expect(before).toEqual(['ModelClass', 'User', 'UserGroup']);

    const refused = await runCli(['import', '--from', out, '--config', config], target);
    expect(refused.code).toBe(1);
    const line = lines(out).findIndex((text) => text.includes('"Revenue":14')) + 1;
    expect(refused.stderr).toMatch(new RegExp(`^odbrest: line ${line}: field Revenue of Customer must be an integer of at most 10`));
    expect(await classesOf()).toEqual(before); // nothing written, not even the lines before it
    const summary = await runCli(['import', '--from', out, '--config', config, '--json'], target);
    expect(summary.code).toBe(1);
    expect(JSON.parse(summary.stdout)).toMatchObject({ written: 0, refused: { line, message: expect.stringContaining('field Revenue of Customer') } });

    // under a declaration every object satisfies, the same export goes in
    expect(await declareCustomer(target, 100)).toBe(200);
    const taken = await runCli(['import', '--from', out, '--config', config], target);
    expect(taken.stdout.trim()).toBe(`imported 5 objects and 1 files from ${out}`);
  });

  test('a line of 100 MB is refused before it is held whole', { timeout: 120_000 }, async () => {
    const out = await smallExport();
    const all = lines(out);
    rewrite(out, all.slice(0, 2));
    const file = createWriteStream(join(out, 'odbrest-export.jsonl'), { flags: 'a' });
    const piece = `{"id":"HUGE0001","className":"Blob","storeTime":0,"fields":{"v":"${'x'.repeat(1 << 20)}`;
    for (let i = 0; i < 100; i++) file.write(i === 0 ? piece : 'x'.repeat(1 << 20));
    await new Promise<void>((resolve) => file.end('"}}\n', () => resolve()));
    appendFileSync(join(out, 'odbrest-export.jsonl'), `${all.slice(2).join('\n')}\n`);
    const { run, classes } = await importInto(out);
    expect(run.stderr).toMatch(/^odbrest: line 3: is longer than 16777216 bytes/);
    expect(run.peakMiB).toBeLessThan(150);
    expect(classes).toEqual([]);
  });

  test('run again after a stop half-way, the import resumes; another version of an object is refused', { timeout: 60_000 }, async () => {
    const out = await smallExport();
    // a stop half-way leaves some objects written: the first import with every Customer line but one
    const all = lines(out);
    const customers = all.filter((line) => line.includes('"className":"Customer"'));
    const partial = mkdtempSync(join(tmpdir(), 'odbrest-transfer-'));
    const kept = all.filter((line) => line !== customers[2]);
    writeFileSync(join(partial, 'odbrest-export.jsonl'), `${kept.slice(0, -1).join('\n')}\n${JSON.stringify({ end: 'odbrest-export', objects: kept.length - 2, files: 1 })}\n`);
    const { copyFileSync } = await import('node:fs');
    mkdirSync(join(partial, 'files'));
    copyFileSync(join(out, 'files', 'DOC00001'), join(partial, 'files', 'DOC00001'));
    const { target } = await importInto(partial);
    const config = join(fileConfig(target), 'api-config.yml');
    const resumed = await runCli(['import', '--from', out, '--config', config], target);
    expect(resumed.stdout.trim()).toBe(`imported 1 objects and 0 files from ${out} (${kept.length - 2} were already there)`);
    const changed = mkdtempSync(join(tmpdir(), 'odbrest-transfer-'));
    mkdirSync(join(changed, 'files'));
    copyFileSync(join(out, 'files', 'DOC00001'), join(changed, 'files', 'DOC00001'));
    writeFileSync(join(changed, 'odbrest-export.jsonl'), `${all.map((line) => line.replace('"Customer 1"', '"Customer one"')).join('\n')}\n`);
    const refused = await runCli(['import', '--from', changed, '--config', config], target);
    expect(refused.stderr).toMatch(/^odbrest: line \d: the target already holds object \w+ in another version/);
  });
});

describe('progress and --json of export and import (a file store)', () => {
  /** A source of 1 employee, 1 document (10 bytes of file) and 198 customers, and its config. */
  async function source(): Promise<{ dir: string; config: string }> {
    const dir = mkdtempSync(join(tmpdir(), 'odbrest-transfer-'));
    await fillSource(dir, 198, 10);
    return { dir, config: join(fileConfig(dir), 'api-config.yml') };
  }

  test('to a pipe: one line per 10% with objects, bytes, rate and time left; the result on standard output', { timeout: 60_000 }, async () => {
    const { dir, config } = await source();
    const run = await runCli(['export', '--out', join(dir, 'out'), '--config', config], dir);
    expect(run.stdout).toBe(`exported 200 objects and 1 files to ${join(dir, 'out')}\n`);
    const progress = run.stderr.split('\n').filter(Boolean);
    expect(progress).toHaveLength(10);
    expect(progress[4]).toMatch(/^export: 50% \(100\/200 objects, [\d.]+ KB, [\d,]+ objects\/s, (\d+s|\?) left\)$/);
    expect(progress[9]).toMatch(/^export: 100% \(200\/200 objects, [\d.]+ KB, [\d,]+ objects\/s, done\)$/);
  });

  test('--json: no progress, one summary line (counts, bytes, seconds); a refused import is a summary too, exit 1', { timeout: 60_000 }, async () => {
    const { dir, config } = await source();
    const out = join(dir, 'out');
    const exported = await runCli(['export', '--out', out, '--config', config, '--json'], dir);
    expect([exported.code, exported.stderr]).toEqual([0, '']);
    const bytes = statSync(join(out, 'odbrest-export.jsonl')).size - readFileSync(join(out, 'odbrest-export.jsonl'), 'utf8').split('\n')[0]!.length - 1 - readFileSync(join(out, 'odbrest-export.jsonl'), 'utf8').trim().split('\n').at(-1)!.length - 1 + 10;
    expect(JSON.parse(exported.stdout)).toEqual({ objects: 200, files: 1, bytes, seconds: expect.any(Number) });
    const target = mkdtempSync(join(tmpdir(), 'odbrest-target-'));
    const targetConfig = join(fileConfig(target), 'api-config.yml');
    const imported = await runCli(['import', '--from', out, '--config', targetConfig, '--json'], target);
    expect([imported.code, imported.stderr]).toEqual([0, '']);
    expect(JSON.parse(imported.stdout)).toEqual({ objects: 200, written: 200, skipped: 0, files: 1, bytes, refused: null, seconds: expect.any(Number) });
    appendFileSync(join(out, 'odbrest-export.jsonl'), '{"extra":1}\n');
    const refused = await runCli(['import', '--from', out, '--config', targetConfig, '--json'], target);
    expect([refused.code, refused.stderr]).toEqual([1, '']);
    expect(JSON.parse(refused.stdout)).toEqual({ objects: 0, written: 0, skipped: 0, files: 0, bytes: 0, refused: { line: 203, message: "line 203: follows the export's last line" }, seconds: expect.any(Number) });
  });

  test('on a terminal: a bar redrawn in place, ending at 100%', { timeout: 60_000 }, async () => {
    const { dir, config } = await source();
    // script(1) gives the CLI a pseudo-terminal (of no width: the bar takes 120 columns); its output is the terminal's
    const command = [process.execPath, cli, 'export', '--out', join(dir, 'out'), '--config', config].map((word) => `'${word}'`).join(' ');
    const text = await new Promise<string>((resolve, reject) => execFile('script', ['-qec', command, '/dev/null'], { cwd: dir, timeout: 30_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout))));
    const frames = text.split('\r').filter((frame) => frame.startsWith('export ['));
    expect(frames.length).toBeGreaterThanOrEqual(1);
    expect(frames.at(-1)).toMatch(/^export \[#{20}\] 100% 200\/200 objects, [\d.]+ KB, [\d,]+ objects\/s, done\x1b\[K$/);
    expect(text).toContain(`exported 200 objects and 1 files to ${join(dir, 'out')}`);
  });
});
