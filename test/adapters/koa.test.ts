/** The Koa middleware in real Koa apps: body parser before and after, mounting, fall-through. */
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import { describe, expect, test } from 'vitest';
import { odbrest } from '../../adapters/koa.js';
import { aliceLogin, appRunner, bogusCallback, echoService, expectEcho, oauthService, okEnvelope, PARAMS, secureEcho, secureOptions, send, startExternalLogin, unknownStateEnvelope } from './listen.js';

const run = appRunner();

/** The app's own routes, after the service. */
function appRoutes(app: Koa): void {
  app.use(async (ctx, next) => {
    if (ctx.path === '/api/status') ctx.body = { status: 'up' };
    else if (ctx.path === '/notes') ctx.body = { received: (ctx.request as { body?: unknown }).body };
    else await next();
  });
}

describe('with the service basePath', () => {
  test('after @koa/bodyparser, which keeps the raw body', async () => {
    const app = new Koa();
    app.use(bodyParser());
    app.use(odbrest(await echoService('/api')));
    const origin = await run(app);
    await expectEcho(`${origin}/api`);
  });

  test('before @koa/bodyparser: the service streams the body and the app still parses its own', async () => {
    const app = new Koa();
    app.use(odbrest(await echoService('/api')));
    app.use(bodyParser());
    appRoutes(app);
    const origin = await run(app);
    await expectEcho(`${origin}/api`);
    const notes = await send(`${origin}/notes`, { json: { a: 1 } });
    expect([notes.status, notes.body]).toEqual([200, { received: { a: 1 } }]);
  });

  test('a body type the parser skips (it sets body {} without reading) is streamed, not replaced', async () => {
    const app = new Koa();
    app.use(bodyParser());
    app.use(odbrest(await echoService('/api')));
    const origin = await run(app);
    const answer = await send(`${origin}/api/v1/login`, { body: JSON.stringify(aliceLogin), contentType: 'text/plain' });
    expect([answer.status, answer.body]).toEqual([415, { status: { internalStatus: '415', statusMessage: 'Content-Type must be application/json' }, data: {} }]);
  });

  test('paths the service has no route for reach the app, even without app key', async () => {
    const app = new Koa();
    app.use(bodyParser());
    app.use(odbrest(await echoService('/api')));
    appRoutes(app);
    const origin = await run(app);
    const status = await send(`${origin}/api/status`, { appKey: false });
    expect([status.status, status.body]).toEqual([200, { status: 'up' }]);
    const unknown = await send(`${origin}/api/v1/unknown`);
    expect([unknown.status, unknown.text]).toEqual([404, 'Not Found']); // Koa's own 404
    const outside = await send(`${origin}/elsewhere`, { appKey: false });
    expect([outside.status, outside.text]).toEqual([404, 'Not Found']);
  });

  test('error envelopes keep their status and headers', async () => {
    const app = new Koa();
    app.use(odbrest(await echoService('/api')));
    const origin = await run(app);
    const response = await fetch(`${origin}/api/v1/login`, { headers: { appkey: 'adapter-test' } });
    expect([response.status, response.headers.get('allow'), response.headers.get('content-type')]).toEqual([405, 'POST', 'application/json; charset=utf-8']);
    expect((await response.json()).status.internalStatus).toBe('405');
  });
});

test('under a mount point that rewrites ctx.path (as koa-mount does), with no basePath', async () => {
  const middleware = odbrest(await echoService(''));
  const app = new Koa();
  app.use(bodyParser());
  app.use(async (ctx, next) => {
    if (!ctx.path.startsWith('/tenant/odb/')) return next();
    const original = ctx.path;
    ctx.path = original.slice('/tenant/odb'.length);
    try {
      await middleware(ctx, next);
    } finally {
      ctx.path = original;
    }
  });
  const origin = await run(app);
  await expectEcho(`${origin}/tenant/odb`);
});

describe('encrypted bodies (secure transport) arrive as sent, whichever parser read them first', () => {
  const parsers = [
    ['bodyParser() (skips both types)', {}],
    ['bodyParser() parsing both types as text (keeps rawBody)', { enableTypes: ['json', 'text'], extendTypes: { text: ['application/text', 'text/plain'] } }],
  ] as const;
  for (const contentType of ['application/text', 'text/plain']) {
    test.each(parsers)(`${contentType}, parser before the service: %s`, async (_name, options) => {
      const app = new Koa();
      app.use(bodyParser(options as Parameters<typeof bodyParser>[0]));
      app.use(odbrest(await echoService('/api', secureOptions())));
      const origin = await run(app);
      expect(await secureEcho(`${origin}/api`, PARAMS, contentType)).toEqual({ status: 200, envelope: okEnvelope(PARAMS) });
    });
  }
});

describe('external login through the middleware', () => {
  test('the redirect (a response without body) keeps its status and Location', async () => {
    const app = new Koa();
    app.use(odbrest(await oauthService('/api')));
    const origin = await run(app);
    expect(await startExternalLogin(`${origin}/api`)).toEqual({ status: 302, redirectUri: 'https://odbrest.example/api/v1/google/callback', body: '' });
  });

  test('a form POST callback parsed by bodyParser() first still reaches the service', async () => {
    const app = new Koa();
    app.use(bodyParser());
    app.use(odbrest(await oauthService('/api')));
    const origin = await run(app);
    const answer = await bogusCallback(`${origin}/api`);
    expect([answer.status, answer.body]).toEqual([400, unknownStateEnvelope]);
  });
});

describe('malformed JSON (as the README says)', () => {
  const malformed = '{"user": "alice",';

  test('with odbrest first, the service answers it with its 400 envelope', async () => {
    const app = new Koa();
    app.use(odbrest(await echoService('/api')));
    app.use(bodyParser());
    const answer = await send(`${await run(app)}/api/v1/login`, { body: malformed });
    expect([answer.status, answer.body]).toEqual([400, { status: { internalStatus: '400', statusMessage: 'request body is not valid JSON' }, data: {} }]);
  });

  test('with bodyParser() first, the parser answers it (not an envelope)', async () => {
    const app = new Koa();
    app.silent = true; // the parser's error is expected here
    app.use(bodyParser());
    app.use(odbrest(await echoService('/api')));
    const answer = await send(`${await run(app)}/api/v1/login`, { body: malformed });
    expect(answer.status).toBe(400);
    expect(answer.body?.status).toBeUndefined();
  });
});
