/**
 * The groups the OpenAPI document lists operations under (its `tags`), each with a description, in
 * the order the API reference page shows them. A built-in route belongs to the first group whose
 * pattern matches its path; a host's routes (the `routes` option) to `HOST_TAG`.
 */
export const HOST_TAG = 'Host routes';

export const TAGS: ReadonlyArray<{ name: string; description: string; paths?: RegExp }> = [
  {
    name: 'Logins',
    description:
      'Logging in and out. A login answers a credential of one of three kinds: a session id (sessionId header), a JWT (Authorization: Bearer) or a secure-transport token (Secure-Token, every body encrypted). Clients send the hex MD5 of the password as pass.',
    paths: /^\/(v1\/login|v2\/login|v1\/auth\/df|v1\/logout)\b/,
  },
  {
    name: 'External login',
    description: 'Google, Facebook, Microsoft and Apple (OAuth 2.0 / OpenID Connect), with linking of the identity to a database user.',
    paths: /^\/v1\/(auth\/:name|:name\/callback|extLogin)\b/,
  },
  {
    name: 'Two-factor login',
    description: 'A second factor per application: TOTP codes of an authenticator app, or one-time backup codes.',
    paths: /^\/v1\/2fa\//,
  },
  {
    name: 'Sessions and service',
    description: 'Whether a session lives, whether the service and its stores answer (health, liveness, readiness), versions, and this document.',
    paths: /^\/(_Check|v1\/versioninfo|v2\/versionInfo|openapi\.json)/,
  },
  {
    name: 'Objects',
    description:
      'Objects by id, class listings with a filter, the classes with their counts, the objects referencing one, writes, actions, locks, the recycle bin and object security. Answers are shaped by the serialization parameter; the access rules decide what a session reads and writes.',
    paths: /^\/v1\/(object|objects|classes|action|lock|recycleBin|personal\/emptyRecycleBin|setObjectSecurity)\b/,
  },
  { name: 'Batches', description: 'Up to 100 requests in one, each answered with its own HTTP status and envelope.', paths: /^\/v1\/multi\b/ },
  { name: 'Macros', description: 'Functions of the host, called by name with a JSON body; their return value is the answer.', paths: /^\/v1\/execute\// },
  {
    name: 'Files',
    description: 'Uploads in three steps (an upload id, the bytes, the file object) and downloads with ranges and ETags; the bytes live in a blob store.',
    paths: /^\/v[12]\/(uploadFile|file)\b/,
  },
  {
    name: 'Model and v2',
    description: 'The declared classes (the model) and the v2 group of the product\'s current client: object data by query, id or parent, app configuration, theme and views.',
    paths: /^\/v[12]\/(model|objectdata|appConfig|appTheme|view)\b/,
  },
  {
    name: 'Accounts',
    description: 'Passwords and their reset, the user\'s sessions, passkeys, user administration and licence seats.',
    paths: /^\/v1\/(user|users|sessions|passkey|passkeys|license)\b/,
  },
  { name: 'Realtime', description: 'Changes as Server-Sent Events, and tickets for browsers that cannot send headers with an EventSource.', paths: /^\/v1\/events\b/ },
  {
    name: 'Administration',
    description: "The answering instance's metrics and recent requests (users.admins only, kept in memory), and each user's saved queries.",
    paths: /^\/v1\/(admin|savedQueries)\b/,
  },
  { name: HOST_TAG, description: 'Routes of the host application, served with the service\'s app key, credentials, envelope and secure transport.' },
];

/** The tag of a route: its own, else the group of its path, else the host's. */
export const tagOf = (route: { path: string; tag?: string }): string => route.tag ?? TAGS.find((tag) => tag.paths?.test(route.path))?.name ?? HOST_TAG;
