/**
 * `GET /v1/admin/metrics` and `GET /v1/admin/requests` (PROTOCOL.md 6.12, *admin*): the answering
 * instance's metrics and recent requests, from memory (`metrics.ts`).
 */
import * as v from 'valibot';
import { InstanceMetrics, RECENT_REQUESTS } from './metrics.js';
import type { AuthContext } from '../auth/context.js';
import { okReply } from '../http/envelope.js';
import { route } from '../http/router.js';
import { integerParam } from '../http/validate.js';
import { formatStoreTime } from '../objects/read/index.js';
import { randomToken } from '../storage/ids.js';
import { integer, setOf } from '../openapi/schemas.js';

const counts = v.array(v.pipe(integer, v.minValue(0)));
const ms = v.nullable(v.number());
/** `GET /v1/admin/metrics`: what `InstanceMetrics.answer` gives. */
const MetricsAnswer = v.strictObject({
  Instance: v.string(),
  Interval: v.pipe(integer, v.description('seconds per point')),
  Series: v.strictObject({ Requests: counts, Errors: counts, P50Ms: v.array(ms), P99Ms: v.array(ms), Sessions: counts }),
  Routes: v.array(v.strictObject({ Route: v.string(), Method: v.string(), Count: integer, Errors: integer, P50Ms: ms, P99Ms: ms })),
});
const RecentRequests = setOf(
  v.strictObject({
    Time: v.pipe(v.string(), v.description('~StoreTime form')),
    Method: v.string(),
    Route: v.pipe(v.nullable(v.string()), v.description('the route template; null when no route matched')),
    Status: integer,
    Code: v.pipe(v.nullable(v.string()), v.description('internalStatus; null when the answer is no envelope')),
    DurationMs: v.number(),
    User: v.nullable(v.string()),
    RequestId: v.string(),
  }),
  'the requests in ~Elements',
  'the requests kept',
  { '~Count': 1, '~UnfilteredCount': 1, '~Elements': [{ Time: '20261127T161502+00:00', Method: 'GET', Route: '/v1/object/:id', Status: 200, Code: '0', DurationMs: 0.61, User: 'alice', RequestId: 'k3J9xQ2aZ8.2s' }] },
);


const MetricsQuery = v.object({
  minutes: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,2}$/, 'minutes must be a whole number from 1 to 60'),
      v.transform(Number),
      v.minValue(1, 'minutes must be a whole number from 1 to 60'),
      v.maxValue(60, 'minutes must be a whole number from 1 to 60'),
      v.description('the minutes the series and the route table cover, 1 to 60 (default 15)'),
    ),
  ),
});
const RequestsQuery = v.object({
  page: integerParam('page', 1_000_000_000, 'the page, from 0'),
  perPage: integerParam('perPage', RECENT_REQUESTS, `requests per page, default 50, at most ${RECENT_REQUESTS}`),
});

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
      method: 'GET',
      path: '/v1/admin/metrics',
      auth: 'objects',
      admin: true,
      summary: "This instance's requests, 5xx errors, p50/p99 latency and sessions over the last minutes, and per route (users.admins only; kept in memory)",
      query: MetricsQuery,
      examples: {
        answer: {
          Instance: 'k3J9xQ2a',
          Interval: 10,
          Series: { Requests: [12, 30], Errors: [0, 1], P50Ms: [0.42, 0.5], P99Ms: [3.36, 4], Sessions: [2, 3] },
          Routes: [{ Route: '/v1/object/:id', Method: 'GET', Count: 30, Errors: 0, P50Ms: 0.42, P99Ms: 2.83 }],
        },
      },
      answer: '{Instance, Interval (seconds per point), Series: {Requests, Errors, P50Ms, P99Ms, Sessions} (oldest first; the last point is the interval in progress; P50Ms/P99Ms null without requests), Routes: [{Route, Method, Count, Errors, P50Ms, P99Ms}]}',
      answerSchema: MetricsAnswer,
      errors: ['403'],
      handler: (_request, { query }) => metricsAnswer(metrics, query),
    }),
    route({
      method: 'GET',
      path: '/v1/admin/requests',
      auth: 'objects',
      admin: true,
      summary: `This instance's recent requests, newest first (at most ${RECENT_REQUESTS} kept; users.admins only): never a credential, body, query or header value`,
      query: RequestsQuery,
      examples: {
        answer: {
          '~Count': 1,
          '~UnfilteredCount': 1,
          '~Elements': [{ Time: '20261127T161502+00:00', Method: 'GET', Route: '/v1/object/:id', Status: 200, Code: '0', DurationMs: 0.61, User: 'alice', RequestId: 'k3J9xQ2aZ8.2s' }],
        },
      },
      answer: 'a set of {Time, Method, Route (the template; null when no route matched), Status, Code (internalStatus; null when the answer is no envelope), DurationMs, User (null without a session), RequestId}',
      answerSchema: RecentRequests,
      errors: ['403'],
      handler: (_request, { query }) => requestsAnswer(metrics, query),
    }),
  ];
}
