// A Deno app with its own route and odbrest under /api.
// Run: npm run build && npx deno run --allow-net --allow-read --allow-env examples/deno/server.mjs
// (--allow-read: the package and the demo data; --allow-env: the options below. PORT=3000 by default.)
import { createDenoHandler, refuseMalformedHost } from 'odbrest/deno';
import { createDemoService, listeningLine } from '../demo-service.mjs';

const env = Deno.env.toObject();
const service = createDemoService(env, { basePath: '/api' });
await service.ready;
const api = createDenoHandler(service);

Deno.serve(
  {
    port: Number(env.PORT ?? 3000),
    hostname: env.HOST ?? '127.0.0.1',
    onListen: ({ hostname, port }) => console.log(listeningLine('deno', `http://${hostname}:${port}`)),
  },
  (request, info) => {
    // Deno puts the Host header in front of the path to make request.url: a Host that is not
    // host[:port] (`x/api/...?`) would change the path this app routes by.
    const refused = refuseMalformedHost(request);
    if (refused) return refused;
    const { pathname } = new URL(request.url);
    if (pathname === '/api' || pathname.startsWith('/api/')) return api(request, info);
    if (pathname === '/hello') return Response.json({ app: 'deno', message: 'hello from the app' });
    return new Response('not found', { status: 404 });
  },
);
