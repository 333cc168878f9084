/**
 * Telemetry is decided once, when the service is made: without an SDK registered then, nothing is
 * wrapped or recorded (the default costs a host without one nothing), even if an SDK comes later.
 */
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../src/index.js';
import { call, demoService, login } from '../helpers.js';

afterAll(() => trace.disable());

it('a service made before any SDK records nothing, and its store is used as given', async () => {
  const store = new MemoryObjectStore();
  let reads = 0;
  const get = store.get.bind(store);
  store.get = (id) => (reads++, get(id));
  const getNow = store.getNow.bind(store); // the read path's variant without a promise
  store.getNow = (id) => (reads++, getNow(id));
  const service = await demoService({ store });
  const spans = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
  const sessionId = await login(service);
  expect((await call(service, 'GET', '/v1/object/CUS00001', { headers: { sessionId } })).status).toBe(200);
  expect(reads).toBeGreaterThan(0);
  expect(spans.getFinishedSpans()).toEqual([]);
});
