// An existing Koa 3 app with its own routes and body parser, and odbrest serving /api.
// Run: npm run build && node examples/koa/server.mjs   (PORT=3000 by default)
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import { odbrest } from 'odbrest/koa';
import { createDemoService, listeningLine } from '../demo-service.mjs';

// Koa has no mount paths of its own, so the service's basePath (/api) selects its requests.
const service = createDemoService(process.env, { basePath: '/api' });
await service.ready;

const app = new Koa();
// The app's parser runs first; it keeps the raw text in ctx.request.rawBody, which odbrest forwards.
app.use(bodyParser());
app.use(odbrest(service));
app.use(async (ctx, next) => {
  // The app's own routes; /api/status is under /api but not an odbrest route, so it reaches here.
  if (ctx.method === 'GET' && ctx.path === '/hello') ctx.body = { app: 'koa', message: 'hello from the app' };
  else if (ctx.method === 'GET' && ctx.path === '/api/status') ctx.body = { app: 'koa', status: 'up' };
  else if (ctx.method === 'POST' && ctx.path === '/notes') ctx.body = { app: 'koa', received: ctx.request.body };
  else await next();
});

const host = process.env.HOST ?? '127.0.0.1';
const server = app.listen(Number(process.env.PORT ?? 3000), host, () => {
  console.log(listeningLine('koa', `http://${host}:${server.address().port}`));
});
