/**
 * `GET /v1/admin/metrics` and `GET /v1/admin/requests` (PROTOCOL.md 6.12, *admin*): the answering
 * instance's metrics and recent requests, from memory (`metrics.ts`).
 */
import * as v from 'valibot';
import { InstanceMetrics, RECENT_REQUESTS } from './metrics.js';
import type { AuthContext } from '../auth/context.js';
import { okReply } from '../http/envelope.js';
import { route } from '../http/router.js';
import { formatStoreTime } from '../objects/read/index.js';
import { randomToken } from '../storage/ids.js';
import { ADMIN, MetricsQuery, RequestsQuery } from './contract.js';


function metricsAnswer(metrics: InstanceMetrics, { minutes = 15 }: v.InferOutput<typeof MetricsQuery>) {
  return okReply(metrics.answer(minutes));
}

function requestsAnswer(metrics: InstanceMetrics, { page = 0, perPage = 50 }: v.InferOutput<typeof RequestsQuery>) {
  const { entries, total } = metrics.recent(page * perPage, perPage);
  const elements = entries.map((entry) => ({ ...entry, Time: formatStoreTime(entry.Time) }));
  return okReply({ '~Count': elements.length, '~UnfilteredCount': total, '~Elements': elements });
}

/** The admin routes; without metrics (`metrics: false`) they answer from an instance that counts nothing. */
export function adminRoutes(ctx: Pick<AuthContext, 'now'>, metrics = new InstanceMetrics(randomToken(6), ctx.now)) {
  return [
    route({
      ...ADMIN.getAdminMetrics,
      auth: 'objects',
      admin: true,
      summary: "This instance's requests, 5xx errors, p50/p99 latency and sessions over the last minutes, and per route (users.admins only; kept in memory)",
      examples: {
        answer: {
          Instance: 'k3J9xQ2a',
          Interval: 10,
          Series: { Requests: [12, 30], Errors: [0, 1], P50Ms: [0.42, 0.5], P99Ms: [3.36, 4], Sessions: [2, 3] },
          Routes: [{ Route: '/v1/object/:id', Method: 'GET', Count: 30, Errors: 0, P50Ms: 0.42, P99Ms: 2.83 }],
        },
      },
      answer: '{Instance, Interval (seconds per point), Series: {Requests, Errors, P50Ms, P99Ms, Sessions} (oldest first; the last point is the interval in progress; P50Ms/P99Ms null without requests), Routes: [{Route, Method, Count, Errors, P50Ms, P99Ms}]}',
      errors: ['403'],
      handler: (_request, { query }) => metricsAnswer(metrics, query),
    }),
    route({
      ...ADMIN.getAdminRequests,
      auth: 'objects',
      admin: true,
      summary: `This instance's recent requests, newest first (at most ${RECENT_REQUESTS} kept; users.admins only): never a credential, body, query or header value`,
      examples: {
        answer: {
          '~Count': 1,
          '~UnfilteredCount': 1,
          '~Elements': [{ Time: '20261127T161502+00:00', Method: 'GET', Route: '/v1/object/:id', Status: 200, Code: '0', DurationMs: 0.61, User: 'alice', RequestId: 'k3J9xQ2aZ8.2s' }],
        },
      },
      answer: 'a set of {Time, Method, Route (the template; null when no route matched), Status, Code (internalStatus; null when the answer is no envelope), DurationMs, User (null without a session), RequestId}',
      errors: ['403'],
      handler: (_request, { query }) => requestsAnswer(metrics, query),
    }),
  ];
}
