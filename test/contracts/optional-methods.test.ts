/**
 * The published contract suite (odbrest/testing) on a store with only the six required methods (issue
 * 44 item 6): a case that needs an optional method it lacks is reported skipped, naming the method and
 * what the service loses without it, never passed; and where an answer of the service depends on one
 * (GET /v1/classes needs classNames or classCounts), the case fails.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;

interface Assertion {
  title: string;
  status: 'passed' | 'failed' | 'skipped' | 'pending' | 'todo';
  failureMessages: string[];
}

test('a store without the optional methods: their cases skipped, the classes case failed', async () => {
  const fixture = join(root, 'test/fixtures/minimal-store');
  const { stdout } = await run(process.execPath, [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--root', fixture, '--reporter=json'], { cwd: fixture, maxBuffer: 64 << 20 }).catch(
    (error: { stdout: string }) => ({ stdout: error.stdout }), // a failed case is exit 1
  );
  const report = JSON.parse(stdout) as { testResults: Array<{ assertionResults: Assertion[] }> };
  const cases = report.testResults.flatMap((file) => file.assertionResults);
  const status = (part: string) => cases.filter((each) => each.title.includes(part)).map((each) => each.status);
  expect(status('classCounts answers')).toEqual(['skipped']);
  expect(status('referencing ')).toEqual(['skipped', 'skipped', 'skipped']);
  expect(status('classNames lists exactly')).toEqual(['skipped']);
  expect(cases.filter((each) => /putMany|bulk/.test(each.title) && each.status !== 'skipped').map((each) => each.title)).toEqual([]);
  const classes = cases.find((each) => each.title.startsWith('the service finds every class'))!;
  expect(classes.status).toBe('failed');
  expect(classes.failureMessages.join('\n')).toContain('GET /v1/classes, the studio and referencedBy miss these classes');
  // everything else holds for such a store
  expect(cases.filter((each) => each.status === 'failed').map((each) => each.title)).toEqual([classes.title]);
  expect(cases.filter((each) => each.status === 'passed').length).toBeGreaterThan(60);
}, 120_000);
