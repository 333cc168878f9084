// The service every framework example mounts: the demo database (demo-data.json), one registered
// macro, and a few options read from the environment, so the end-to-end tests can set them:
//   ODBREST_TRUST_PROXY=true        take the client address from X-Forwarded-For (behind your proxy)
//   ODBREST_LOGIN_PER_USER=5        failed logins per user name within the window
//   ODBREST_LOGIN_PER_ADDRESS=20    failed logins per client address within the window
//   ODBREST_PASSWORD_ITERATIONS=n   PBKDF2 iterations for the demo passwords (lower starts faster)
//   ODBREST_CORS_ORIGINS=a,b        origins whose browser pages may call the service (CORS)
//   ODBREST_2FA_KEY=...             the key that seals two-factor secrets (32 characters or more)
//   ODBREST_MAX_UPLOAD_BYTES=n      the largest file upload (default 100 MiB)
import { createService, MemoryBlobStore } from 'odbrest';
// Native AES-CTR and HMAC for the secure transport: node:crypto, which Node, Bun and Deno all have.
import { nodeCrypto } from 'odbrest/node';
import { demoAccess } from './demo-access.mjs';
import demoData from './demo-data.json' with { type: 'json' };
import { demoFiles } from './demo-files.mjs';

/**
 * @param {Record<string, string | undefined>} env  process.env, or Deno.env.toObject()
 * @param {{ basePath?: string }} mount  `/api` unless the framework strips the mount path itself
 */
export function createDemoService(env, { basePath = '/api' } = {}) {
  const number = (name) => (env[name] ? Number(env[name]) : undefined);
  // Files (PROTOCOL.md 6.6) in memory: the demo's `Document` objects get their bytes here.
  const blobs = new MemoryBlobStore();
  const filesLoaded = Promise.all(demoFiles.map((file) => blobs.put(file.id, new Blob([file.text]).stream())));
  const service = createService({
    data: demoData,
    databaseName: 'demo',
    mount: { basePath },
    trustProxy: ['true', '1'].includes(env.ODBREST_TRUST_PROXY), // as loadConfig reads it
    cors: env.ODBREST_CORS_ORIGINS ? { origins: env.ODBREST_CORS_ORIGINS.split(',').map((origin) => origin.trim()) } : undefined,
    loginLimit: { perUser: number('ODBREST_LOGIN_PER_USER'), perAddress: number('ODBREST_LOGIN_PER_ADDRESS') },
    users: { passwordIterations: number('ODBREST_PASSWORD_ITERATIONS') },
    secure: { symmetricCrypto: nodeCrypto },
    access: demoAccess,
    files: { blobs, maxUploadBytes: number('ODBREST_MAX_UPLOAD_BYTES') },
    // Two-factor login for the demo application `hr`; the key seals the users' TOTP secrets (demo only).
    // the studio, the service's own data browser, at /api/_studio/ (docs/studio.md)
    studio: { appNames: ['crm'] },
    twoFactor: { policies: { hr: 'optional' }, key: env.ODBREST_2FA_KEY || 'odbrest demo two-factor key: never use it in production', issuer: 'odbrest demo' },
    macros: {
      // POST /api/v1/execute/greet {"name": "..."}: greets the name, or the logged-in user.
      greet: async (context, params) => {
        const user = await context.user();
        const name = typeof params.name === 'string' ? params.name : String(user?.fields.Name ?? 'stranger');
        return { greeting: `Hello, ${name}!`, user: user?.fields.Name ?? null };
      },
    },
  });
  const ready = Promise.all([service.ready, filesLoaded]).then(() => undefined);
  return { ...service, ready };
}

/** The line each example prints once it listens; the end-to-end tests read the address from it. */
export const listeningLine = (kind, url) => `odbrest ${kind} example listening on ${url} (API under ${url}/api)`;
