/**
 * The short soaks (docs/operations.md, "Soak under faults"), run as the guide prints them in a fresh
 * copy of the repository, one line of its block after the other: `npm run soak` for one minute, with
 * one fault of each kind, on a PostgreSQL and a Redis of its own, and the same with `--failover` on a
 * primary with a synchronous replica behind an endpoint, a Redis Cluster with replicas (issue 45) and
 * the file bytes in S3 storage that goes away and comes back (issue 51).
 * Each must exit 0 and its table must show nothing lost, stale, duplicated or invented, no event
 * missed, no 5xx but 503s with Retry-After, no request hung, and every fault injected and recovered.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { spawnLines } from './support/processes.js';
import { freshCopy, onlyBlock } from './support/readme.js';
import { requireOrSkip } from './support/servers.js';

const installed =
  (existsSync('/usr/lib/postgresql/15/bin/postgres') && spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0) ||
  requireOrSkip('the PostgreSQL 15 binaries (/usr/lib/postgresql/15/bin) or redis-server are not installed', 'the short soaks');

/** Rows of the table that must read 0. */
const ZEROS = ['lost', 'stale', 'duplicated', 'phantom', 'events missed', 'events out of order', '5xx', '503 without Retry-After', '503 outside an outage', 'unanswered outside a kill', 'sessions lost', 'other errors', 'faults not recovered', 'faults not injected', 'hung', 'other violations'];
/** The faults of each mode: the failover topology's Redis is a cluster whose master fails over instead of a restart. */
const FAULTS = ['PostgreSQL restarted', 'Redis restarted', 'instance SIGKILLed', 'LISTEN connections ended', 'blob disk full'];
/** With `--failover` the file bytes are in S3 storage (s3rver), which goes away instead of the blob disk filling up. */
const FAILOVER_FAULTS = ['PostgreSQL restarted', 'PostgreSQL failed over', 'Redis master failed over', 'instance SIGKILLed', 'LISTEN connections ended', 'object storage unavailable'];

const lines = onlyBlock('soak').code.trim().split('\n');

describe.runIf(installed)('the one-minute soaks of docs/operations.md', () => {
  it('are the plain soak and the failover soak', () => {
    expect(lines).toEqual(['SOAK_MINUTES=1 npm run soak', 'SOAK_MINUTES=1 npm run soak -- --failover']);
  });

  it.each(lines)('%s exits 0 with zeros in its table and every kind of fault injected once', { timeout: 300_000 }, async (line) => {
    const copy = freshCopy();
    // its own process group: should the test end first, everything the soak started ends with it
    const soak = spawnLines('sh', ['-c', line], {}, { cwd: copy.dir, detached: true });
    try {
      const code = await soak.exited;
      const output = soak.lines.join('\n');
      if (code !== 0) console.log(output); // the table and the first violations
      expect(code, output).toBe(0);
      for (const row of ZEROS) expect(output, row).toMatch(new RegExp(`^${row} +0 `, 'm'));
      expect(output).toMatch(/^violations: 0$/m);
      // the blob disk fills only where this user may mount a tmpfs (root); the table says which
      const tmpfs = /blob folder on tmpfs/.test(output);
      for (const fault of line.includes('--failover') ? FAILOVER_FAULTS : FAULTS) {
        expect(output, fault).toMatch(new RegExp(`^${fault} +${fault === 'blob disk full' && !tmpfs ? 0 : 1} `, 'm'));
      }
    } finally {
      await soak.stop('SIGTERM');
      copy.remove();
    }
  });
});
