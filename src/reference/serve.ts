/**
 * The API reference page (`apiReference`): Swagger UI on the service's own `GET {base}/openapi.json`,
 * served by the service itself from files the host hands over (no CDN: the page loads nothing from
 * another origin). The core reads no files, so Swagger UI's two files come in the option; on Node,
 * `swaggerUiFiles()` of `odbrest/node` reads them from the `swagger-ui-dist` package, an optional peer
 * (12 MB installed, and a postinstall script), which `odbrest serve` loads only when the page is on.
 */
import { ApiError, clip } from '../http/errors.js';
import { gzipOnce, normalPath, notGet, refusal } from '../studio/serve.js';

/** The two files of Swagger UI the page loads: `swagger-ui-bundle.js` and `swagger-ui.css` of swagger-ui-dist. */
export interface SwaggerUiFiles {
  script: string;
  style: string;
}

export interface ApiReferenceOptions {
  /** Where the page is served, relative to the service root (after the base path and alias). Default `/docs`. */
  path?: string;
  /** Swagger UI's files (`await swaggerUiFiles()` from `odbrest/node` on Node). */
  swaggerUi: SwaggerUiFiles;
}

/**
 * No script, style or connection but the service's own (the page's start is a file, not an inline
 * script); Swagger UI sets style attributes and draws icons from data: URLs.
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

export class ApiReference {
  /** The page's path relative to the service root, without a trailing slash (`/docs`). */
  readonly path: string;
  readonly #page: string;
  readonly #files: Readonly<Record<string, { type: string; text: string }>>;
  readonly #gzipped = new Map<string, Promise<Uint8Array<ArrayBuffer>>>();

  constructor(options: ApiReferenceOptions) {
    if (typeof options?.swaggerUi?.script !== 'string' || typeof options.swaggerUi.style !== 'string') {
      throw new Error('apiReference.swaggerUi must hold the text of Swagger UI\'s script and style (swaggerUiFiles() of odbrest/node reads them)');
    }
    this.path = normalPath(options.path ?? '/docs', 'apiReference.path').slice(0, -1);
    // relative addresses, so the page holds under any base path, alias or proxy: /api/docs -> /api/openapi.json, /api/docs/...
    const segments = this.path.split('/').filter(Boolean);
    const name = segments.at(-1)!;
    const spec = `${'../'.repeat(segments.length - 1)}openapi.json`;
    this.#page =
      '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
      `<title>API reference</title>\n<link rel="icon" href="data:,">\n<link rel="stylesheet" href="${name}/swagger-ui.css">\n</head>\n<body>\n<div id="reference"></div>\n` +
      `<script src="${name}/swagger-ui-bundle.js"></script>\n<script src="${name}/start.js"></script>\n</body>\n</html>\n`;
    // operations grouped by tag; ?expand=full opens every operation with its examples, ?expand=none closes the tags too
    const start =
      "const expand = new URLSearchParams(location.search).get('expand');\n" +
      `SwaggerUIBundle({ url: new URL(${JSON.stringify(spec)}, location.href).href, dom_id: '#reference', deepLinking: true, ` +
      "docExpansion: ['full', 'none'].includes(expand) ? expand : 'list', defaultModelsExpandDepth: -1 });\n";
    this.#files = {
      'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', text: options.swaggerUi.script },
      'swagger-ui.css': { type: 'text/css; charset=utf-8', text: options.swaggerUi.style },
      'start.js': { type: 'text/javascript; charset=utf-8', text: start },
    };
  }

  /** Whether `path` (relative to the service root) is the page's or one of its files'. */
  claims(path: string): boolean {
    return path === this.path || path.startsWith(`${this.path}/`);
  }

  /** The page, one of its files, or an error envelope. */
  async answer(request: Request, path: string): Promise<Response> {
    const headers = new Headers(SECURITY_HEADERS);
    const refuse = refusal(headers);
    if (request.method !== 'GET' && request.method !== 'HEAD') return refuse(notGet(request));
    const body = (content: BodyInit) => (request.method === 'HEAD' ? null : content);
    if (path === this.path || path === `${this.path}/`) {
      if (path.endsWith('/')) {
        // the page's addresses are relative to /docs, not /docs/
        headers.set('location', `../${this.path.slice(this.path.lastIndexOf('/') + 1)}`);
        return new Response(null, { status: 308, headers });
      }
      headers.set('content-type', 'text/html; charset=utf-8');
      headers.set('cache-control', 'no-cache');
      return new Response(body(this.#page), { headers });
    }
    const name = path.slice(this.path.length + 1);
    const file = Object.hasOwn(this.#files, name) ? this.#files[name] : undefined;
    if (!file) return refuse(new ApiError('404', `the API reference has no file ${clip(name)}`));
    headers.set('content-type', file.type);
    headers.set('cache-control', 'public, max-age=3600');
    headers.set('vary', 'accept-encoding');
    if (!/\bgzip\b/.test(request.headers.get('accept-encoding') ?? '') || typeof CompressionStream === 'undefined') return new Response(body(file.text), { headers });
    const gzipped = await gzipOnce(this.#gzipped, name, file.text);
    headers.set('content-encoding', 'gzip');
    headers.set('content-length', String(gzipped.byteLength));
    return new Response(body(gzipped), { headers });
  }
}
