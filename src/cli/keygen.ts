import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { exportKeyPairPem, generateRsaKeyPair } from '../secure/keys.js';

const KEY_FILE = 'server-key.pem';
const PUBLIC_KEY_FILE = 'server-key.pub.pem';

export const KEYGEN_USAGE = `usage: odbrest keygen [--bits 2048] [--out dir]
  writes a secure-login key pair: server-key.pem (private, give it as serverKeyFile) and server-key.pub.pem
  --bits N    the RSA key size, a multiple of 8 from 2048 to 8192 (default 2048)
  --out DIR   the folder for the two files, created if missing (default: the working directory)`;

export interface KeygenOptions {
  bits?: number;
  /** Directory for the two files; created if missing. Default: the working directory. */
  out?: string;
}

/** Parses `[--bits N] [--out dir]`. */
export function parseKeygenArgs(args: string[]): KeygenOptions {
  const options: KeygenOptions = {};
  for (let i = 0; i < args.length; i++) {
    const [flag, value] = [args[i], args[i + 1]];
    if (flag === '--bits' && value !== undefined) options.bits = Number(value);
    else if (flag === '--out' && value !== undefined) options.out = value;
    else throw new Error(`keygen: unknown or incomplete argument ${flag}`);
    i++;
  }
  return options;
}

/**
 * Writes a new RSA key pair for the secure login: `server-key.pem` (PKCS#8, readable only by the
 * owner; give it as `serverKeyFile`) and `server-key.pub.pem` (SPKI). Never overwrites a file.
 */
export async function keygen(options: KeygenOptions = {}, cwd = process.cwd()): Promise<{ privateKeyPath: string; publicKeyPath: string }> {
  const bits = options.bits ?? 2048;
  if (!Number.isInteger(bits) || bits < 2048 || bits > 8192 || bits % 8 !== 0) {
    throw new Error('keygen: --bits must be a multiple of 8 from 2048 to 8192');
  }
  const dir = resolve(cwd, options.out ?? '.');
  mkdirSync(dir, { recursive: true });
  const pem = await exportKeyPairPem(await generateRsaKeyPair(bits));
  const privateKeyPath = resolve(dir, KEY_FILE);
  const publicKeyPath = resolve(dir, PUBLIC_KEY_FILE);
  try {
    writeFileSync(privateKeyPath, pem.privateKey, { mode: 0o600, flag: 'wx' });
    writeFileSync(publicKeyPath, pem.publicKey, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new Error(`keygen: ${dir} already holds a key; remove it or choose another --out`);
    throw error;
  }
  return { privateKeyPath, publicKeyPath };
}
