/**
 * The studio (studio/, PROTOCOL.md 6.11): the data browser the service serves itself when the host
 * turns it on. The server knows it only as static files, built into assets.generated.js at package
 * build time: an index.html with relative asset paths (it works under any base path and alias; the
 * app routes by the hash) and hashed, immutable scripts and styles, all under a strict CSP. The
 * studio is a client of the API like any other: it logs in, and reads through odbrest/client.
 */
import { errorResponse } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import type { FileSettings } from '../files/settings.js';

export interface StudioOptions {
  /** Where the studio is served, relative to the service root (after the base path and alias). Default `/_studio/`. */
  path?: string;
  /** The `appkey` its requests send. Default: the first of the service's `appKeys`, else `odbrest-studio`. */
  appKey?: string;
  /** The applications its login form proposes (the login's `appNames`); the person may change them. Default none. */
  appNames?: readonly string[];
  /**
   * The address of the host's API reference page on the service's `/openapi.json` (Swagger UI, as the
   * demo's `/docs`): a path (`/docs`) or an http(s) URL. "For developers" then links the operation
   * shown (`#/{tag}/{operationId}`, Swagger UI's deep link). Default none: no link.
   */
  docs?: string;
}

/**
 * Every answer of the studio carries these: no script, style or connection but the service's own
 * (no inline script or style, no eval), never in a frame, no content sniffing, no referrer. Its one
 * frame is a blob: URL, the PDF preview: the studio frames only blobs it typed application/pdf
 * itself, which the browser hands to its PDF viewer (studio/src/features/files.tsx, docs/studio.md).
 */
export const STUDIO_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; frame-src blob:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const SEGMENT = /^[A-Za-z0-9_.~-]+$/;
const RESERVED = new Set(['v1', 'v2', 'openapi.json', '.', '..']);

/** `/name/` from `name`, `/name`, `name/` ...; throws for a path that could shadow a route (`option` names it). */
export function normalPath(path: string, option = 'studio.path'): string {
  const segments = path.split('/').filter(Boolean);
  if (segments.length === 0 || !segments.every((segment) => SEGMENT.test(segment)) || RESERVED.has(segments[0]!) || segments[0]!.startsWith('_Check')) {
    throw new Error(`${option} ${JSON.stringify(path)} is not allowed (path segments of letters, digits, _ . ~ -; not under v1, v2, _Check* or openapi.json)`);
  }
  return `/${segments.join('/')}/`;
}

