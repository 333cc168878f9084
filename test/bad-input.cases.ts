/**
 * Generated malformed requests for test/bad-input.test.ts. Every case comes from a table crossed
 * with others (endpoints x bodies x credentials ...); the few random inputs come from one seeded PRNG,
 * so a failing case has the same name and bytes on every run.
 *
 * Order in which the core answers (and so which code a case expects when several things are wrong):
 * body size / UTF-8 (read before routing) -> route (404/405/bad percent-encoding) -> appkey (100,
 * also for unknown routes) -> credential (204/201) -> 307 -> the handler (415, 400, 302, 306, 404).
 */
import { APP_KEY, CONTACTS, USERS, loginBody } from './helpers.js';
import { prng } from './support/prng.js';

export const SEED = 0x0db2e57;
export const LIMIT = 1024 * 1024; // the default body limit the suite runs against
export const JWT_SECRET = 'bad-input-suite-jwt-secret-of-32+bytes';

/** Live credentials made by the suite before the cases run, and forged tokens built from them. */
export interface Ctx {
  plain: string;
  token: string;
  /** The session id inside `token` (a token session: refused through `sessionId`). */
  tokenSid: string;
  /** A plain session logged in with `appNames: []` (code 307 on object routes). */
  macroOnly: string;
  forged: Record<string, string>;
}

export interface BadCase {
  name: string;
  method: string;
  /** Path and query relative to the service root, sent as is (percent-escapes untouched). */
  path: string;
  /** `null` leaves the header out. Default: the accepted key. */
  appKey?: string | null;
  headers?: (ctx: Ctx) => Record<string, string>;
  /** Called per run: streams are single-use. */
  body?: () => BodyInit;
  expect: { code: string; mentions?: string; allow?: string };
  /** Checked after the answer (e.g. that an endless upload was cancelled). */
  verify?: () => void;
}

// ---------------------------------------------------------------------------------------------
// Deterministic randomness

const random = prng(SEED).next;
const randomInt = (n: number) => Math.floor(random() * n);
const PRINTABLE = ' !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~';
const randomPrintable = (length: number) => Array.from({ length }, () => PRINTABLE[randomInt(PRINTABLE.length)]).join('');
/** Random bytes that are certainly not UTF-8: a 0xFF (never valid) at a random place. */
function randomInvalidUtf8(length: number): Uint8Array {
  const bytes = Uint8Array.from({ length }, () => randomInt(256));
  bytes[randomInt(length)] = 0xff;
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Building blocks

const encoder = new TextEncoder();
const JSON_TYPE = { 'content-type': 'application/json' };
const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const nestedObjects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
/** What a body nested deeper than the bound is refused with, before its value is built. */
const TOO_DEEP = 'deeper than 64 levels';
const bytesWith = (...parts: Array<string | number[]>) =>
  Uint8Array.from(parts.flatMap((part) => (typeof part === 'string' ? [...encoder.encode(part)] : part)));

interface Body {
  name: string;
  body: () => BodyInit;
  headers?: Record<string, string>;
  code: string;
  mentions?: string;
  verify?: () => void;
}

/** A stream of `chunk`-byte chunks, `total` bytes in all (endless when Infinity); records cancellation. */
function chunkedUpload(total: number, chunk = 64 * 1024) {
  const state = { sent: 0, cancelled: false };
  const make = () => {
    state.sent = 0;
    state.cancelled = false;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        const size = Math.min(chunk, total - state.sent);
        if (size <= 0) return controller.close();
        state.sent += size;
        controller.enqueue(new Uint8Array(size).fill(0x20));
      },
      cancel() {
        state.cancelled = true;
      },
    });
  };
  return { make, state };
}

/**
 * Bodies the core refuses before routing, whatever the endpoint, app key or credential: too large
 * (413), not UTF-8 or not readable (400).
 */
function transportBodies(): Body[] {
  const endless = chunkedUpload(Infinity);
  const declared = (length: string): Body => ({
    name: `declared Content-Length ${length} over the limit`,
    body: () => '{}',
    headers: { ...JSON_TYPE, 'content-length': length },
    code: '413',
  });
  const utf8 = (name: string, bytes: Uint8Array): Body => ({ name: `invalid UTF-8: ${name}`, body: () => bytes.slice(), headers: JSON_TYPE, code: '400', mentions: 'UTF-8' });
  return [
    declared(String(LIMIT + 1)),
    declared('99999999999999999999'),
    { name: 'actual body one byte over the limit', body: () => ' '.repeat(LIMIT + 1), headers: JSON_TYPE, code: '413' },
    { name: `body of 5 MiB`, body: () => new Uint8Array(5 * LIMIT).fill(0x5b), headers: JSON_TYPE, code: '413' },
    {
      name: 'chunked stream one byte over the limit, no Content-Length',
      body: chunkedUpload(LIMIT + 1).make,
      headers: JSON_TYPE,
      code: '413',
    },
    {
      name: 'endless chunked stream, no Content-Length',
      body: endless.make,
      headers: JSON_TYPE,
      code: '413',
      verify: () => {
        if (!endless.state.cancelled) throw new Error('the endless upload was not cancelled');
        if (endless.state.sent > 2 * LIMIT) throw new Error(`read ${endless.state.sent} bytes of an endless upload`);
      },
    },
    {
      name: 'stream that fails mid-upload (client gone)',
      body: () =>
        new ReadableStream({
          start(controller) {
            controller.enqueue(encoder.encode('{"user":'));
          },
          pull(controller) {
            controller.error(new Error('connection reset'));
          },
        }),
      headers: JSON_TYPE,
      code: '400',
      mentions: 'could not be read',
    },
    {
      name: 'stream of strings instead of bytes',
      body: () =>
        new ReadableStream<unknown>({
          start(controller) {
            controller.enqueue('{"user":"alice"}');
            controller.close();
          },
        }) as ReadableStream<never>,
      headers: JSON_TYPE,
      code: '400',
      mentions: 'could not be read',
    },
    utf8('lone 0xFF', bytesWith([0xff])),
    utf8('0xFE 0xFF (UTF-16 BOM)', bytesWith([0xfe, 0xff], '{}')),
    utf8('overlong "/" (C0 AF)', bytesWith('{"user":"', [0xc0, 0xaf], '"}')),
    utf8('encoded surrogate (ED A0 80)', bytesWith('{"user":"', [0xed, 0xa0, 0x80], '"}')),
    utf8('truncated 3-byte sequence at the end', bytesWith('{"user":"x"}', [0xe2, 0x82])),
    utf8('bare continuation byte', bytesWith('{"pass":"', [0x80], '"}')),
    utf8('Latin-1 "ü" in a member', bytesWith('{"user":"m', [0xfc], 'ller"}')),
    utf8('code point above U+10FFFF (F4 90 80 80)', bytesWith('["', [0xf4, 0x90, 0x80, 0x80], '"]')),
    ...[16, 256, 4096].map((length) => utf8(`${length} random bytes (seeded)`, randomInvalidUtf8(length))),
  ];
}

