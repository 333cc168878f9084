// The demo's browsable API reference: Swagger UI (the swagger-ui-dist package, served from
// node_modules, no CDN) showing the service's own GET {base}/openapi.json.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const dist = createRequire(import.meta.url)('swagger-ui-dist').getAbsoluteFSPath();
/** The files of swagger-ui-dist the page loads, by the name it asks for under /docs/. */
const ASSETS = { 'swagger-ui.css': 'text/css; charset=utf-8', 'swagger-ui-bundle.js': 'text/javascript; charset=utf-8' };

const page = (specUrl) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>odbrest API reference</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body>
<div id="reference"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>
// operations grouped by tag (the document's tags, in its order), each tag's description beside it;
// /docs?expand=full opens every operation with its examples, /docs?expand=none closes the tags too
const expand = new URLSearchParams(location.search).get('expand');
SwaggerUIBundle({ url: ${JSON.stringify(specUrl)}, dom_id: '#reference', deepLinking: true, docExpansion: ['full', 'none'].includes(expand) ? expand : 'list', defaultModelsExpandDepth: -1 });
</script>
</body>
</html>
`;

/**
 * A Node `(req, res)` handler for `GET /docs` (the page) and its two assets; answers `false` for any
 * other request, which the caller hands to the service. `specUrl` is where the service serves its
 * document (`{base}/openapi.json`).
 */
export function docsPage(specUrl) {
  return (req, res) => {
    const url = req.url ?? '/';
    if (url.startsWith('/') && !url.startsWith('/docs')) return false; // every API request, without parsing its URL
    const path = new URL(url, 'http://docs').pathname;
    if (req.method !== 'GET' || !(path === '/docs' || path === '/docs/' || Object.hasOwn(ASSETS, path.slice('/docs/'.length)))) return false;
    const asset = path.slice('/docs/'.length);
    if (!asset) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(specUrl));
      return true;
    }
    readFile(join(dist, asset)).then(
      (bytes) => res.writeHead(200, { 'content-type': ASSETS[asset], 'cache-control': 'public, max-age=3600' }).end(bytes),
      () => res.writeHead(500).end(),
    );
    return true;
  };
}
