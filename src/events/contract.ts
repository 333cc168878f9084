/**
 * The event routes' contracts (PROTOCOL.md 8): method, path and schemas, without handlers
 * (http/route-spec.ts); events/routes.ts attaches the handlers.
 */
import * as v from 'valibot';
import { clip } from '../http/errors.js';
import { spec } from '../http/route-spec.js';
import { SubscribeParam } from './subscriptions.js';

const TICKET = /^[A-Za-z0-9_-]{22,64}$/;

/** Strict: an unknown parameter is `400` (a misspelt one would otherwise go unnoticed on a stream that stays open). */
export const EventsQuery = v.strictObject(
  {
    subscribe: SubscribeParam,
    ticket: v.optional(v.pipe(v.string(), v.regex(TICKET, 'ticket must be a ticket from POST /v1/events/ticket'), v.description('a one-time ticket (browsers\' EventSource), in place of the headers'))),
    lastEventId: v.optional(
      v.pipe(v.string(), v.maxLength(64, 'lastEventId is longer than 64 characters'), v.description('the Last-Event-ID header, for clients that cannot send it (a new EventSource)')),
    ),
  },
  (issue) => `unknown query parameter ${clip(String(issue.path?.[0]?.key))} (use subscribe, ticket, lastEventId)`,
);

export const EVENTS = {
  getEvents: spec({ method: 'GET', path: '/v1/events', query: EventsQuery }),
  postEventsTicket: spec({ method: 'POST', path: '/v1/events/ticket' }),
};