/** JSON that does not parse (400) or a body declared as something other than JSON (415). */
function unparsableBodies(validJson: string): Body[] {
  const broken = [
    '{',
    '{"user":',
    '{user:"alice"}',
    "{'user':'alice'}",
    '{"user":"alice",}',
    '[1,]',
    'undefined',
    'NaN',
    '{"user":"alice"}}',
    '{"a":1} trailing',
    '0x10',
    '"unterminated',
    '{"user":"\\x41"}',
    '\u0000',
    nestedArrays(100_000).slice(1), // one bracket short
    ...[1, 2, 3].map(() => `{${randomPrintable(40)},`),
  ];
  const wrongType = [
    'text/plain',
    'text/plain; charset=utf-8',
    'application/text',
    'text/json',
    'application/jsonp',
    'application/json-patch+json',
    'application/xml',
    '*/*',
    '',
  ];
  return [
    ...broken.map((text) => ({ name: `broken JSON ${label(text)}`, body: () => text, headers: JSON_TYPE, code: '400', mentions: 'JSON' })),
    ...wrongType.map((type) => ({ name: `JSON sent as "${type}"`, body: () => validJson, headers: { 'content-type': type }, code: '415', mentions: 'Content-Type' })),
    { name: 'JSON with no Content-Type', body: () => encoder.encode(validJson), code: '415', mentions: 'Content-Type' },
    { name: 'form-urlencoded body', body: () => new URLSearchParams({ user: 'alice', pass: 'x', appNames: 'crm' }), code: '415' },
    {
      name: 'multipart form body',
      body: () => {
        const form = new FormData();
        form.set('user', 'alice');
        return form;
      },
      code: '415',
    },
  ];
}

/** A case-name form of an input: quoted, and cut short when long. */
function label(text: string): string {
  return JSON.stringify(text.length > 32 ? `${text.slice(0, 24)}...(${text.length} chars)` : text);
}
/** Like `label`, but unquoted when short (methods and paths read better bare). */
const short = (text: string) => (text.length > 32 ? label(text) : text);

// ---------------------------------------------------------------------------------------------
// Credentials

export interface Credential {
  name: string;
  headers: (ctx: Ctx) => Record<string, string>;
  /** The code when the credential is refused; absent for a valid one. */
  code?: string;
}

const VALID = {
  plain: { name: 'valid plain session', headers: (c: Ctx) => ({ sessionid: c.plain }) },
  token: { name: 'valid token', headers: (c: Ctx) => ({ authorization: `Bearer ${c.token}` }) },
  macroOnly: { name: 'macro-only session', headers: (c: Ctx) => ({ sessionid: c.macroOnly }) },
} satisfies Record<string, Credential>;

/** Names of the forged tokens the suite builds (test/bad-input.test.ts `forgeTokens`). */
export const FORGED = [
  'alg none',
  'wrong key',
  'HS512 with the right key',
  'right key, unknown sid',
  'right key, sid of a plain session',
  'right key, expired',
  'right key, no sid claim',
  'right key, numeric sid',
  'right key, no exp',
  'truncated real token',
  'real token, one signature character changed',
  'real header and signature, other payload',
] as const;

const sid = (name: string, value: (c: Ctx) => string, code = '201'): Credential => ({ name: `sessionId ${name}`, headers: (c) => ({ sessionid: value(c) }), code });
const auth = (name: string, value: (c: Ctx) => string): Credential => ({ name: `Authorization ${name}`, headers: (c) => ({ authorization: value(c) }), code: '201' });
const garbageToken = randomPrintable(64).replace(/\s/g, '_');

