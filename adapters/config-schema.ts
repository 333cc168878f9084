import * as v from 'valibot';

/**
 * The deployable configuration (`api-config.yml`): the groups of `ServiceOptions`, with durations in
 * minutes and hours, stores chosen by URL, files and modules named by path. A group added here whose
 * file form equals its option form (say `cors: {origins: [...]}`) reaches the service as it is;
 * `CONVERTED` in node-config.ts lists the few that are changed on the way.
 *
 * Every check carries a message naming the option and what it allows, so that a typo never reads
 * "Expected never but received ...".
 */
const text = (name: string) => v.string(`${name} must be a string`);
const flag = (name: string) => v.boolean(`${name} must be true or false`);
const number = (name: string) => v.number(`${name} must be a number`);
const positive = (name: string) => v.pipe(number(name), v.gtValue(0, `${name} must be a number above 0`));
function whole(name: string, min: number, max?: number) {
  const range = max === undefined ? `${min} or more` : `from ${min} to ${max}`;
  const message = `${name} must be a whole number ${range}`;
  return v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max ?? Number.MAX_SAFE_INTEGER, message));
}
const names = (name: string, what: string) => v.array(v.string(`${name} must be a list of ${what}`), `${name} must be a list of ${what}`);
const optional = <T extends v.GenericSchema>(schema: T) => v.optional(schema);
const twoFactorKey = v.pipe(v.string('twoFactor.key must be a string'), v.minLength(32, 'twoFactor.key must be at least 32 characters'));
function group<T extends v.ObjectEntries>(name: string, entries: T) {
  return v.optional(v.strictObject(entries, `${name} must be a mapping of ${Object.keys(entries).join(', ')}`));
}

/** The object store by URL: `memory`, `file:<folder>` or `postgres://...`. */
export const STORE_KINDS = 'memory, file:<folder> or a postgres:// URL';
/** The blob store of files by URL: `memory`, `file:<folder>`, `postgres://...` or `s3://<bucket>/<prefix>`. */
export const BLOB_KINDS = 'memory, file:<folder>, a postgres:// URL or s3://<bucket>/<prefix>';
/** The key-value store by URL: `memory` or `redis://...`. */
export const KV_KINDS = 'memory or a redis:// (rediss://) URL';
/** What a refused store URL was, without the credentials a URL may carry. */
const given = (issue: v.BaseIssue<unknown>) => {
  const value = String(issue.input);
  return `not ${JSON.stringify(/^[^:/@]*:/.exec(value)?.[0] ?? value.slice(0, 40))}`;
};
const isStoreUrl = (url: string) => url === 'memory' || url.startsWith('file:') || /^postgres(ql)?:\/\//.test(url);
const isKvUrl = (url: string) => url === 'memory' || /^rediss?:\/\//.test(url);
/** A store module's path: relative to the config file's folder (`./my-store.mjs`) or absolute. */
export const isModulePath = (value: string) => /^\.{1,2}[/\\]|^\//.test(value);

