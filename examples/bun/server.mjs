// A Bun app with its own route and odbrest under /api, on Bun.serve's route table.
// Run: npm run build && npx bun examples/bun/server.mjs   (PORT=3000 by default)
import { createBunHandler } from 'odbrest/bun';
import { createDemoService, listeningLine } from '../demo-service.mjs';

const service = createDemoService(process.env, { basePath: '/api' });
await service.ready;
const api = createBunHandler(service);

const server = Bun.serve({
  port: Number(process.env.PORT ?? 3000),
  hostname: process.env.HOST ?? '127.0.0.1',
  routes: {
    '/hello': () => Response.json({ app: 'bun', message: 'hello from the app' }),
    '/api/*': api,
  },
  fetch: () => new Response('not found', { status: 404 }),
});
console.log(listeningLine('bun', `http://${server.hostname}:${server.port}`));