/** Every credential the service must refuse, with the code it answers. */
export const REFUSED: Credential[] = [
  { name: 'no credential', headers: () => ({}), code: '204' },
  sid('empty', () => '', '204'),
  sid('blank', () => '   ', '204'),
  sid('"x"', () => 'x'),
  sid('"null"', () => 'null'),
  sid('"__proto__"', () => '__proto__'),
  sid('"constructor"', () => 'constructor'),
  sid('with braces "}{"', () => '}{'),
  sid('257 chars', () => 'A'.repeat(257)),
  sid('100 KB', () => 'A'.repeat(100_000)),
  sid('Latin-1 bytes', () => 'caf\u00e9\u00ff'),
  sid('of a token session', (c) => c.tokenSid),
  sid('holding the JWT', (c) => c.token),
  sid('of a plain session plus one char', (c) => `${c.plain}A`),
  sid('seeded garbage', () => garbageToken),
  ...FORGED.map((name) => auth(`Bearer (${name})`, (c) => `Bearer ${c.forged[name]}`)),
  auth('"Bearer" alone', () => 'Bearer'),
  auth('"Bearer" and spaces', () => 'Bearer    '),
  auth('Basic credentials', () => 'Basic YWxpY2U6YWxpY2Utc2VjcmV0'),
  auth('holding a plain session id', (c) => c.plain),
  auth('"Bearer a.b.c"', () => 'Bearer a.b.c'),
  auth('"Bearer .."', () => 'Bearer ..'),
  auth('100 KB token', () => `Bearer ${'e'.repeat(100_000)}`),
  auth('double "Bearer Bearer <token>"', (c) => `Bearer Bearer ${c.token}`),
  auth('seeded garbage', () => `Bearer ${garbageToken}`),
];

// ---------------------------------------------------------------------------------------------
// Cases

const LOGIN_ENDPOINTS = [
  { path: '/v1/login', user: 'alice', password: USERS.alice },
  { path: '/v2/login', user: 'alice', password: USERS.alice },
  { path: '/v1/auth/df', user: 'carol', password: CONTACTS.carol },
];
const SECRET_PASS = 'pass-marker-that-must-never-be-echoed';

/** Login bodies that parse as JSON but break PROTOCOL.md 2.1, or pass it and then fail the check. */
function loginShapes(user: string, pass: string): Body[] {
  const good = loginBody(user, pass) as Record<string, unknown>;
  const wrong: Record<string, unknown> = { ...good, pass: SECRET_PASS };
  const json = (name: string, value: unknown, code: string, mentions?: string): Body => ({
    name,
    body: () => JSON.stringify(value),
    headers: JSON_TYPE,
    code,
    mentions,
  });
  const raw = (name: string, text: string, code: string, mentions?: string): Body => ({ name, body: () => text, headers: JSON_TYPE, code, mentions });
  const typeValues: Array<[string, unknown]> = [
    ['number', 1],
    ['zero', 0],
    ['float', -1.5],
    ['null', null],
    ['true', true],
    ['false', false],
    ['empty array', []],
    ['array of one string', ['alice']],
    ['empty object', {}],
    ['object', { value: 'alice' }],
  ];
  const appNamesWrong: Array<[string, unknown]> = [
    ['number', 1],
    ['null', null],
    ['true', true],
    ['object', { crm: true }],
    ['array of numbers', [1, 2]],
    ['array with null', ['crm', null]],
    ['array of arrays', [['crm']]],
    ['array of objects', [{ name: 'crm' }]],
  ];
  return [
    ...(['user', 'pass'] as const).flatMap((member) =>
      typeValues.map(([kind, value]) => json(`${member} is ${kind}`, { ...wrong, [member]: value }, '400', member)),
    ),
    ...appNamesWrong.map(([kind, value]) => json(`appNames is ${kind}`, { ...wrong, appNames: value }, '400', 'appNames')),
    ...(['user', 'pass', 'appNames'] as const).map((member) => {
      const { [member]: _left, ...rest } = wrong;
      return json(`${member} missing`, rest, '400', member);
    }),
    json('empty object', {}, '400', 'user'),
    json('top-level array', [wrong], '400', 'JSON object'),
    json('top-level string', 'alice', '400', 'JSON object'),
    json('top-level number', 42, '400', 'JSON object'),
    json('top-level null', null, '400', 'JSON object'),
    raw('empty body', '', '400', 'JSON object'),
    raw('whitespace body', ' \n\t ', '400', 'JSON object'),
    raw('100,000 nested arrays', nestedArrays(100_000), '400', TOO_DEEP),
    raw('100,000 nested objects', nestedObjects(100_000), '400', TOO_DEEP),
    raw('user is 100,000 nested arrays', `{"user":${nestedArrays(100_000)},"pass":"x","appNames":[]}`, '400', TOO_DEEP),
    raw('appNames is 100,000 nested arrays', `{"user":"x","pass":"x","appNames":${nestedArrays(100_000)}}`, '400', TOO_DEEP),
    raw('user is 1e400 (Infinity)', `{"user":1e400,"pass":"x","appNames":[]}`, '400', 'user'),
    raw('duplicate member, last one a number', `{"user":"alice","user":7,"pass":"x","appNames":[]}`, '400', 'user'),
    raw('members only in a __proto__ object', `{"__proto__":{"user":"alice","pass":"x","appNames":[]}}`, '400', 'user'),
    json('user of 1025 characters', { ...wrong, user: 'u'.repeat(1025) }, '400', 'user'),
    json('pass of 1025 characters', { ...wrong, pass: 'p'.repeat(1025) }, '400', 'pass'),
    json('pass of 100,000 characters', { ...wrong, pass: 'p'.repeat(100_000) }, '400', 'pass'),
    json('user near the body limit', { ...wrong, user: 'u'.repeat(LIMIT - 100) }, '400', 'user'),
    raw('body of exactly the limit (padded with spaces)', pad(`{"user":1,"pass":"x","appNames":[]}`, LIMIT), '400', 'user'),
    json('user of exactly 1024 characters (accepted shape, unknown user)', { ...wrong, user: 'u'.repeat(1024) }, '302'),
    json('empty user (accepted shape, unknown user)', { ...wrong, user: '' }, '302'),
    raw('user with a lone surrogate escape', `{"user":"\\ud800","pass":"x","appNames":[]}`, '302'),
    json('unknown members with a wrong password', { ...wrong, device: { id: 1 }, furtherencryption: true, '2faToken': null }, '302'),
    json('right password, wrong case of user name', { ...good, user: user.toUpperCase() }, '302'),
    json('appNames empty with a wrong password', { ...wrong, appNames: [] }, '302'),
    json('an unlicensed application', { ...good, appNames: ['crm', 'no-such-app'] }, '306', 'no-such-app'),
    json('100,000-character application name', { ...good, appNames: ['a'.repeat(100_000)] }, '306', 'licence'),
    json('10,000 application names', { ...good, appNames: Array.from({ length: 10_000 }, (_, i) => `app${i}`) }, '306', 'licence'),
  ];
}

