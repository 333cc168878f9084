/**
 * The administration routes' contracts (PROTOCOL.md 6.12 *admin*): method, path and schemas, without handlers (http/route-spec.ts); the
 * route modules attach the handlers.
 */
import * as v from 'valibot';
import { spec } from '../http/route-spec.js';
import { integerParam } from '../http/validate.js';
import { integer, setOf } from '../openapi/schemas.js';
import { RECENT_REQUESTS } from './metrics.js';

export const counts = v.array(v.pipe(integer, v.minValue(0)));
export const ms = v.nullable(v.number());
/** `GET /v1/admin/metrics`: what `InstanceMetrics.answer` gives. */
export const MetricsAnswer = v.strictObject({
  Instance: v.string(),
  Interval: v.pipe(integer, v.description('seconds per point')),
  Series: v.strictObject({ Requests: counts, Errors: counts, P50Ms: v.array(ms), P99Ms: v.array(ms), Sessions: counts }),
  Routes: v.array(v.strictObject({ Route: v.string(), Method: v.string(), Count: integer, Errors: integer, P50Ms: ms, P99Ms: ms })),
});
export const RecentRequests = setOf(
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


export const MetricsQuery = v.object({
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
export const RequestsQuery = v.object({
  page: integerParam('page', 1_000_000_000, 'the page, from 0'),
  perPage: integerParam('perPage', RECENT_REQUESTS, `requests per page, default 50, at most ${RECENT_REQUESTS}`),
});

export const ADMIN = {
  getAdminMetrics: spec({ method: 'GET', path: '/v1/admin/metrics', query: MetricsQuery, answerSchema: MetricsAnswer }),
  getAdminRequests: spec({ method: 'GET', path: '/v1/admin/requests', query: RequestsQuery, answerSchema: RecentRequests }),
};
