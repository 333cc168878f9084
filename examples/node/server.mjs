// The demo: odbrest on Node's http server with the demo database (examples/demo-data.json).
// Options come from api-config.yml or ODBREST_* variables (see docs/operations.md); `npm start` runs this.
import { ApiError, createService, clientPassValue, defineRoute, MemoryBlobStore } from 'odbrest';
import * as v from 'valibot';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { createNodeHandler, loadConfig, openConfig } from 'odbrest/node';
import { demoAccess } from '../demo-access.mjs';
import { demoFiles } from '../demo-files.mjs';
import { demoSchema } from '../demo-schema.mjs';
import { docsPage } from '../docs-page.mjs';

/** A start-up failure in one line (a configuration error names the option), not a stack trace. */
function fail(message) {
  console.error(`odbrest: ${message}`);
  process.exit(1);
}

const demoData = new URL('../demo-data.json', import.meta.url).pathname;
const config = await Promise.resolve()
  .then(() => loadConfig({ ODBREST_DATA: demoData, ODBREST_DATABASE_NAME: 'demo', ...process.env }))
  .catch((error) => fail(error.message));
const options = await openConfig(config, {
  macros: {
    // POST /v1/execute/countCustomers {"city":"Berlin"} -> {"city":"Berlin","count":50}
    countCustomers: async (ctx, { city }) => {
      if (city !== undefined && typeof city !== 'string') throw new ApiError('400', 'city must be a string');
      const count = await ctx.store.count('Customer', city === undefined ? undefined : { City: city });
      return { city: city ?? null, count };
    },
    // {"macro":"bigAccounts"} in a listing's query object: keeps the customers with a revenue of 10000 or more
    bigAccounts: (ctx, { objects }) => objects.filter((object) => Number(object.fields.Revenue) >= 10000),
  },
}).catch((error) => fail(error.message));
// Two-factor login for the demo application `hr` (optional: each user decides). The key seals the
// users' TOTP secrets in the database; this one is for the demo only: set your own in ODBREST_2FA_KEY.
const twoFactor = options.twoFactor ?? {};
// The demo's files (the `Document` objects DOC00001-3) in memory; configure a disk or database blob store for real files.
const blobs = options.files?.blobs ?? new MemoryBlobStore();
for (const file of demoFiles) await blobs.put(file.id, new Blob([file.text]).stream());
// Password reset tokens (POST /v1/user/password/reset) are "delivered" to a file per user under the
// demo's data folder, .odbrest-data/password-reset/<user>.txt in the working directory, so that a
// person can try the reset with curl. A real host sends a mail or a message instead.
const resetFolder = join(process.cwd(), '.odbrest-data', 'password-reset');
const sendPasswordReset = async ({ user, token }) => {
  await mkdir(resetFolder, { recursive: true });
  await writeFile(join(resetFolder, `${encodeURIComponent(user.name)}.txt`), `${token}\n`, { mode: 0o600 });
};
// Passkeys for pages on this server's own address (filled in once it listens).
const passkeyOrigins = [];
// Three of the product's application routes, served as host routes (PROTOCOL.md 6.10). The user's
// settings live in the key-value store per user (a real app may keep them in a class of its own).
const settingsKey = (context) => `userSetting:${context.session.principalId}`;
const readSettings = async (context) => JSON.parse((await context.kv.get(settingsKey(context))) ?? '{}');
const routes = [
  // GET /v1/userSystemSettings -> {"language":"en","timeZone":"Europe/Berlin","settings":{...the user's own}}
  defineRoute({
    method: 'GET',
    path: 'v1/userSystemSettings',
    summary: "The system's settings for the session user, with the user's own settings",
    answer: v.object({ language: v.string(), timeZone: v.string(), settings: v.record(v.string(), v.string()) }),
    handler: async (context) => ({ language: 'en', timeZone: 'Europe/Berlin', settings: await readSettings(context) }),
  }),
  // POST /v1/userSetting/{key} {"value":"dark"} -> {"key":"theme","value":"dark"}
  defineRoute({
    method: 'POST',
    path: 'v1/userSetting/:key',
    summary: "Stores one of the session user's settings",
    body: v.object({ value: v.pipe(v.string(), v.maxLength(1000)) }),
    answer: v.object({ key: v.string(), value: v.string() }),
    handler: async (context, { key }, { value }) => {
      if (!/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(key)) throw new ApiError('400', 'key must be a name of letters, digits, _ . - (at most 64)');
      const settings = await readSettings(context);
      settings[key] = value;
      await context.kv.set(settingsKey(context), JSON.stringify(settings), 365 * 24 * 3600 * 1000);
      return { key, value };
    },
  }),
  // GET /v1/personal/unreadDocuments -> the documents the user has not opened: here, every Document (the demo keeps no read marks)
  defineRoute({
    method: 'GET',
    path: 'v1/personal/unreadDocuments',
    summary: 'The documents the session user has not read yet',
    answer: v.object({ count: v.number(), documents: v.array(v.looseObject({ '~ObjectID': v.string() })) }),
    handler: async (context) => {
      const { objects } = await context.store.find({ className: 'Document', limit: 100 });
      return { count: objects.length, documents: objects };
    },
  }),
];
const service = createService({
  ...options,
  // alice (group admins) administers users and sessions: POST /v1/user, PATCH /v1/user/{name}, ?user=
  users: { admins: 'admins', sendPasswordReset, ...options.users },
  passkeys: options.passkeys ?? { rpID: 'localhost', rpName: 'odbrest demo', origins: passkeyOrigins },
  routes: [...(options.routes ?? []), ...routes],
  // the demo's rules unless api-config.yml has its own `access:` table
  access: options.access ?? demoAccess,
  // the demo's declared classes unless api-config.yml has its own `schema:`
  schema: options.schema ?? demoSchema,
  files: { ...options.files, blobs },
  // A host action (PROTOCOL.md 6.3): a write with ?actions=[{"type":"sendObject","to":"..."}] records a
  // Message about the written object; a real host would send it on (mail, queue) here.
  actions: {
    ...options.actions,
    sendObject: async (context, action, object) => {
      await context.store.put({ className: 'Message', fields: { To: String(action.to ?? ''), About: object ? { $ref: object.id } : null, From: context.session?.user ?? null } });
    },
  },
  // serialization={"type":"class","style":"preview"} serves a customer as its name and city (api-config.yml's
  // objects.serialization.styles replaces this); classes without a list are served in full
  objects: { ...options.objects, serialization: { styles: { Customer: { preview: ['Name', 'City'] } }, ...options.objects?.serialization } },
  // the studio, the service's own data browser, at {base}/_studio/ (docs/studio.md); its login proposes
  // `crm`, and "For developers" links the operation shown on this host's /docs page
  studio: options.studio ?? { appNames: ['crm'], docs: '/docs' },
  twoFactor: {
    policies: twoFactor.policies ?? { hr: 'optional' },
    key: twoFactor.key ?? 'odbrest demo two-factor key: never use it in production',
    issuer: twoFactor.issuer ?? 'odbrest demo',
  },
});
await service.ready.catch((error) => fail(`the service did not start: ${error.message}`));
const basePath = config.options.mount?.basePath?.replace(/\/+$/, '') ?? '';
const alias = config.options.mount?.alias ? `/${config.options.mount.alias}` : '';
// GET /docs: the API reference page, on the service's own OpenAPI document; everything else: the service
const docs = docsPage(`${basePath}${alias}/openapi.json`);
const api = createNodeHandler(service);
const server = createServer((req, res) => docs(req, res) || api(req, res));
try {
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port ?? 8080, config.hostname, resolve);
  });
} catch (error) {
  if (error.code !== 'EADDRINUSE') throw error;
  fail(`port ${config.port} is already in use (PORT=8081 npm start picks another)`);
}
const port = server.address().port;
passkeyOrigins.push(`http://localhost:${port}`);
const root = `http://localhost:${port}${config.options.mount?.basePath ?? ''}`;

console.log(`odbrest demo listening on ${root} (API reference: http://localhost:${port}/docs)`);
console.log(`Studio, the data browser: ${root}${alias}/_studio/`);
console.log('Log in as alice (password alice-secret; the client sends its hex MD5):');
console.log(
  `curl -s -X POST ${root}/v1/login -H 'appkey: demo' -H 'Content-Type: application/json' ` +
    `-d '{"user":"alice","pass":"${clientPassValue('alice-secret')}","appNames":["crm"]}'`,
);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