const pad = (text: string, size: number) => text + ' '.repeat(size - encoder.encode(text).byteLength);

const bodyCase = (method: string, path: string, body: Body, credential?: Credential): BadCase => ({
  name: `${method} ${path}: ${body.name}${credential ? `, ${credential.name}` : ''}`,
  method,
  path,
  headers: (c) => ({ ...(credential?.headers(c) ?? {}), ...body.headers }),
  body: body.body,
  expect: { code: body.code, mentions: body.mentions },
  verify: body.verify,
});

function loginCases(): BadCase[] {
  return LOGIN_ENDPOINTS.flatMap(({ path, user, password }) => {
    const valid = JSON.stringify(loginBody(user, password));
    return [
      ...loginShapes(user, password).map((body) => bodyCase('POST', path, body)),
      ...unparsableBodies(valid).map((body) => bodyCase('POST', path, body)),
      // a session header does not change how a login body is judged
      ...unparsableBodies(valid).slice(0, 3).map((body) => bodyCase('POST', path, body, VALID.plain)),
    ];
  });
}

/** Bodies refused before routing: on every POST endpoint, with any app key and credential. */
function transportCases(): BadCase[] {
  const targets: Array<[string, Credential | undefined]> = [
    ['/v1/login', undefined],
    ['/v2/login', undefined],
    ['/v1/auth/df', undefined],
    ['/v1/logout', VALID.plain], // refused before the handler: the session survives
    ['/v1/execute/ping', VALID.plain],
    ['/v1/execute/ping', undefined],
    ['/v1/multi', VALID.plain],
    ['/no/such/route', undefined],
  ];
  return targets.flatMap(([path, credential]) => transportBodies().map((body) => bodyCase('POST', path, body, credential)));
}

function executeCases(): BadCase[] {
  const path = '/v1/execute/ping';
  const params = (name: string, text: string): Body => ({ name, body: () => text, headers: JSON_TYPE, code: '400', mentions: 'JSON object' });
  const notObjects = [
    params('params null', 'null'),
    params('params an array', '[{"a":1}]'),
    params('params a string', '"a"'),
    params('params a number', '1'),
    params('params true', 'true'),
    { ...params('params 100,000 nested arrays', nestedArrays(100_000)), mentions: TOO_DEEP },
  ];
  const bodies = unparsableBodies('{"a":1}');
  const validBody: Body = { name: 'valid params', body: () => '{"a":1}', headers: JSON_TYPE, code: '0' };
  const names = [
    ['unknown macro', 'nope', '404'],
    ['hook name (registered)', 'xApi_BuildSerialization', '404'],
    ['hook name (not registered)', 'xApi_FindObjects', '404'],
    ['other hook name', 'xApi_DBCreateInit_xApiUserProvider', '404'],
    ['"__proto__"', '__proto__', '404'],
    ['"constructor"', 'constructor', '404'],
    ['wrong case', 'PING', '404'],
    ['with an encoded NUL', 'ping%00', '404'],
    ['with an encoded slash', 'ping%2Fx', '404'],
    ['100,000 characters', 'm'.repeat(100_000), '404'],
    ['bad percent-encoding "%zz"', '%zz', '400'],
    ['truncated percent-encoding "%E0%A4%"', '%E0%A4%', '400'],
    ['overlong percent-encoding "%C0%AF"', '%C0%AF', '400'],
  ] as const;
  return [
    ...[VALID.plain, VALID.token, VALID.macroOnly].flatMap((credential) => bodies.map((body) => bodyCase('POST', path, body, credential))),
    ...notObjects.map((body) => bodyCase('POST', path, body, VALID.plain)),
    // the control: the same request with a valid credential succeeds, so the refusals come from the bad part
    ...[VALID.plain, VALID.token, VALID.macroOnly].map((credential) => bodyCase('POST', path, validBody, credential)),
    ...REFUSED.map((credential) => bodyCase('POST', path, { ...validBody, code: credential.code! }, credential)),
    ...bodies.slice(0, 2).map((body) => bodyCase('POST', path, { ...body, code: '204', mentions: 'no session credential' })),
    ...names.map(([what, name, code]) => ({
      name: `POST /v1/execute/{name}: name ${what}`,
      method: 'POST',
      path: `/v1/execute/${name}`,
      headers: (c: Ctx) => ({ ...VALID.plain.headers(c), ...JSON_TYPE }),
      body: () => '{}',
      expect: { code },
    })),
  ];
}

