// An existing Express 5 app with its own routes and body parser, and odbrest mounted under /api.
// Run: npm run build && node examples/express/server.mjs   (PORT=3000 by default)
import express from 'express';
import { odbrest } from 'odbrest/express';
import { createDemoService, listeningLine } from '../demo-service.mjs';

// Express strips the mount path (/api) before odbrest sees the request: no basePath in the service.
const service = createDemoService(process.env, { basePath: '' });
await service.ready;

const app = express();
// The app's JSON parser runs first; keeping the raw bytes lets odbrest read the body exactly as sent
// (without `verify`, odbrest would serialize the parsed value again).
app.use(express.json({ verify: (req, _res, buf) => void (req.rawBody = buf) }));
app.get('/hello', (_req, res) => res.json({ app: 'express', message: 'hello from the app' }));
app.use('/api', odbrest(service));
// Paths under /api that odbrest has no route for fall through to the app.
app.get('/api/status', (_req, res) => res.json({ app: 'express', status: 'up' }));
app.post('/notes', (req, res) => res.json({ app: 'express', received: req.body }));

const server = app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
  console.log(listeningLine('express', `http://${process.env.HOST ?? '127.0.0.1'}:${server.address().port}`));
});