/** The `docs` option as given, when it is a path of the host or an http(s) URL (never `javascript:` and the like): the page adds the operation's `#` part. */
function docsAddress(docs: string | undefined): string | undefined {
  if (docs === undefined) return undefined;
  const path = docs.startsWith('/') && !docs.startsWith('//');
  if (!(path || /^https?:\/\/[^/\s]/i.test(docs)) || !URL.canParse(docs, 'http://host') || /[\s#]/.test(docs)) {
    throw new Error(`studio.docs ${JSON.stringify(docs)} is not allowed (a path of the host, as /docs, or an http(s) URL, without a # part)`);
  }
  return docs;
}

const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface Built {
  index: string;
  files: Readonly<Record<string, { type: string; text: string }>>;
  gzipped: Map<string, Promise<Uint8Array<ArrayBuffer>>>;
}

/** Where the studio of `option` is served, relative to the service root: `/_studio/` unless given. */
export const studioPath = (option: true | StudioOptions): string => normalPath((option === true ? undefined : option.path) ?? '/_studio/');

export class Studio {
  /** The studio's path relative to the service root, with both slashes (`/_studio/`). */
  readonly path: string;
  readonly #config: string;
  #built: Promise<Built> | undefined;

  constructor(option: true | StudioOptions, service: { appKeys?: readonly string[]; files: Pick<FileSettings, 'className' | 'maxUploadBytes'> }) {
    const options = option === true ? {} : option;
    this.path = studioPath(option);
    // the page finds the service relative to itself, so a proxy in front may move both together
    const api = '../'.repeat(this.path.split('/').filter(Boolean).length);
    const docs = docsAddress(options.docs);
    this.#config = JSON.stringify({
      api,
      appKey: options.appKey ?? service.appKeys?.[0] ?? 'odbrest-studio',
      appNames: options.appNames ?? [],
      // the file class's table offers uploads, and a file larger than the service takes is refused before it is sent
      fileClass: service.files.className,
      maxUploadBytes: service.files.maxUploadBytes,
      ...(docs ? { docs } : {}),
    });
  }

  /** Whether `path` (relative to the service root) is the studio's. */
  claims(path: string): boolean {
    return path.startsWith(this.path) || path === this.path.slice(0, -1);
  }

  /** The answer to a request for one of the studio's paths: the page, a file, or an error envelope. */
  async answer(request: Request, path: string): Promise<Response> {
    const headers = new Headers(STUDIO_SECURITY_HEADERS);
    const refuse = refusal(headers);
    if (request.method !== 'GET' && request.method !== 'HEAD') return refuse(notGet(request));
    if (path === this.path.slice(0, -1)) {
      // relative, so it holds behind any proxy: `/api/_studio` -> `/api/_studio/`
      headers.set('location', `${path.slice(path.lastIndexOf('/') + 1)}/`);
      return new Response(null, { status: 308, headers });
    }
    let built: Built;
    try {
      built = await (this.#built ??= this.#build());
    } catch {
      this.#built = undefined;
      return refuse(new ApiError('503', 'the studio is not built into this copy of odbrest (npm run build makes it)'));
    }
    const name = path.slice(this.path.length);
    if (name === '' || name === 'index.html') {
      headers.set('content-type', 'text/html; charset=utf-8');
      headers.set('cache-control', 'no-cache');
      return new Response(request.method === 'HEAD' ? null : built.index, { headers });
    }
    const file = Object.hasOwn(built.files, name) ? built.files[name] : undefined;
    if (!file) return refuse(new ApiError('404', `the studio has no file ${clip(name)}`));
    headers.set('content-type', file.type);
    // the names carry a hash of the content: a name never changes what it holds
    headers.set('cache-control', 'public, max-age=31536000, immutable');
    headers.set('etag', `"${name}"`);
    headers.set('vary', 'accept-encoding');
    if (request.headers.get('if-none-match') === `"${name}"`) return new Response(null, { status: 304, headers });
    if (!/\bgzip\b/.test(request.headers.get('accept-encoding') ?? '') || typeof CompressionStream === 'undefined') {
      return new Response(request.method === 'HEAD' ? null : file.text, { headers });
    }
    const gzipped = await gzipOnce(built.gzipped, name, file.text);
    headers.set('content-encoding', 'gzip');
    headers.set('content-length', String(gzipped.byteLength));
    return new Response(request.method === 'HEAD' ? null : gzipped, { headers });
  }

  async #build(): Promise<Built> {
    const { studioBuild, studioFiles } = await import('./assets.generated.js');
    const style = studioBuild.style ? `<link rel="stylesheet" href="${studioBuild.style}">\n` : '';
    const index =
      '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
      `<meta name="odbrest-studio" content="${escapeAttribute(this.#config)}">\n<title>odbrest studio</title>\n<link rel="icon" href="data:,">\n${style}` +
      `<script type="module" src="${studioBuild.script}"></script>\n</head>\n<body>\n<div id="studio"></div>\n` +
      '<noscript>The studio needs JavaScript.</noscript>\n</body>\n</html>\n';
    return { index, files: studioFiles, gzipped: new Map() };
  }
}

/** An error envelope that carries a static page's headers. */
export function refusal(headers: Headers): (error: ApiError) => Response {
  return (error) => {
    const response = errorResponse(error);
    headers.forEach((value, name) => response.headers.set(name, value));
    return response;
  };
}

/** The refusal of a method other than GET and HEAD on a static page. */
export const notGet = (request: Request) => new ApiError('405', `method ${clip(request.method)} not allowed here; use GET`, { headers: { allow: 'GET, HEAD' } });

/** A file's gzip form, made once per file on first request (CompressionStream: every runtime has it). */
export function gzipOnce(cache: Map<string, Promise<Uint8Array<ArrayBuffer>>>, name: string, text: string): Promise<Uint8Array<ArrayBuffer>> {
  let found = cache.get(name);
  if (!found) {
    found = new Response(new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'))).arrayBuffer().then((buffer) => new Uint8Array(buffer));
    cache.set(name, found);
  }
  return found;
}