/** `/v1/multi` bodies refused as a whole, the checks' credentials, and `qb64` queries (items are judged in test/core/multi.test.ts). */
function batchAndCheckCases(): BadCase[] {
  const path = '/v1/multi';
  const item = '{"method":"GET","path":"/_CheckSession"}';
  const notArray = (name: string, text: string): Body => ({ name, body: () => text, headers: JSON_TYPE, code: '400', mentions: 'JSON array' });
  const batches = [
    notArray('an object', `{"items":[${item}]}`),
    notArray('null', 'null'),
    notArray('a string', '"GET /_CheckSession"'),
    notArray('a number', '100'),
    notArray('no body', ''),
    { name: '101 items', body: () => `[${Array(101).fill(item).join(',')}]`, headers: JSON_TYPE, code: '400', mentions: 'at most 100' },
    { name: '100,000 items', body: () => `[${Array(100_000).fill('0').join(',')}]`, headers: JSON_TYPE, code: '400', mentions: 'at most 100' },
  ];
  const qb64 = ['!', 'A', '%zz', 'cGVy+GFnZT0y', '_w', 'cG=VyUGFnZT0y', 'q'.repeat(100_001)];
  return [
    ...[VALID.plain, VALID.token, VALID.macroOnly].flatMap((credential) => [...batches, ...unparsableBodies(`[${item}]`)].map((body) => bodyCase('POST', path, body, credential))),
    ...REFUSED.map((credential) => bodyCase('POST', path, { name: 'a valid batch', body: () => `[${item}]`, headers: JSON_TYPE, code: credential.code! }, credential)),
    ...['/_CheckSession', '/v1/versioninfo'].flatMap((target) =>
      REFUSED.map((credential) => ({ name: `GET ${target}: ${credential.name}`, method: 'GET', path: target, headers: credential.headers, expect: { code: credential.code! } })),
    ),
    ...qb64.map((value) => ({
      name: `GET /v1/objects/{class}?qb64=${short(value)}`,
      method: 'GET',
      path: `/v1/objects/Customer?qb64=${value}`,
      headers: VALID.plain.headers,
      expect: { code: '400', mentions: 'qb64' },
    })),
  ];
}

function logoutCases(): BadCase[] {
  return REFUSED.map((credential) => ({
    name: `POST /v1/logout: ${credential.name}`,
    method: 'POST',
    path: '/v1/logout',
    headers: credential.headers,
    expect: { code: credential.code! },
  }));
}

