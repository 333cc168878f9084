/** An OTLP/HTTP receiver for tests: every JSON body posted to it, by path (`/v1/traces`, `/v1/metrics`). */
import { createServer } from 'node:http';

export interface OtlpReceiver {
  url: string;
  received: Map<string, Array<{ contentType: string | undefined; body: any }>>;
  /** Every span received so far. */
  spans(): any[];
  /** The names of the metrics received so far. */
  metricNames(): string[];
  close(): void;
}

export async function otlpReceiver(): Promise<OtlpReceiver> {
  const received: OtlpReceiver['received'] = new Map();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const list = received.get(request.url!) ?? [];
      list.push({ contentType: request.headers['content-type'], body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      received.set(request.url!, list);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    spans: () => (received.get('/v1/traces') ?? []).flatMap(({ body }) => body.resourceSpans.flatMap((resource: any) => resource.scopeSpans.flatMap((scope: any) => scope.spans))),
    metricNames: () => (received.get('/v1/metrics') ?? []).flatMap(({ body }) => body.resourceMetrics.flatMap((resource: any) => resource.scopeMetrics.flatMap((scope: any) => scope.metrics.map((metric: any) => metric.name)))),
    close: () => server.close(),
  };
}

/** `n` random lower-case hex digits (a trace id is 32, a span id 16). */
export const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');