export const ConfigSchema = v.strictObject({
  port: optional(whole('port', 0, 65535)),
  hostname: optional(text('hostname')),
  /** Seed objects (JSON, as examples/demo-data.json); into a durable store only while it is empty. */
  dataFile: optional(text('dataFile')),
  /** A module whose default export (or its named exports) are macros and `xApi_*` hooks. */
  macros: optional(text('macros')),
  /** One line per request on standard output. Default true. */
  requestLog: optional(flag('requestLog')),
  /** The request log's form: `text` (default) or `json`, one pino-style JSON object per line. */
  log: group('log', { format: optional(v.picklist(['text', 'json'], 'log.format must be text or json')) }),
  store: group('store', {
    url: optional(v.pipe(text('store.url'), v.check(isStoreUrl, (issue) => `store must be ${STORE_KINDS}, ${given(issue)}`))),
    /** A module whose default export makes the ObjectStore (a function of `options`), instead of `url`. */
    module: optional(v.pipe(text('store.module'), v.check(isModulePath, 'store.module must be a path to a module (./my-store.mjs)'))),
    /** What the module's function receives. */
    options: optional(v.record(v.string(), v.unknown(), 'store.options must be a mapping')),
    schema: optional(text('store.schema')),
    table: optional(text('store.table')),
    /** PostgreSQL only: fields listings filter or order by, each given a column and btree indexes. */
    indexedFields: optional(names('store.indexedFields', 'field names')),
  }),
  kv: group('kv', {
    url: optional(v.pipe(text('kv.url'), v.check(isKvUrl, (issue) => `kv must be ${KV_KINDS}, ${given(issue)}`))),
    /** A module whose default export makes the KeyValueStore (a function of `options`), instead of `url`. */
    module: optional(v.pipe(text('kv.module'), v.check(isModulePath, 'kv.module must be a path to a module (./my-kv.mjs)'))),
    options: optional(v.record(v.string(), v.unknown(), 'kv.options must be a mapping')),
    prefix: optional(text('kv.prefix')),
  }),
  /** Files (PROTOCOL.md 6.6): where their bytes live, by URL as `store`, the upload limit and the file class. */
  files: group('files', {
    blobs: group('files.blobs', {
      url: v.pipe(
        text('files.blobs.url'),
        v.check((url) => isStoreUrl(url) || /^s3:\/\/[^/]/.test(url), (issue) => `files.blobs must be ${BLOB_KINDS}, ${given(issue)}`),
        // a key in the URL would be taken for nothing: S3 credentials come from the AWS_* variables only
        v.check((url) => !/^s3:\/\/[^/]*[@:]/.test(url), 'files.blobs: an s3:// URL names the bucket (and a prefix) only, without a key or port; credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the endpoint from files.blobs.endpoint'),
      ),
      schema: optional(text('files.blobs.schema')),
      table: optional(text('files.blobs.table')),
      /** S3 only (credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN). */
      endpoint: optional(v.pipe(text('files.blobs.endpoint'), v.url('files.blobs.endpoint must be a URL such as http://minio:9000'))),
      region: optional(text('files.blobs.region')),
      forcePathStyle: optional(flag('files.blobs.forcePathStyle')),
    }),
    maxUploadBytes: optional(whole('files.maxUploadBytes', 0)),
    className: optional(v.pipe(text('files.className'), v.regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'files.className must match [A-Za-z][A-Za-z0-9_]{0,63}'))),
  }),
  databaseName: optional(text('databaseName')),
  mount: group('mount', { basePath: optional(text('mount.basePath')), alias: optional(text('mount.alias')) }),
  appKeys: optional(names('appKeys', 'strings')),
  trustProxy: optional(flag('trustProxy')),
  cors: group('cors', {
    origins: names('cors.origins', 'origins such as https://app.example.com'),
    maxAgeSeconds: optional(whole('cors.maxAgeSeconds', 0)),
  }),
  serviceCheck: group('serviceCheck', {
    applicationName: optional(text('serviceCheck.applicationName')),
    applicationVersion: optional(text('serviceCheck.applicationVersion')),
    timeoutMs: optional(positive('serviceCheck.timeoutMs')),
  }),
  maxBodyBytes: optional(whole('maxBodyBytes', 1)),
  session: group('session', {
    idleTimeoutMinutes: optional(positive('session.idleTimeoutMinutes')),
    absoluteTimeoutHours: optional(positive('session.absoluteTimeoutHours')),
    jwtSecret: optional(v.pipe(text('session.jwtSecret'), v.minLength(32, 'session.jwtSecret must be at least 32 characters'))),
    maxPerUser: optional(whole('session.maxPerUser', 1)),
  }),
  loginLimit: group('loginLimit', {
    perUser: optional(whole('loginLimit.perUser', 1)),
    perAddress: optional(whole('loginLimit.perAddress', 1)),
    windowMinutes: optional(positive('loginLimit.windowMinutes')),
  }),
  twoFactor: group('twoFactor', {
    policies: optional(
      v.record(v.string(), v.picklist(['optional', 'forced'], 'twoFactor.policies: each policy must be optional or forced'), 'twoFactor.policies must map application names to optional or forced'),
    ),
    key: optional(v.union([twoFactorKey, v.pipe(v.array(twoFactorKey), v.minLength(1))], 'twoFactor.key must be a string of at least 32 characters, or a list of them')),
    issuer: optional(text('twoFactor.issuer')),
  }),
  /** Access rules (PROTOCOL.md 6.4): class name or "*" -> action -> group names, "*" or "self". */
  access: optional(
    v.record(
      v.string(),
      v.strictObject(
        {
          read: optional(names('access rules', 'group names, "*" or "self"')),
          create: optional(names('access rules', 'group names or "*"')),
          update: optional(names('access rules', 'group names, "*" or "self"')),
          delete: optional(names('access rules', 'group names or "*"')),
        },
        'access must map class names (or "*") to read, create, update and delete lists',
      ),
      'access must map class names (or "*") to read, create, update and delete lists',
    ),
  ),
  users: group('users', {
    className: optional(text('users.className')),
    passwordIterations: optional(whole('users.passwordIterations', 1)),
    /** The group whose members administer users and sessions (PROTOCOL.md 2.8). */
    admins: optional(text('users.admins')),
    groupClassName: optional(text('users.groupClassName')),
  }),
  /** Passkeys (WebAuthn, PROTOCOL.md 2.8). */
  passkeys: group('passkeys', {
    rpID: text('passkeys.rpID'),
    rpName: text('passkeys.rpName'),
    origins: names('passkeys.origins', 'origins such as https://app.example.com'),
  }),
  /** Mail (docs/accounts.md, "Mail"): the SMTP server by URL, the sender, the reset link, the retries. */
  mail: group('mail', {
    url: v.pipe(text('mail.url'), v.check((url) => /^smtps?:\/\/[^/]/.test(url), (issue) => `mail.url must be an smtp:// or smtps:// URL, ${given(issue)}`)),
    from: v.pipe(text('mail.from'), v.minLength(1, 'mail.from must not be empty')),
    resetLink: optional(v.pipe(text('mail.resetLink'), v.includes('{token}', 'mail.resetLink must hold {token}, e.g. https://app.example.com/reset?token={token}'))),
    retries: optional(whole('mail.retries', 0, 10)),
    retryDelayMs: optional(whole('mail.retryDelayMs', 0)),
  }),
  customLogin: group('customLogin', { className: optional(text('customLogin.className')) }),
  secure: group('secure', {
    serverKey: optional(v.string('secure.serverKey must be a PEM string')),
    serverKeyFile: optional(v.string('secure.serverKeyFile must be a path')),
  }),
  externalLogin: group('externalLogin', {
    publicUrl: optional(v.string('externalLogin.publicUrl must be a URL')),
    providers: optional(
      v.array(
        v.strictObject(
          {
            name: text('externalLogin.providers[].name'),
            endpoints: optional(v.record(v.string(), v.string(), 'externalLogin.providers[].endpoints must map endpoint names to URLs')),
          },
          'each of externalLogin.providers must be a mapping of name, endpoints',
        ),
        'externalLogin.providers must be a list of {name: ...}',
      ),
    ),
  }),
  objects: group('objects', {
    serializationDepth: optional(whole('objects.serializationDepth', 0)),
    internalClasses: optional(names('objects.internalClasses', 'class names')),
    /** Field lists per class and style for `serialization={"type":"class","style":...}` (PROTOCOL.md 6.1). */
    serialization: group('objects.serialization', {
      styles: optional(
        v.record(
          v.pipe(text('objects.serialization.styles'), v.regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'objects.serialization.styles: each key must be a class name')),
          v.strictObject(
            { preview: optional(names('objects.serialization.styles', 'field names')), detailview: optional(names('objects.serialization.styles', 'field names')) },
            'objects.serialization.styles must map class names to {preview, detailview} field lists',
          ),
          'objects.serialization.styles must map class names to {preview, detailview} field lists',
        ),
      ),
    }),
  }),
  /**
   * Declared classes (PROTOCOL.md 6.8): class name -> {fields, indexes?, strict?, classId?}. Their
   * details are checked by the service at start-up, with messages naming the class and field.
   */
  schema: optional(
    v.record(
      v.string(),
      v.looseObject({ fields: v.record(v.string(), v.unknown(), 'schema: each class needs fields, a mapping of field names to types') }, 'schema must map class names to {fields, indexes?, strict?}'),
      'schema must map class names to {fields, indexes?, strict?}',
    ),
  ),
  /** Serve `GET {base}/openapi.json`. Default true. */
  openApi: optional(flag('openApi')),
  /** The API reference page (Swagger UI, from the swagger-ui-dist package) at `{base}/docs` or `path`. Default off. */
  apiReference: optional(
    v.union([flag('apiReference'), v.strictObject({ path: optional(text('apiReference.path')) }, 'apiReference must be true, false or a mapping of path')], 'apiReference must be true, false or a mapping of path'),
  ),
  /** The studio, the data browser (docs/studio.md): `true`, or where and with what it logs in. Default off. */
  studio: optional(
    v.union(
      [
        flag('studio'),
        v.strictObject(
          { path: optional(text('studio.path')), appKey: optional(text('studio.appKey')), appNames: optional(names('studio.appNames', 'application names')), docs: optional(text('studio.docs')) },
          'studio must be true, false or a mapping of path, appKey, appNames, docs',
        ),
      ],
      'studio must be true, false or a mapping of path, appKey, appNames, docs',
    ),
  ),
  /** Change events (PROTOCOL.md 8): how many, and how long, are kept for `Last-Event-ID`. The bus is the host's code. */
  events: group('events', {
    retainEvents: optional(whole('events.retainEvents', 1)),
    retainMinutes: optional(positive('events.retainMinutes')),
  }),
  caches: group('caches', {
    sessions: optional(whole('caches.sessions', 1)),
    secureSessions: optional(whole('caches.secureSessions', 1)),
    storeTimes: optional(whole('caches.storeTimes', 1)),
  }),
});
export type FileConfig = v.InferOutput<typeof ConfigSchema>;

