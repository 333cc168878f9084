/**
 * Issue 12, finding 9: a secure-login client could not pin the server's key, so whoever answered
 * `GET /v2/login/secure/key` with a key of their own read `user` and `pass`. With `serverKey` (the
 * public key's PEM or its SHA-256 fingerprint) the client refuses any other key before it sends
 * anything. Runs the demo (`examples/node/server.mjs`) with a configured key, behind an on-path proxy,
 * and the README's example.
 */
import { execFileSync } from 'node:child_process';
import { createHash, constants, generateKeyPairSync, privateDecrypt } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, OdbRestProtocolError } from 'odbrest/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ROOT } from '../adapters/servers.js';
import { USERS } from '../helpers.js';
import { spawnLines, type LineProcess } from '../support/processes.js';
import { codeBlocks, readmeSection } from '../support/readme.js';
import { onPath, type OnPath } from './on-path.js';

const alice = { user: 'alice', password: USERS.alice, appNames: ['crm'] };
const REFUSED = 'secure login refused: the server key is not the pinned serverKey; the credentials were not sent';

let keys: string;
let demo: LineProcess;
let origin: string;
let attacker: OnPath;
/** The server's public key PEM and the SHA-256 of its DER. */
let serverPem: string;
let fingerprint: Buffer;

beforeAll(async () => {
  keys = mkdtempSync(join(tmpdir(), 'odbrest-pin-'));
  execFileSync(process.execPath, [`${ROOT}dist/cli.js`, 'keygen', '--bits', '2048', '--out', keys]);
  serverPem = readFileSync(join(keys, 'server-key.pub.pem'), 'utf8');
  fingerprint = createHash('sha256').update(Buffer.from(serverPem.replace(/-----[^-]+-----|\s/g, ''), 'base64')).digest();
  demo = spawnLines(
    process.execPath,
    ['examples/node/server.mjs'],
    { PORT: '0', ODBREST_SERVER_KEY_FILE: join(keys, 'server-key.pem'), ODBREST_PASSWORD_ITERATIONS: '1000' },
    { cwd: ROOT },
  );
  const line = await demo.waitFor((text) => text.includes('listening on'));
  origin = /(http:\/\/localhost:\d+)/.exec(line)![1]!;
  attacker = await onPath(origin);
});
afterAll(async () => {
  await attacker?.close();
  await demo?.stop();
});

/** The attacker answers the key request with its own key and keeps what the login sends. */
function swapKey(): { stolen: () => string | undefined } {
  const own = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let sealed: string | undefined;
  attacker.seen.length = 0;
  attacker.intercept(({ method, path, body }) => {
    if (method === 'GET' && path.endsWith('/v2/login/secure/key')) {
      const key = own.publicKey.export({ type: 'spki', format: 'pem' });
      return Response.json({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { key } });
    }
    if (path.endsWith('/v2/login/secure')) sealed = JSON.parse(body.toString('utf8')).credentials;
    return undefined;
  });
  return {
    stolen() {
      if (sealed === undefined) return undefined;
      const bytes = Buffer.from(sealed, 'base64');
      const blocks = Array.from({ length: bytes.length / 256 }, (_, i) =>
        privateDecrypt({ key: own.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, bytes.subarray(i * 256, (i + 1) * 256)),
      );
      return Buffer.concat(blocks).toString('utf8');
    },
  };
}

const through = (serverKey?: string | string[]) => createClient({ baseUrl: attacker.origin, appKey: 'demo', ...(serverKey === undefined ? {} : { serverKey }) });

test('unpinned, a swapped key gives the attacker the credentials (the attack)', async () => {
  const attack = swapKey();
  await through().loginSecure(alice).catch(() => undefined);
  expect(JSON.parse(attack.stolen()!)).toMatchObject({ user: 'alice' });
});

test.each([
  ['the PEM', () => serverPem],
  ['the hex fingerprint', () => fingerprint.toString('hex')],
  ['the fingerprint with colons, upper case, after sha256:', () => `sha256:${fingerprint.toString('hex').toUpperCase().match(/../g)!.join(':')}`],
  ['the base64 fingerprint', () => fingerprint.toString('base64')],
  ['a list holding it', () => [`sha256:${'00'.repeat(32)}`, fingerprint.toString('base64url')]],
])('pinned by %s: a swapped key is refused before anything is sent; the real one logs in', async (_name, pin) => {
  const attack = swapKey();
  const failure = await through(pin()).loginSecure(alice).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(OdbRestProtocolError);
  expect((failure as Error).message).toBe(REFUSED);
  expect(attack.stolen()).toBeUndefined();
  expect(attacker.seen.some(({ path }) => path.endsWith('/v2/login/secure'))).toBe(false);

  attacker.intercept(undefined);
  const client = through(pin());
  await client.loginSecure(alice);
  expect((await client.getObject('USR00001'))['Name']).toBe('alice');
});

test('secureLoginAvailable: true for the service\'s key; pinned, false for a swapped key and true for the real one; false where nothing answers', async () => {
  expect(await through().secureLoginAvailable()).toBe(true);
  swapKey();
  expect(await through().secureLoginAvailable()).toBe(true); // unpinned, any key will do (the attack above)
  expect(await through(fingerprint.toString('hex')).secureLoginAvailable()).toBe(false);
  attacker.intercept(undefined);
  expect(await through(fingerprint.toString('hex')).secureLoginAvailable()).toBe(true);
  expect(await createClient({ baseUrl: 'http://127.0.0.1:9', appKey: 'demo' }).secureLoginAvailable()).toBe(false);
});

test('a pin that is neither a public-key PEM nor a fingerprint is a TypeError at createClient', () => {
  const privatePem = readFileSync(join(keys, 'server-key.pem'), 'utf8');
  for (const pin of ['', 'abc', 'sha256:' + '0'.repeat(63), fingerprint.toString('hex').slice(2), privatePem, []]) {
    expect(() => through(pin as string)).toThrow(TypeError);
  }
});

test("the guide's pinning example (docs/secure-login.md) prints what its comments say", () => {
  const code = codeBlocks(readmeSection('Pinning the server key'), 'js')[0]!;
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-readme-pin-'));
  const script = code
    .replace("'odbrest/client'", JSON.stringify(new URL('dist/client.js', `file://${ROOT}`).href))
    .replace("'keys/server-key.pub.pem'", JSON.stringify(join(keys, 'server-key.pub.pem')))
    .replaceAll('http://localhost:8080', origin);
  writeFileSync(join(dir, 'example.mjs'), script);
  const printed = execFileSync(process.execPath, [join(dir, 'example.mjs')], { encoding: 'utf8' });
  const promised = [...code.matchAll(/\/\/ (.+)$/gm)].map((m) => m[1]!).filter((text) => !text.startsWith('The PEM'));
  expect(printed.trim().split('\n')).toEqual(promised);
});
