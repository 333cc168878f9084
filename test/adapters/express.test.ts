/** The Express middleware in real Express apps: mount points, body parsers before and after, fall-through. */
import express from 'express';
import { describe, expect, test } from 'vitest';
import { odbrest } from '../../adapters/express.js';
import { appRunner, bogusCallback, echoService, expectEcho, oauthService, okEnvelope, PARAMS, secureEcho, secureOptions, send, startExternalLogin, unknownStateEnvelope } from './listen.js';

const run = appRunner();


describe('mounted with app.use(path, ...)', () => {
  test.each([
    ['that keeps the raw body', () => express.json({ verify: (req, _res, buf) => void ((req as unknown as { rawBody?: Buffer }).rawBody = buf) })],
    ['without the raw body: the parsed value is sent again', () => express.json()],
  ])('under /api, after express.json() %s', async (_name, parser) => {
    const app = express();
    app.use(parser());
    app.use('/api', odbrest(await echoService('')));
    await expectEcho(`${await run(app)}/api`);
  });

  test('before express.json(): the service streams the body itself and the app still parses its own', async () => {
    const app = express();
    app.use('/api', odbrest(await echoService('')));
    app.use(express.json());
    app.post('/notes', (req, res) => void res.json({ received: req.body }));
    const origin = await run(app);
    await expectEcho(`${origin}/api`);
    const notes = await send(`${origin}/notes`, { json: { a: 1 } });
    expect([notes.status, notes.body]).toEqual([200, { received: { a: 1 } }]);
  });

  test('two levels deep, in a router mounted in the app', async () => {
    const router = express.Router();
    router.use('/odb', odbrest(await echoService('')));
    const app = express();
    app.use('/tenant', router);
    const origin = await run(app);
    await expectEcho(`${origin}/tenant/odb`);
  });

  test('paths the service has no route for reach the app, even without app key', async () => {
    const app = express();
    app.use('/api', odbrest(await echoService('')));
    app.get('/api/status', (_req, res) => void res.json({ status: 'up' }));
    const origin = await run(app);
    const status = await send(`${origin}/api/status`, { appKey: false });
    expect([status.status, status.body]).toEqual([200, { status: 'up' }]);
    const unknown = await send(`${origin}/api/v1/unknown`);
    expect([unknown.status, unknown.body]).toEqual([404, undefined]); // Express's own 404 page
    expect(unknown.text).toContain('Cannot GET /api/v1/unknown');
  });

  test('a known path with the wrong method is the service’s 405', async () => {
    const app = express();
    app.use('/api', odbrest(await echoService('')));
    const origin = await run(app);
    const answer = await send(`${origin}/api/v1/login`);
    expect([answer.status, answer.body.status.internalStatus, answer.body.data]).toEqual([405, '405', {}]);
  });
});

describe('without a mount path, using the service basePath', () => {
  test('serves /api and leaves the rest to the app', async () => {
    const app = express();
    app.use(odbrest(await echoService('/api')));
    app.get('/hello', (_req, res) => void res.json({ hello: 'app' }));
    const origin = await run(app);
    await expectEcho(`${origin}/api`);
    const hello = await send(`${origin}/hello`, { appKey: false });
    expect([hello.status, hello.body]).toEqual([200, { hello: 'app' }]);
  });
});

describe('malformed JSON is answered by the service', () => {
  const malformed = '{"user": "alice",';
  const expected = { status: { internalStatus: '400', statusMessage: 'request body is not valid JSON' }, data: {} };

  test.each([
    ['when express.json() before it failed to parse the body', true],
    ['when no parser ran', false],
  ])('%s', async (_when, withParser) => {
    const app = express();
    if (withParser) app.use(express.json());
    app.use('/api', odbrest(await echoService('')));
    const origin = await run(app);
    const answer = await send(`${origin}/api/v1/login`, { body: malformed });
    expect([answer.status, answer.body]).toEqual([400, expected]);
  });

  test('but not for the app’s own routes: their parse errors stay the app’s', async () => {
    const app = express();
    app.use(express.json());
    app.use('/api', odbrest(await echoService('')));
    app.post('/notes', (_req, res) => void res.json({}));
    const origin = await run(app);
    const answer = await send(`${origin}/notes`, { body: malformed });
    expect(answer.status).toBe(400);
    expect(answer.body).toBeUndefined(); // Express's HTML error page, not an envelope
  });
});

test('a body another middleware consumed without keeping it does not hang: it arrives empty', async () => {
  const app = express();
  app.use((req, _res, next) => {
    req.resume(); // drains the stream, keeps nothing
    req.on('end', () => next());
  });
  app.use('/api', odbrest(await echoService('')));
  const origin = await run(app);
  const answer = await send(`${origin}/api/v1/login`, { json: { user: 'alice' } });
  expect([answer.status, answer.body]).toEqual([400, { status: { internalStatus: '400', statusMessage: 'request body must be a JSON object' }, data: {} }]);
});

describe('encrypted bodies (secure transport) arrive as sent, whichever parser read them first', () => {
  const parsers = [
    ['none', undefined],
    ['express.json() (skips the type)', express.json()],
    ['express.text() for both types (the parsed string is sent on)', express.text({ type: ['application/text', 'text/plain'] })],
    ['express.raw() for any type (the bytes are sent on)', express.raw({ type: '*/*' })],
    ['express.json() for any type (fails on base64; the raw text is sent on)', express.json({ type: '*/*' })],
  ] as const;
  for (const contentType of ['application/text', 'text/plain']) {
    test.each(parsers)(`${contentType}, parser before the service: %s`, async (_name, parser) => {
      const app = express();
      if (parser) app.use(parser);
      app.use('/api', odbrest(await echoService('', secureOptions())));
      const origin = await run(app);
      expect(await secureEcho(`${origin}/api`, PARAMS, contentType)).toEqual({ status: 200, envelope: okEnvelope(PARAMS) });
    });
  }
});

describe('external login through the middleware', () => {
  test('the redirect names the callback from publicUrl, not from the mount or Host', async () => {
    const app = express();
    app.use('/api', odbrest(await oauthService('')));
    const origin = await run(app);
    expect(await startExternalLogin(`${origin}/api`)).toEqual({ status: 302, redirectUri: 'https://odbrest.example/api/v1/google/callback', body: '' });
  });

  test('a form POST callback parsed by express.urlencoded() first still reaches the service', async () => {
    const app = express();
    app.use(express.urlencoded({ extended: false }));
    app.use('/api', odbrest(await oauthService('')));
    const origin = await run(app);
    const answer = await bogusCallback(`${origin}/api`);
    expect([answer.status, answer.body]).toEqual([400, unknownStateEnvelope]);
  });
});