const asBoolean = (x: string) => (x === 'true' || x === '1' ? true : x === 'false' || x === '0' ? false : x);

/**
 * Each variable, the option (group, name) it sets and its conversion. A value that does not convert
 * goes through as it is, so the schema's message names the option.
 */
export const ENV: Record<string, [string[], (value: string) => unknown]> = {
  ODBREST_PORT: [['port'], Number],
  PORT: [['port'], Number],
  ODBREST_HOSTNAME: [['hostname'], String],
  ODBREST_DATA: [['dataFile'], String],
  ODBREST_MACROS: [['macros'], String],
  ODBREST_REQUEST_LOG: [['requestLog'], asBoolean],
  ODBREST_LOG_FORMAT: [['log', 'format'], String],
  ODBREST_STORE: [['store', 'url'], String],
  ODBREST_KV: [['kv', 'url'], String],
  ODBREST_BLOBS: [['files', 'blobs', 'url'], String],
  ODBREST_MAX_UPLOAD_BYTES: [['files', 'maxUploadBytes'], Number],
  ODBREST_DATABASE_NAME: [['databaseName'], String],
  ODBREST_BASE_PATH: [['mount', 'basePath'], String],
  ODBREST_ALIAS: [['mount', 'alias'], String],
  ODBREST_APP_KEYS: [['appKeys'], (x) => x.split(',').map((key) => key.trim()).filter(Boolean)],
  ODBREST_JWT_SECRET: [['session', 'jwtSecret'], String],
  ODBREST_IDLE_MINUTES: [['session', 'idleTimeoutMinutes'], Number],
  ODBREST_ABSOLUTE_HOURS: [['session', 'absoluteTimeoutHours'], Number],
  ODBREST_MAX_BODY_BYTES: [['maxBodyBytes'], Number],
  ODBREST_TRUST_PROXY: [['trustProxy'], asBoolean],
  ODBREST_CORS_ORIGINS: [['cors', 'origins'], (x) => x.split(',').map((origin) => origin.trim()).filter(Boolean)],
  ODBREST_PUBLIC_URL: [['externalLogin', 'publicUrl'], String],
  ODBREST_2FA_KEY: [['twoFactor', 'key'], String],
  ODBREST_SERVER_KEY_FILE: [['secure', 'serverKeyFile'], String],
  ODBREST_SERVER_KEY: [['secure', 'serverKey'], String],
  ODBREST_MAIL_URL: [['mail', 'url'], String],
};

