/**
 * Telemetry (issue 29): with an OpenTelemetry SDK registered, as a host would register one, requests
 * become server spans with their store calls as children, and the metrics carry the route template,
 * never the path. Without one, nothing is recorded (the API's no-ops).
 */
import { context, metrics, propagation, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryObjectStore, type Service } from '../../src/index.js';
import { call, demoData, demoService, login, loginBody, USERS } from '../helpers.js';

const spans = new InMemorySpanExporter();
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 60_000 });
let service: Service;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  service = await demoService();
});
afterAll(() => {
  trace.disable();
  metrics.disable();
  context.disable();
  propagation.disable();
});

/** A member of `target`, its methods bound to it (private fields need the real object as `this`). */
const bound = (target: object, property: PropertyKey) => {
  const value = Reflect.get(target, property, target);
  return typeof value === 'function' ? value.bind(target) : value;
};

/** The data points of one metric after a collection. */
async function points(name: string) {
  await reader.forceFlush();
  const batches: ResourceMetrics[] = metricExporter.getMetrics();
  const last = batches[batches.length - 1]!;
  const metric = last.scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []) as Array<{ attributes: Record<string, unknown>; value: any }>;
}

describe('with an SDK registered', () => {
  it('a GET is one server span named by its route template, with the store calls as its children', async () => {
    const sessionId = await login(service);
    spans.reset();
    const got = await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId } });
    expect(got.status).toBe(200);
    const finished = spans.getFinishedSpans();
    const server = finished.find((span) => span.name === 'GET /v1/object/:id');
    expect(server, finished.map((s) => s.name).join(', ')).toBeDefined();
    expect(server!.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/v1/object/:id', 'http.response.status_code': 200, 'odbrest.internal_status': '0' });
    const children = finished.filter((span) => span.parentSpanContext?.spanId === server!.spanContext().spanId);
    expect(children.map((span) => span.name)).toEqual(expect.arrayContaining(['getAndExpire odbrest.memory', 'get odbrest.memory']));
    expect(children.every((span) => span.spanContext().traceId === server!.spanContext().traceId)).toBe(true);
  });

  it('a client span\'s traceparent is continued: the server span is its child, in its trace', async () => {
    spans.reset();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const got = await call(service, 'GET', '/v1/object/CUS00001', { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, tracestate: 'congo=t61rcWkgMzE' } });
    expect(got.status).toBe(401);
    const server = spans.getFinishedSpans().find((span) => span.name === 'GET /v1/object/:id')!;
    expect(server.spanContext().traceId).toBe(traceId);
    expect(server.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(server.spanContext().traceState?.get('congo')).toBe('t61rcWkgMzE');
    expect(server.attributes['error.type']).toBeUndefined(); // a 4xx is the client's failure, not the server's
  });

  it('request durations by route template and status, never by path', async () => {
    const sessionId = await login(service);
    await call(service, 'GET', '/v1/object/CUS00002', { headers: { sessionId } });
    await call(service, 'GET', '/v1/object/NOSUCH01', { headers: { sessionId } });
    const durations = await points('http.server.request.duration');
    const routes = durations.map((point) => point.attributes['http.route']);
    expect(routes).toContain('/v1/object/:id');
    expect(routes.some((route) => typeof route === 'string' && route.includes('CUS0000'))).toBe(false);
    const missing = durations.find((point) => point.attributes['http.route'] === '/v1/object/:id' && point.attributes['http.response.status_code'] === 404);
    expect(missing?.attributes['odbrest.internal_status']).toBe('404');
    expect(missing?.value.count).toBeGreaterThanOrEqual(1);
  });

  it('logins by result, refusals of the failed-login limit, and active sessions', async () => {
    const limited = await demoService({ loginLimit: { perUser: 2 } });
    const attempt = (pass: string) => call(limited, 'POST', '/v1/login', { json: loginBody('bob', pass) });
    expect((await attempt('wrong-1')).body.status.internalStatus).toBe('302');
    expect((await attempt('wrong-2')).body.status.internalStatus).toBe('302');
    expect((await attempt(USERS.bob)).body.status.internalStatus).toBe('303');
    const logins = await points('odbrest.login.attempts');
    const count = (result: string) => logins.filter((p) => p.attributes['odbrest.login.result'] === result).reduce((sum, p) => sum + p.value, 0);
    expect(count('302')).toBeGreaterThanOrEqual(2);
    expect(count('303')).toBeGreaterThanOrEqual(1);
    expect((await points('odbrest.login.refusals')).reduce((sum, p) => sum + p.value, 0)).toBeGreaterThanOrEqual(1);

    const active = async () => (await points('odbrest.session.active')).reduce((sum, p) => sum + p.value, 0);
    const before = await active();
    const sessionId = await login(service);
    expect(await active()).toBe(before + 1);
    await call(service, 'POST', '/v1/logout', { headers: { sessionId } });
    expect(await active()).toBe(before);
  });

  it('mail by outcome: a try that failed and is repeated, a mail sent, a mail given up', async () => {
    const tries: string[] = [];
    let failures = 0;
    const mailer = {
      send: async (mail: { to: unknown }) => {
        tries.push(String(mail.to));
        if (failures-- > 0) throw new Error('421 try later');
      },
    };
    const data = demoData();
    const erin = { '~ClassName': 'User', '~ObjectID': 'USRMAIL1', Name: 'erin', Email: 'erin@example.com', _password: 'erin-first-secret', _licences: ['crm'] };
    const mailing = await demoService({ data: { ...data, objects: [...data.objects, erin] }, mail: { mailer, from: 'noreply@example.com', resetLink: 'https://app.example.com/reset?token={token}', retries: 1, retryDelayMs: 1 } });
    const count = async (outcome: string) => (await points('odbrest.mail.messages')).filter((p) => p.attributes['odbrest.mail.outcome'] === outcome).reduce((sum, p) => sum + p.value, 0);
    const before = { sent: await count('sent'), failed: await count('failed'), retried: await count('retried') };
    const reset = async () => {
      const asked = tries.length;
      expect((await call(mailing, 'POST', '/v1/user/password/reset', { json: { user: 'erin' } })).body.status.internalStatus).toBe('0');
      await expect.poll(() => tries.length).toBe(asked + 2);
      await new Promise((resolve) => setTimeout(resolve, 20));
    };
    failures = 1; // fails once, then goes
    await reset();
    failures = 2; // fails twice: given up after its one retry
    await reset();
    expect({ sent: await count('sent'), failed: await count('failed'), retried: await count('retried') }).toEqual({ sent: before.sent + 1, failed: before.failed + 1, retried: before.retried + 2 });
    await mailing.close();
  });

  it('a failing store call is an error span and counted with its error type', async () => {
    const store = new MemoryObjectStore();
    // an outage of one object's reads
    const broken = await demoService({
      store: new Proxy(store, {
        get: (target, property) =>
          property === 'get' ? (id: string) => (id === 'CUS00001' ? Promise.reject(new Error('disk on fire')) : target.get(id)) : bound(target, property),
      }),
    });
    const sessionId = await login(broken);
    spans.reset();
    expect((await call(broken, 'GET', '/v1/object/CUS00001', { headers: { sessionId } })).status).toBe(500);
    const failed = spans.getFinishedSpans().find((span) => span.name === 'get odbrest.memory' && span.status.code === SpanStatusCode.ERROR);
    expect(failed).toBeDefined();
    // the request's span: a 5xx is a failure named by its status (the HTTP conventions' error.type)
    const server = spans.getFinishedSpans().find((span) => span.name === 'GET /v1/object/:id')!;
    expect(server.status.code).toBe(SpanStatusCode.ERROR);
    expect(server.attributes).toMatchObject({ 'error.type': '500', 'http.response.status_code': 500, 'url.scheme': 'http', 'server.address': 'odbrest.test' });
    const durations = await points('db.client.operation.duration');
    expect(durations.some((p) => p.attributes['db.operation.name'] === 'get' && p.attributes['error.type'] === 'store_error')).toBe(true);
  });
});
