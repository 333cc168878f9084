/**
 * The README's two walkthroughs with background processes, each pasted whole into bash in a fresh
 * copy of the repository (test/support/readme.ts), in its own process group ended afterwards: the
 * external login against a local provider (oauth2-mock-server and `odbrest serve` on the
 * walkthrough's api-config.yml) and two instances sharing Redis and PostgreSQL. Each must exit 0,
 * print the envelopes its `# {...}` comments show (in order; `...` is anything), stop what it started
 * and, for the external login, remove the files it wrote.
 */
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { blockEnv, envelopes, freshCopy, gitStatus, onlyBlock, portMap, promisedEnvelopes, startBlock } from './support/readme.js';
import { serverAvailable } from './support/servers.js';

const statusBefore = gitStatus();
const copies: Array<ReturnType<typeof freshCopy>> = [];

afterAll(() => {
  for (const each of copies) each.remove();
  expect(gitStatus()).toBe(statusBefore); // everything ran in the copies
});

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

/** Runs a walkthrough as printed (ports substituted) and checks its output and that it stopped its servers. */
async function walkthrough(name: string, servers: number[]): Promise<string> {
  const block = onlyBlock(name);
  const { dir } = copies.at(copies.push(freshCopy()) - 1)!;
  const { ports, apply } = await portMap();
  const started = startBlock(apply(block.code), dir, blockEnv());
  try {
    expect(await started.finished(90_000), `${started.lines.join('\n')}\nstderr: ${started.stderr()}`).toBe(0);
    const output = started.lines.join('\n');
    const got = envelopes(output);
    const promised = promisedEnvelopes(block.code);
    expect(promised.length).toBeGreaterThan(0);
    expect(got, output).toHaveLength(promised.length);
    promised.forEach((pattern, i) => expect(got[i]).toMatch(pattern));
    // the block's own `kill` stops the servers it started
    for (const printed of servers) {
      let stillListening = true;
      for (let waited = 0; waited < 10_000 && stillListening; waited += 200) {
        stillListening = await listening(ports[printed]!);
        if (stillListening) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(stillListening, `port ${printed} (${ports[printed]}) still listens after the block`).toBe(false);
    }
  } finally {
    await started.end();
  }
  return dir;
}

test.concurrent('external login against a local provider: the walkthrough as printed', async () => {
  const dir = await walkthrough('external login', [8080, 8081]);
  for (const file of ['api-config.yml', 'oauth-data.json']) expect(existsSync(join(dir, file)), file).toBe(false);
}, 120_000);

const hasServers = (await serverAvailable('Redis', "the README's several-instances walkthrough")) && (await serverAvailable('PostgreSQL', "the README's several-instances walkthrough"));

test.skipIf(!hasServers).concurrent('several instances sharing Redis and PostgreSQL: the walkthrough as printed', async () => {
  await walkthrough('several instances', [8081, 8082]);
}, 120_000);
