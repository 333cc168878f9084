// A plain Node http app with its own route and odbrest under /api.
// Run: npm run build && node examples/node/app.mjs   (PORT=3000 by default)
import { createServer } from 'node:http';
import { createNodeHandler } from 'odbrest/node';
import { createDemoService, listeningLine } from '../demo-service.mjs';

const service = createDemoService(process.env, { basePath: '/api' });
await service.ready;
const api = createNodeHandler(service);

const server = createServer((req, res) => {
  const { pathname } = new URL(req.url ?? '/', 'http://localhost');
  if (pathname === '/api' || pathname.startsWith('/api/')) return api(req, res);
  if (pathname === '/hello') {
    res.setHeader('content-type', 'application/json');
    return res.end(JSON.stringify({ app: 'node', message: 'hello from the app' }));
  }
  res.statusCode = 404;
  res.end('not found');
});
const host = process.env.HOST ?? '127.0.0.1';
server.listen(Number(process.env.PORT ?? 3000), host, () => {
  console.log(listeningLine('node', `http://${host}:${server.address().port}`));
});
