/**
 * Issue 50, item 6: one process per file store and per blob folder. `odbrest user add` while
 * `odbrest serve` runs on the same `file:` store is refused, naming the server's pid and what to do,
 * and writes nothing; so is a second server on the same blob folder; a server killed with SIGKILL
 * leaves a lock that the next process takes over. All of them real processes of the built CLI.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { call, loginBody, USERS } from './helpers.js';
import { remoteService, spawnLines, type LineProcess } from './support/processes.js';

const cli = join(new URL('..', import.meta.url).pathname, 'dist/cli.js');

function runCli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [cli, ...args], { cwd, env: { ...process.env, ODBREST_STORE: '', ODBREST_KV: '', ODBREST_BLOBS: '' }, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end('');
  });
}

const running: LineProcess[] = [];
afterAll(() => Promise.all(running.map((child) => child.stop())));

async function serve(cwd: string): Promise<{ child: LineProcess; url: string }> {
  const child = spawnLines(process.execPath, [cli, 'serve', '--port', '0', '--host', '127.0.0.1'], { ODBREST_STORE: '', ODBREST_KV: '', ODBREST_BLOBS: '' }, { cwd });
  running.push(child);
  const line = await child.waitFor((text) => text.startsWith('odbrest listening on '));
  return { child, url: line.slice('odbrest listening on '.length) };
}

const seed = JSON.stringify({ objects: [{ '~ClassName': 'User', '~ObjectID': 'USR00001', Name: 'alice', _password: USERS.alice, _licences: ['crm'] }] });

describe('one process per file store (issue 50, item 6)', () => {
  test('a second process is refused, naming the holder, and writes nothing; a killed holder’s lock is taken over', { timeout: 90_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'odbrest-lock-'));
    writeFileSync(join(dir, 'api-config.yml'), 'store: file:./data\ndataFile: ./data.json\nusers: { passwordIterations: 1000 }\nfiles: { blobs: file:./blobs }\n');
    writeFileSync(join(dir, 'data.json'), seed);
    const { child, url } = await serve(dir);
    const pid = child.child.pid!;
    const service = remoteService(url) as never;
    const loginCode = async (name: string, password: string) => (await call(service, 'POST', '/v1/login', { json: loginBody(name as never, password), headers: { appkey: 'x' } })).body.status.internalStatus as string;
    expect(await loginCode('alice', USERS.alice)).toBe('0');

    const journal = () => readFileSync(join(dir, 'data', 'objects.journal'));
    const files = () => readdirSync(join(dir, 'data')).sort();
    const [bytesBefore, filesBefore] = [journal(), files()];
    const refused = await runCli(['user', 'add', 'ann', '--licences', 'crm', '--password', 'ann long secret'], dir);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(`is in use by process ${pid} on `);
    expect(refused.stderr).toContain('Stop that process first, or make the change through the running server\'s HTTP routes (users: POST /v1/user)');
    expect([journal().equals(bytesBefore), files()]).toEqual([true, filesBefore]);
    expect(filesBefore).toEqual(['objects.journal', 'objects.journal.lock']);
    expect(await loginCode('ann', 'ann long secret')).toBe('302'); // nobody has ann, the server least of all

    // the blob folder too: a second server with its own (memory) object store and the first one's blobs
    const other = mkdtempSync(join(tmpdir(), 'odbrest-lock-'));
    writeFileSync(join(other, 'api-config.yml'), `files: { blobs: "file:${join(dir, 'blobs')}" }\n`);
    const second = await runCli(['serve', '--port', '0', '--host', '127.0.0.1'], other);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`the blob folder ${join(dir, 'blobs')} is in use by process ${pid} on `);

    // a holder that crashed leaves its lock file behind; its pid is gone, so the next process takes over
    child.child.kill('SIGKILL');
    await child.exited;
    expect(files()).toEqual(['objects.journal', 'objects.journal.lock']);
    const added = await runCli(['user', 'add', 'ann', '--licences', 'crm', '--password', 'ann long secret'], dir);
    expect(added).toMatchObject({ code: 0, stdout: expect.stringMatching(/^created user ann/) });
    expect(files()).toEqual(['objects.journal']); // released at the end
    const again = await serve(dir);
    const restarted = remoteService(again.url) as never;
    expect((await call(restarted, 'POST', '/v1/login', { json: loginBody('ann' as never, 'ann long secret'), headers: { appkey: 'x' } })).body.status.internalStatus).toBe('0');
    await again.child.stop();
    expect([files(), readdirSync(join(dir, 'blobs'))]).toEqual([['objects.journal'], []]); // SIGTERM: the server released both
  });
});
