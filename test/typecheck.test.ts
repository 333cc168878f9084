/**
 * The whole repository type-checks (`npm run typecheck`: src, adapters, stores, tests, benches,
 * examples; the studio with its own settings), so that type-level tests (`expectTypeOf`, exhaustive `Record`s of a union) fail the suite
 * like any other assertion, and a change that breaks a public type is caught where it is made.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;

/** What `tsc --noEmit` prints for a project (nothing when it type-checks). */
async function typeErrors(project: string): Promise<string> {
  const result = await run(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '--noEmit', '-p', project], { cwd: root, maxBuffer: 16 * 1024 * 1024 }).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string; message: string }) => error.stdout || error.message,
  );
  return result.trim();
}

// both programs start at once (each is one process on one core); each test awaits its own
const checks = { root: typeErrors(root), studio: typeErrors(`${root}studio`) };

test('tsc --noEmit finds no errors', async () => {
  expect(await checks.root).toBe('');
}, 300_000);

test('the studio (studio/, TSX) type-checks with its own settings', async () => {
  expect(await checks.studio).toBe('');
}, 300_000);
