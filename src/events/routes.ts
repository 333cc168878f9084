/**
 * `GET /v1/events` and `POST /v1/events/ticket` (PROTOCOL.md 8). The stream's credential is a header,
 * as on every route, or a one-time ticket for browsers' `EventSource`, which cannot send headers.
 */
import { authorize, type SecureSessions } from '../auth/credentials.js';
import type { AuthContext } from '../auth/context.js';
import type { ObjectsContext } from '../objects/context.js';
import { okReply } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { route } from '../http/router.js';
import { randomToken } from '../storage/ids.js';
import { kvKeys } from '../storage/keys.js';
import { EVENTS } from './contract.js';
import type { Subscription } from './types.js';

const TICKET_TTL_MS = 60_000;

export function eventRoutes(ctx: ObjectsContext & AuthContext, secure: SecureSessions) {
  const stream = route({
    ...EVENTS.getEvents,
    auth: 'none', // a header credential, or a ticket: checked by the handler
    appKey: false,
    batch: false,
    summary: 'Change events as Server-Sent Events (create, update, delete, enter, leave; reset; end)',
    rawAnswer: { status: 200, contentType: 'text/event-stream', description: 'Server-Sent Events; each data a JSON {className, ~ObjectID, object} (encrypted on secure sessions)' },
    handler: async (request, { query: params }) => {
      if (params.ticket === undefined) ctx.checkAppKey(request.headers);
      const subscriptions = params.subscribe;
      if (params.ticket !== undefined) request.session = await redeem(ctx, params.ticket);
      const session = await authorize(ctx, secure, request, { auth: 'objects' });
      request.session = session;
      await checkClasses(ctx, request, subscriptions);
      const lastEventId = request.headers.get('last-event-id') ?? params.lastEventId;
      if (lastEventId !== undefined && lastEventId.length > 64) throw new ApiError('400', 'Last-Event-ID is longer than 64 characters');
      return ctx.events.open(request, session, subscriptions, lastEventId === '' ? undefined : lastEventId);
    },
  });
  return [
    stream,
    route({
      ...EVENTS.postEventsTicket,
      auth: 'objects',
      batch: false,
      summary: "A one-time ticket (60 s) for GET /v1/events without headers (browsers' EventSource)",
      examples: { answer: { ticket: 'rGcqNo52oqmSQBKwgnqS7PMVkKeDyiTm' } },
      answer: 'ticket: use it once, within 60 s, as GET /v1/events?ticket=...&subscribe=...',
      handler: async (request) => {
        const ticket = randomToken(24);
        await ctx.kv.set(kvKeys.eventTicket(ticket), request.session!.id, TICKET_TTL_MS);
        return okReply({ ticket });
      },
    }),
  ];
}

/** The session a ticket stands for; the ticket is gone after this, used or not. */
async function redeem(ctx: ObjectsContext & AuthContext, ticket: string) {
  const sessionId = await ctx.kv.take(kvKeys.eventTicket(ticket));
  const session = sessionId === undefined ? undefined : await ctx.sessions.touch(sessionId);
  if (!session) throw new ApiError('201', 'ticket unknown, expired or already used, or its session ended; get a new one');
  return session;
}

/** Classes are subscribed as a listing reads them: `404` for an internal class, `403` for one the session may not read. */
async function checkClasses(ctx: ObjectsContext & AuthContext, request: ApiRequest, subscriptions: Subscription[]): Promise<void> {
  const guard = ctx.guard(request);
  for (const { className } of subscriptions) {
    if (className === undefined) continue;
    if (ctx.internalClasses.has(className)) throw new ApiError('404', `no class ${className}`);
    if ((await guard.scope('read', className)) === 'none') throw new ApiError('403', `this session may not read ${className} objects`);
  }
}