type AnySchema = v.GenericSchema & { wrapped?: AnySchema; item?: AnySchema; value?: AnySchema; entries?: Record<string, AnySchema> };

/** The option names allowed at `path` (a group's members, or the top level). */
function allowedAt(path: Array<string | number>): string[] {
  let schema = ConfigSchema as unknown as AnySchema | undefined;
  const unwrap = () => {
    while (schema?.wrapped) schema = schema.wrapped;
  };
  for (const key of path) {
    unwrap();
    // a record's keys are names the host chooses (class names): its value schema holds at each
    schema = typeof key === 'number' ? schema?.item : schema?.entries ? schema.entries[key] : schema?.value;
  }
  unwrap();
  return Object.keys(schema?.entries ?? {});
}

/** `session.jwtSecret`, `externalLogin.providers[0].name`. */
const optionName = (path: Array<string | number>) => path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? key : `.${key}`)).join('');

/** The message of a configuration that does not fit: the option it concerns and what is allowed there. */
export function describeIssue(issue: v.BaseIssue<unknown>): string {
  const path = (issue.path ?? []).map((item) => item.key as string | number);
  const where = optionName(path) || 'config';
  if (issue.expected === 'never' && path.length > 0) {
    const parent = path.slice(0, -1);
    const allowed = allowedAt(parent);
    const place = parent.length === 0 ? '' : ` in ${optionName(parent)}`;
    return `invalid configuration (${where}): unknown option ${JSON.stringify(path.at(-1))}${place}; allowed: ${allowed.join(', ')}`;
  }
  return `invalid configuration (${where}): ${issue.message}`;
}
