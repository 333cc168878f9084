import { load } from '../../adapters/config-modules.js';

/**
 * The OpenTelemetry SDK `odbrest serve` registers when asked (`--metrics`, `--otlp`), before the service
 * is made (the service looks for an SDK once, when it is made). The SDK packages are optional peers,
 * loaded only here, so a host that embeds odbrest installs none of them; a missing one is named with
 * the command that installs what the flag needs.
 */
export interface TelemetryExport {
  /** The Prometheus endpoint, with `--metrics`. */
  metricsUrl?: string;
  /** Exports what is pending and stops. */
  close(): Promise<void>;
}

export const METRICS_PACKAGES = '@opentelemetry/sdk-metrics @opentelemetry/exporter-prometheus';
export const OTLP_PACKAGES =
  '@opentelemetry/sdk-trace-base @opentelemetry/sdk-metrics @opentelemetry/exporter-trace-otlp-http @opentelemetry/exporter-metrics-otlp-http @opentelemetry/context-async-hooks @opentelemetry/core @opentelemetry/resources';

/** How often metrics are pushed to the OTLP receiver, and at the latest how long a finished span waits. */
const METRICS_INTERVAL_MS = 15_000;
const SPANS_DELAY_MS = 2_000;

const shownHost = (host: string | undefined) => (host === undefined || host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host);

/** The OTLP/HTTP endpoint of one signal under `base` (`http://collector:4318` → `.../v1/traces`), as `OTEL_EXPORTER_OTLP_ENDPOINT` is read. */
const signalUrl = (base: string, signal: 'traces' | 'metrics') => `${base.replace(/\/+$/, '')}/v1/${signal}`;

/**
 * Registers a meter provider whose metrics a Prometheus exporter serves on `metricsPort` and/or an
 * OTLP exporter pushes to `otlp`, and, with `otlp`, a tracer provider exporting spans there, the W3C
 * trace-context propagator (so a client's `traceparent` is continued) and an async-local context (so a
 * request's store calls nest under its span).
 */
export async function exportTelemetry(options: { metricsPort?: number; host?: string; otlp?: string }): Promise<TelemetryExport | undefined> {
  const { metricsPort, host, otlp } = options;
  if (metricsPort === undefined && otlp === undefined) return undefined;
  const api = await import('@opentelemetry/api');
  const flag = otlp === undefined ? '--metrics' : '--otlp';
  const packages = otlp === undefined ? METRICS_PACKAGES : metricsPort === undefined ? OTLP_PACKAGES : `${OTLP_PACKAGES} @opentelemetry/exporter-prometheus`;
  const { MeterProvider, PeriodicExportingMetricReader } = await load(import('@opentelemetry/sdk-metrics'), flag, '@opentelemetry/sdk-metrics', packages);
  const readers: import('@opentelemetry/sdk-metrics').MetricReader[] = [];
  const closing: Array<() => Promise<unknown>> = [];
  let metricsUrl: string | undefined;
  if (metricsPort !== undefined) {
    const { PrometheusExporter } = await load(import('@opentelemetry/exporter-prometheus'), '--metrics', '@opentelemetry/exporter-prometheus', packages);
    const exporter = new PrometheusExporter({ port: metricsPort, host, preventServerStart: true });
    await exporter.startServer();
    readers.push(exporter);
    metricsUrl = `http://${shownHost(host)}:${metricsPort}${PrometheusExporter.DEFAULT_OPTIONS.endpoint}`;
  }
  let resource: import('@opentelemetry/resources').Resource | undefined;
  if (otlp !== undefined) {
    const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { OTLPMetricExporter }, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { resourceFromAttributes }] = await Promise.all([
      load(import('@opentelemetry/sdk-trace-base'), flag, '@opentelemetry/sdk-trace-base', packages),
      load(import('@opentelemetry/exporter-trace-otlp-http'), flag, '@opentelemetry/exporter-trace-otlp-http', packages),
      load(import('@opentelemetry/exporter-metrics-otlp-http'), flag, '@opentelemetry/exporter-metrics-otlp-http', packages),
      load(import('@opentelemetry/context-async-hooks'), flag, '@opentelemetry/context-async-hooks', packages),
      load(import('@opentelemetry/core'), flag, '@opentelemetry/core', packages),
      load(import('@opentelemetry/resources'), flag, '@opentelemetry/resources', packages),
    ]);
    // OTEL_SERVICE_NAME names the service where set, as the SDKs read it
    resource = resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME || 'odbrest' });
    readers.push(new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: signalUrl(otlp, 'metrics') }), exportIntervalMillis: METRICS_INTERVAL_MS }));
    const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: signalUrl(otlp, 'traces') }), { scheduledDelayMillis: SPANS_DELAY_MS })] });
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    api.trace.setGlobalTracerProvider(tracerProvider);
    closing.push(async () => {
      await tracerProvider.shutdown();
      api.trace.disable();
      api.propagation.disable();
      api.context.disable();
    });
  }
  const meterProvider = new MeterProvider({ readers, resource });
  api.metrics.setGlobalMeterProvider(meterProvider);
  closing.unshift(async () => {
    await meterProvider.shutdown();
    api.metrics.disable();
  });
  return { metricsUrl, close: async () => void (await Promise.all(closing.map((close) => close()))) };
}
