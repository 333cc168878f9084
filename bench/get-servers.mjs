// The references of core's GET over HTTP, each started in its own process by core.bench.mjs:
//   node bench/get-servers.mjs floor    bare node:http answering the JSON from a Map (the floor)
//   node bench/get-servers.mjs adapter  odbrest's Node adapter around a bare handler doing the same
//   node bench/get-servers.mjs web      the same, the handler answering a plain web Response
//   node bench/get-servers.mjs srvx     srvx's Node adapter (toNodeHandler) around that web handler
//   node bench/get-servers.mjs hono     @hono/node-server's (getRequestListener) around it
// ODBREST_BENCH_ANSWERS is a JSON object of id -> the JSON text odbrest answers for GET /v1/object/{id},
// ODBREST_BENCH_TYPE its content type, so every server sends the same bytes.
import { createServer } from 'node:http';
import { textResponse } from '../dist/index.js';
import { createNodeHandler } from '../dist/node.js';

const PREFIX = '/v1/object/';
const answers = new Map(Object.entries(JSON.parse(process.env.ODBREST_BENCH_ANSWERS)));
const type = process.env.ODBREST_BENCH_TYPE;
const headers = { 'content-type': type };

const floor = (req, res) => {
  const text = req.url.startsWith(PREFIX) ? answers.get(req.url.slice(PREFIX.length)) : undefined;
  if (text === undefined) {
    res.statusCode = 404;
    res.end();
    return;
  }
  res.writeHead(200, headers);
  res.end(text);
};

/** A bare handler behind the adapter: `light` answers as the service does for the Node adapter, else a plain web Response. */
const bare = (light) => ({
  draining: false,
  fetch: async (request, context) => {
    const url = request.url;
    const text = answers.get(url.slice(url.lastIndexOf('/') + 1));
    if (text === undefined) return new Response(null, { status: 404 });
    return light ? textResponse(text, 200, headers, context?.lightResponses) : new Response(text, { headers });
  },
});

const kind = process.argv[2];
/** The other Node edges, each around the web handler (imported only when measured). */
const edges = {
  srvx: async () => (await import('srvx/node')).toNodeHandler(bare(false).fetch),
  hono: async () => (await import('@hono/node-server')).getRequestListener(bare(false).fetch),
};
const handler = kind in edges ? await edges[kind]() : { floor, adapter: createNodeHandler(bare(true)), web: createNodeHandler(bare(false)) }[kind];
if (!handler) throw new Error(`unknown server ${kind}`);
const server = createServer(handler);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => console.log(`${kind} listening on http://127.0.0.1:${server.address().port}`));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
