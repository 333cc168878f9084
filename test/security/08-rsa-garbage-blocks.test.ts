/**
 * Issue 12, finding 8: a secure login with 32 garbage RSA blocks was answered `310` while 31 more RSA
 * decryptions kept running (64 such logins delayed a normal login to 2.3 s). Decryption now stops at
 * the first block that fails, and each `310` counts against the client address in the failed-login
 * limit, which is checked before any RSA work. Issue 35: such a login still cost 3.3-3.9 RSA decryptions
 * of CPU, as the client key's import and the token's sealing ran beside the decryption; they now wait
 * for the credentials to open.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, demoService, expectError, type CallResult } from '../helpers.js';
import { nodeKeyPair, secureLoginBody, serverKeyPem } from '../secure/node-client.js';
import { overNode, type OverNode } from './over-node.js';

describe('secure login with garbage RSA blocks', () => {
  let node: OverNode;
  let serverKey: string;
  const client = nodeKeyPair();
  beforeAll(async () => {
    node = await overNode(await demoService({ loginLimit: { perUser: 5, perAddress: 20 } }));
    serverKey = await serverKeyPem(node.remote);
  });
  afterAll(() => node?.close());

  const garbage = () => ({ credentials: randomBytes(32 * 256).toString('base64'), publicKey: client.publicKey });
  const post = (json: unknown): Promise<CallResult> => call(node.remote, 'POST', '/v2/login/secure', { json });

  test('32 garbage blocks cost one RSA decryption and no other key work', async () => {
    // the Node adapter runs in this process, so its WebCrypto calls can be counted: before the
    // credentials open, the login neither imports the client's key nor seals a token (issue 35)
    const spies = (['decrypt', 'encrypt', 'importKey', 'sign', 'digest'] as const).map((name) => [name, vi.spyOn(crypto.subtle, name)] as const);
    try {
      expectError(await post(garbage()), '310', 401);
      const calls = spies.flatMap(([name, spy]) => spy.mock.calls.map(([algorithm]) => `${name} ${typeof algorithm === 'string' ? algorithm : (algorithm as { name?: string }).name}`));
      expect(calls).toEqual(['decrypt RSA-OAEP']);
    } finally {
      for (const [, spy] of spies) spy.mockRestore();
    }
  });

  test('every 310 counts against the address: after the limit, even a good login is 303 without any RSA work', async () => {
    for (let i = 0; i < 19; i++) expectError(await post(garbage()), '310', 401); // 20 with the test before
    const decrypt = vi.spyOn(crypto.subtle, 'decrypt');
    try {
      const good = secureLoginBody(serverKey, JSON.stringify({ user: 'alice', pass: 'x', appNames: ['crm'] }), client.publicKey);
      const answer = await post(good);
      expectError(answer, '303', 429);
      expect(decrypt).not.toHaveBeenCalled();
    } finally {
      decrypt.mockRestore();
    }
  });
});