function objectCases(): BadCase[] {
  const get = (name: string, path: string, credential: Credential, code: string, mentions?: string): BadCase => ({
    name: `GET ${name}: ${credential.name}`,
    method: 'GET',
    path,
    headers: credential.headers,
    expect: { code, mentions },
  });
  const targets = [
    ['/v1/object/{id}', '/v1/object/CUS00001'],
    ['/v1/objects/{class}', '/v1/objects/Customer'],
    ['/v1/object/{class}', '/v1/object/Customer'],
  ] as const;
  const paths = [
    ['/v1/object/NOSUCH01', '404'],
    ['/v1/object/%zz', '400', 'percent-encoding'],
    ['/v1/object/%', '400', 'percent-encoding'],
    ['/v1/object/%E0%A4%A', '400', 'percent-encoding'],
    ['/v1/object/%C0%AF', '400', 'percent-encoding'],
    ['/v1/object/%ED%A0%80', '400', 'percent-encoding'],
    ['/v1/object/%FF', '400', 'percent-encoding'],
    ['/v1/object/%00', '404'],
    ['/v1/object/CUS00001%2Fx', '404'],
    ['/v1/object/customer', '404'],
    ['/v1/object/__proto__', '404'],
    ['/v1/object/constructor', '404'],
    ['/v1/object/hasOwnProperty', '404'],
    [`/v1/object/${'X'.repeat(129)}`, '400', '128'],
    [`/v1/object/${'X'.repeat(100_000)}`, '400', '128'],
    ['/v1/objects/%zz', '400', 'percent-encoding'],
    ['/v1/objects/__proto__', '400', 'class name'],
    [`/v1/objects/${'C'.repeat(129)}`, '400', '128'],
  ] as const;
  const queries = [
    ['page=-1', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
    ['page=1e3', 'page'],
    ['page=0x10', 'page'],
    ['page=%201', 'page'],
    ['page=99999999999', 'page'],
    ['perPage=-5', 'perPage'],
    ['perPage=abc', 'perPage'],
    ['perPage=1001', 'perPage'],
    ['perPage=1e3', 'perPage'],
    ['reverseOrder=yes', 'reverseOrder'],
    ['reverseOrder=1', 'reverseOrder'],
    ['query=not-json', 'query'],
    ['query=%5B1%5D', 'query'], // [1]
    ['query=%7B%22a%22%3A%7B%7D%7D', 'query'], // {"a":{}}
    ['query=%7B%22a%22%3A%5B1%5D%7D', 'query'], // {"a":[1]}
    ['query=%22Name%22', 'query'], // "Name"
    ['query=1', 'query'],
    ['query=null', 'query'],
    ['query=%7B', 'query'], // {
    ['query=%ZZ', 'query'],
    ['query=%7B%22_passwordHash%22%3A%22x%22%7D', '_passwordHash'], // {"_passwordHash":"x"}
    [`query=${encodeURIComponent(nestedArrays(10_000))}`, 'query'],
    [`query=${encodeURIComponent(JSON.stringify({ [`_${'f'.repeat(10_000)}`]: 'x' }))}`, '1 to 128 characters'],
    [`query=${encodeURIComponent(JSON.stringify({ ['f'.repeat(10_000)]: {} }))}`, '1 to 128 characters'],
    [`query=${encodeURIComponent(JSON.stringify({ Name: { $regex: 'x' } }))}`, 'unknown operator $regex'],
  ] as const;
  // what the studio reads (PROTOCOL.md 6.11): the credential as everywhere; referencedBy pages as listings
  const studio = [
    ['/v1/classes', '/v1/classes'],
    ['/v1/object/{id}/referencedBy', '/v1/object/EMP00001/referencedBy'],
  ] as const;
  return [
    ...[...targets, ...studio].flatMap(([name, path]) => REFUSED.map((credential) => get(name, path, credential, credential.code!))),
    ...[...targets, ...studio].map(([name, path]) => get(name, path, VALID.macroOnly, '307', 'macros')),
    ...queries.slice(0, 11).map(([query, mentions]) => get(`/v1/object/{id}/referencedBy?${short(query)}`, `/v1/object/EMP00001/referencedBy?${query}`, VALID.plain, '400', mentions)),
    ...['NOSUCH01', 'USR00002', 'Customer', '%00'].map((id) => get(`/v1/object/${id}/referencedBy`, `/v1/object/${id}/referencedBy`, VALID.plain, '404')),
    get('/v1/object/{long}/referencedBy', `/v1/object/${'X'.repeat(129)}/referencedBy`, VALID.plain, '400', '128'),
    ...paths.map(([path, code, mentions]) => get(short(path), path, VALID.plain, code, mentions)),
    ...paths.slice(0, 4).map(([path, code, mentions]) => get(short(path), path, VALID.token, code, mentions)),
    ...targets
      .slice(1)
      .flatMap(([name, path]) => queries.map(([query, mentions]) => get(`${name}?${short(query)}`, `${path}?${query}`, VALID.plain, '400', mentions))),
    // parameters are checked after the credential
    ...queries.slice(0, 3).map(([query]) => get(`/v1/objects/{class}?${short(query)}`, `/v1/objects/Customer?${query}`, REFUSED[0]!, '204')),
  ];
}

function routeCases(): BadCase[] {
  const route = (method: string, path: string, code: string, allow?: string): BadCase => ({
    name: `${short(method)} ${short(path)}: ${code === '405' ? 'wrong method' : 'no such route'}`,
    method,
    path,
    headers: (c) => ({ ...VALID.plain.headers(c), ...(method === 'GET' || method === 'HEAD' ? {} : JSON_TYPE) }),
    body: method === 'GET' || method === 'HEAD' ? undefined : () => '{}',
    expect: { code, allow },
  });
  return [
    route('GET', '/', '404'),
    route('GET', '/v1', '404'),
    route('GET', '/v1/', '404'),
    route('POST', '/v3/login', '404'),
    route('POST', '/V1/login', '404'),
    route('POST', '/v1/LOGIN', '404'),
    route('POST', '/v1//login', '404'),
    route('POST', '/v1/login/extra', '404'),
    route('GET', '/v1/object', '404'),
    route('GET', '/v1/objects', '404'),
    route('GET', '/v1/object/', '404'),
    route('GET', '/v1/object/CUS00001/extra', '404'),
    route('POST', '/v1/execute', '404'),
    route('POST', '/v1/execute/', '404'),
    route('GET', '/v1/object/%2e%2e', '404'),
    route('GET', '/favicon.ico', '404'),
    route('GET', `/${'a'.repeat(100_000)}`, '404'),
    route('GET', '/v1/login', '405', 'POST'),
    route('PUT', '/v1/login', '405', 'POST'),
    route('DELETE', '/v2/login', '405', 'POST'),
    route('PUT', '/v1/auth/df', '405', 'POST, GET'), // GET is the external login start, /v1/auth/{provider}
    route('GET', '/v1/logout', '405', 'POST'),
    route('GET', '/v1/execute/ping', '405', 'POST'),
    route('PATCH', '/v1/execute/ping', '405', 'POST'),
    route('PUT', '/v1/object/CUS00001', '405', 'GET, POST, PATCH, DELETE'),
    route('PUT', '/v1/objects/Customer', '405', 'GET, PATCH'),
    route('HEAD', '/v1/objects/Customer', '405', 'GET, PATCH'),
    route('OPTIONS', '/v1/login', '405', 'POST'),
    route('PROPFIND', '/v1/object/CUS00001', '405', 'GET, POST, PATCH, DELETE'),
    route('M'.repeat(10_000), '/v1/login', '405', 'POST'),
    route('M'.repeat(10_000), '/no/such/route', '404'),
    route('POST', '/v1/users', '405', 'GET'),
    route('DELETE', '/v1/users', '405', 'GET'),
  ];
}

/**
 * `GET /v1/users` (PROTOCOL.md 2.8, administrators): refused credentials, malformed pages (checked
 * before the group, so `400` for anyone), and `403` for a valid session where no `users.admins` group is set.
 */
function userListCases(): BadCase[] {
  const list = (name: string, path: string, credential: Credential, code: string, mentions?: string): BadCase => ({
    name: `GET /v1/users${name}: ${credential.name}`,
    method: 'GET',
    path,
    headers: credential.headers,
    expect: { code, mentions },
  });
  const pages: Array<[string, string]> = [
    ['?page=-1', 'page'],
    ['?page=x', 'page'],
    ['?page=1e3', 'page'],
    ['?page=1000000001', 'page'],
    ['?perPage=1001', 'perPage'],
    ['?perPage=0.5', 'perPage'],
    [`?perPage=${'9'.repeat(10_000)}`, 'perPage'],
  ];
  return [
    ...REFUSED.map((credential) => list('', '/v1/users', credential, credential.code!)),
    ...pages.map(([query, member]) => list(short(query), `/v1/users${query}`, VALID.plain, '400', member)),
    list('', '/v1/users', VALID.plain, '403', 'users.admins'),
    list('', '/v1/users', VALID.token, '403', 'users.admins'),
    list('?page=2&perPage=5', '/v1/users?page=2&perPage=5', VALID.plain, '403', 'users.admins'),
  ];
}

/** Each endpoint without, with an empty and with an unknown `appkey`: always `100`. */
function appKeyCases(): BadCase[] {
  const endpoints: Array<[string, string, Credential | undefined, string | undefined]> = [
    ['POST', '/v1/login', undefined, JSON.stringify(loginBody('alice', USERS.alice))],
    ['POST', '/v2/login', undefined, JSON.stringify(loginBody('alice', USERS.alice))],
    ['POST', '/v1/auth/df', undefined, JSON.stringify(loginBody('carol', CONTACTS.carol))],
    ['POST', '/v1/logout', VALID.plain, undefined],
    ['POST', '/v1/execute/ping', VALID.plain, '{}'],
    ['GET', '/v1/object/CUS00001', VALID.plain, undefined],
    ['GET', '/v1/objects/Customer', VALID.token, undefined],
    ['GET', '/v1/object/Customer?page=1', VALID.plain, undefined],
    ['GET', '/no/such/route', VALID.plain, undefined],
    ['DELETE', '/v1/login', undefined, undefined],
    ['GET', '/v1/object/%zz', VALID.plain, undefined],
    ['POST', '/v1/multi', VALID.plain, '[]'],
    ['GET', '/_CheckSession', VALID.plain, undefined],
    ['GET', '/v1/versioninfo', VALID.token, undefined],
  ];
  const keys: Array<[string, string | null]> = [
    ['no appkey', null],
    ['empty appkey', ''],
    ['unknown appkey', `${APP_KEY}-other`],
    ['appkey of 100 KB', 'k'.repeat(100_000)],
  ];
  return endpoints.flatMap(([method, path, credential, body]) =>
    keys.map(([what, appKey]) => ({
      name: `${method} ${path}: ${what}`,
      method,
      path,
      appKey,
      headers: (c: Ctx) => ({ ...(credential?.headers(c) ?? {}), ...(body ? JSON_TYPE : {}) }),
      body: body === undefined ? undefined : () => body,
      expect: { code: '100', mentions: 'appkey' },
    })),
  );
}

export function generateCases(): Record<string, BadCase[]> {
  return {
    'login bodies': loginCases(),
    'bodies refused before routing': transportCases(),
    'macro execution': executeCases(),
    logout: logoutCases(),
    'batches, checks and qb64': batchAndCheckCases(),
    'objects and listings': objectCases(),
    'unknown routes and wrong methods': routeCases(),
    'app keys': appKeyCases(),
    'user listing': userListCases(),
    'the console: run-time classes, metrics, requests, saved queries': consoleCases(),
  };
}

/**
 * PROTOCOL.md 6.12: refused credentials, malformed names, bodies and pages (checked before the admin
 * group, so `400` for anyone, as `GET /v1/users`), internal and host classes, and `403` where no
 * `users.admins` group is set (this suite's service sets none).
 */
function consoleCases(): BadCase[] {
  const json = { 'content-type': 'application/json' };
  const send = (method: string, path: string, credential: Credential, code: string, mentions?: string, body?: unknown): BadCase => ({
    name: `${method} ${short(path)}${body === undefined ? '' : ` ${label(JSON.stringify(body))}`}: ${credential.name}`,
    method,
    path,
    headers: (c) => ({ ...credential.headers(c), ...(body === undefined ? {} : json) }),
    body: body === undefined ? undefined : () => (typeof body === 'string' ? body : JSON.stringify(body)),
    expect: { code, mentions },
  });
  const ticket = { Fields: { Title: { Type: 'string' } } };
  const declarations: Array<[unknown, string]> = [
    [{}, 'Fields'],
    [{ Fields: [] }, 'Fields'],
    [{ Fields: { A: 'string' } }, 'Fields.A'],
    [{ Fields: { A: { Type: 'text' } } }, 'Type must be one of'],
    [{ Fields: { A: { Type: 'string', Required: 'yes' } } }, 'Required'],
    [{ Fields: { A: { Type: 'string', MaxLength: -1 } } }, 'MaxLength'],
    [{ Fields: { A: { Type: 'string', MaxLength: 1.5 } } }, 'MaxLength'],
    [{ Fields: { A: { Type: 'integer', Min: '1' } } }, 'Min'],
    [{ Fields: { A: { Type: 'integer', Min: 5, Max: 1 } } }, 'min 5 is above max 1'],
    [{ Fields: { A: { Type: 'boolean', Enum: [true] } } }, 'Enum'],
    [{ Fields: { A: { Type: 'string', Enum: [] } } }, 'enum'],
    [{ Fields: { A: { Type: 'ref' } } }, 'names the class'],
    [{ Fields: { A: { Type: 'ref', Class: '9x' } } }, 'names the class'],
    [{ Fields: { A: { Type: 'string', Class: 'Customer' } } }, 'class is for ref'],
    [{ Fields: { A: { Type: 'string', Unknown: 1 } } }, 'Unknown'],
    [{ Fields: { _secret: { Type: 'string' } } }, 'does not start with'],
    [{ Fields: { '': { Type: 'string' } } }, 'field'],
    [{ Fields: { [`x${'y'.repeat(128)}`]: { Type: 'string' } } }, '128'],
    [{ Fields: Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`F${i}`, { Type: 'string' }])) }, 'at most 200 fields'],
    [{ ...ticket, Indexes: ['Nope'] }, 'not a declared field'],
    [{ ...ticket, Indexes: 'Title' }, 'Indexes'],
    [{ ...ticket, Strict: 'true' }, 'Strict'],
    [{ ...ticket, Description: 'x'.repeat(2001) }, 'Description'],
    [{ ...ticket, Access: { read: '*' } }, 'Access.read'],
    [{ ...ticket, Access: { list: ['*'] } }, 'Access'],
    [{ ...ticket, Extra: 1 }, 'Extra'],
    ['[]', 'JSON object'],
    ['{"Fields":', 'JSON'],
  ];
  const queries: Array<[unknown, string]> = [
    [{ Class: 'Customer', Query: 'City =' }, 'query text'],
    [{ Class: 'Customer', Query: 'City = "x" and' }, 'query text'],
    [{ Class: 'Customer', Query: 'x'.repeat(2001) }, '2000'],
    [{ Class: 'Customer', Query: '_password = "x"' }, 'field name'],
    [{ Class: '9x', Query: '' }, 'Class'],
    [{ Class: 'Customer' }, 'Query'],
    [{ Query: '' }, 'Class'],
    [{ Class: 'Customer', Query: 1 }, 'Query'],
    [{ Class: 'Customer', Query: '', Name: 'other' }, 'differs'],
    [{ Class: 'Customer', Query: '', Columns: 'Name' }, 'Columns'],
    [{ Class: 'Customer', Query: '', Columns: Array.from({ length: 101 }, (_, i) => `c${i}`) }, '100'],
    [{ Class: 'Customer', Query: ' '.repeat(2001) }, 'Query has at most 2000'],
    [{ Class: 'Customer', Query: '', OrderBy: '_x' }, 'OrderBy'],
    [{ Class: 'Customer', Query: '', OrderBy: 5 }, 'OrderBy'],
    [{ Class: 'Customer', Query: '', Extra: true }, 'Extra'],
  ];
  return [
    ...REFUSED.flatMap((credential) => [
      send('PUT', '/v1/model/classes/Ticket', credential, credential.code!, undefined, ticket),
      send('DELETE', '/v1/model/classes/Ticket', credential, credential.code!),
      send('GET', '/v1/admin/metrics', credential, credential.code!),
      send('GET', '/v1/admin/requests', credential, credential.code!),
      send('GET', '/v1/savedQueries', credential, credential.code!),
      send('POST', '/v1/model/classes/Customer/check', credential, credential.code!, undefined, { Objects: [] }),
      send('PUT', '/v1/savedQueries/x', credential, credential.code!, undefined, { Class: 'Customer', Query: '' }),
    ]),
    ...declarations.map(([body, mentions], i) => ({ ...send('PUT', '/v1/model/classes/Ticket', VALID.plain, '400', mentions, body), name: `PUT /v1/model/classes/Ticket, declaration ${i} ${label(JSON.stringify(body))}` })),
    send('PUT', '/v1/model/classes/9lives', VALID.plain, '400', 'class name', ticket),
    send('PUT', `/v1/model/classes/${'A'.repeat(65)}`, VALID.plain, '400', 'class name', ticket),
    send('PUT', '/v1/model/classes/Ticket%20x', VALID.plain, '400', 'class name', ticket),
    send('PUT', '/v1/model/classes/%zz', VALID.plain, '400', 'percent-encoding', ticket),
    send('PUT', '/v1/model/classes/RecycledObject', VALID.plain, '400', 'internal', ticket),
    send('DELETE', '/v1/model/classes/ModelClass', VALID.plain, '400', 'internal'),
    send('PUT', '/v1/model/classes/Ticket', VALID.plain, '403', 'users.admins', ticket),
    send('PUT', '/v1/model/classes/Ticket', VALID.token, '403', 'users.admins', ticket),
    send('DELETE', '/v1/model/classes/Ticket', VALID.plain, '403', 'users.admins'),
    send('PUT', '/v1/model/classes/Ticket', VALID.macroOnly, '307', undefined, ticket),
    send('GET', '/v1/model/classes/Ticket', VALID.plain, '405'),
    // checking rows before an import (PROTOCOL.md 6.12)
    ...([
      [{}, 'Objects'],
      [{ Objects: 'x' }, 'Objects'],
      [{ Objects: {} }, 'Objects'],
      [{ Objects: Array.from({ length: 1001 }, () => ({})) }, '1000'],
      [{ Objects: [], Extra: 1 }, 'Extra'],
      ['[]', 'JSON object'],
    ] as Array<[unknown, string]>).map(([body, mentions], i) => ({ ...send('POST', '/v1/model/classes/Customer/check', VALID.plain, '400', mentions, body), name: `POST /v1/model/classes/Customer/check, body ${i}` })),
    send('POST', '/v1/model/classes/9lives/check', VALID.plain, '400', 'class name', { Objects: [] }),
    send('POST', '/v1/model/classes/NoSuchClass/check', VALID.plain, '404', 'NoSuchClass', { Objects: [] }),
    send('POST', '/v1/model/classes/RecycledObject/check', VALID.plain, '404', 'RecycledObject', { Objects: [] }),
    send('GET', '/v1/model/classes/Customer/check', VALID.plain, '405'),
    ...['0', '61', '-1', 'x', '1.5', '9'.repeat(1000)].map((minutes) => send('GET', `/v1/admin/metrics?minutes=${minutes}`, VALID.plain, '400', 'minutes')),
    send('GET', '/v1/admin/metrics', VALID.plain, '403', 'users.admins'),
    ...['page=-1', 'page=x', 'perPage=1001', 'perPage=0.5'].map((query) => send('GET', `/v1/admin/requests?${query}`, VALID.plain, '400', query.split('=')[0])),
    send('GET', '/v1/admin/requests', VALID.token, '403', 'users.admins'),
    send('POST', '/v1/admin/requests', VALID.plain, '405'),
    ...queries.map(([body, mentions], i) => ({ ...send('PUT', '/v1/savedQueries/view', VALID.plain, '400', mentions, body), name: `PUT /v1/savedQueries/view, body ${i} ${label(JSON.stringify(body))}` })),
    send('PUT', `/v1/savedQueries/${'q'.repeat(101)}`, VALID.plain, '400', '100', { Class: 'Customer', Query: '' }),
    send('DELETE', '/v1/savedQueries/never-saved', VALID.plain, '404', 'never-saved'),
    send('DELETE', '/v1/savedQueries/never-saved', VALID.token, '404', 'never-saved'),
    send('POST', '/v1/savedQueries', VALID.plain, '405'),
  ];
}

export { SECRET_PASS };
