/**
 * Realtime change events (PROTOCOL.md 8) through `service.fetch`: what each session receives, as
 * `GET /v1/object` would answer it at that moment, and every refusal.
 */
import { describe, expect, it } from 'vitest';
import { MemoryKeyValueStore, type Service, type ServiceOptions } from '../../src/index.js';
import { kvKeys } from '../../src/storage/keys.js';
import { APP_KEY, call, demoService, expectError, login, testClock } from '../helpers.js';
import { SseReader } from './sse.js';

/** Customers: everyone reads, sales write, admins delete; non-admins never see a `Vip` customer (authorize). */
const RULES: ServiceOptions['access'] = {
  rules: { Customer: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'] } },
  authorize: async (context, question) => {
    if (question.action !== 'read' || question.object?.fields.Vip !== true) return true;
    const user = await context.user();
    return user?.id === 'USR00001'; // alice (admins)
  },
};

async function service(options: ServiceOptions = {}): Promise<Service> {
  return demoService({ access: RULES, ...options });
}

function subscribeUrl(subscriptions: unknown, extra = ''): string {
  return `http://odbrest.test/v1/events?subscribe=${encodeURIComponent(JSON.stringify(subscriptions))}${extra}`;
}

async function open(s: Service, sessionId: string | undefined, subscriptions: unknown, headers: Record<string, string> = {}, extra = ''): Promise<Response> {
  const all: Record<string, string> = { appkey: APP_KEY, accept: 'text/event-stream', ...headers };
  if (sessionId) all.sessionId = sessionId;
  return s.fetch(new Request(subscribeUrl(subscriptions, extra), { headers: all }), { clientAddress: '127.0.0.1' });
}

async function stream(s: Service, sessionId: string, subscriptions: unknown, headers: Record<string, string> = {}): Promise<SseReader> {
  const response = await open(s, sessionId, subscriptions, headers);
  expect(response.status, await peek(response)).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return new SseReader(response);
}

async function peek(response: Response): Promise<string> {
  return response.status === 200 ? '' : response.clone().text();
}

async function create(s: Service, sessionId: string, fields: Record<string, unknown>): Promise<string> {
  const created = await call(s, 'POST', '/v1/object/Customer', { headers: { sessionId }, json: fields });
  expect(created.body?.status?.internalStatus, created.text).toBe('0');
  return created.body.data['~ObjectID'];
}

async function update(s: Service, sessionId: string, id: string, fields: Record<string, unknown>): Promise<void> {
  const updated = await call(s, 'PATCH', `/v1/object/${id}`, { headers: { sessionId }, json: fields });
  expect(updated.body?.status?.internalStatus, updated.text).toBe('0');
}

async function errorOf(response: Response) {
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: JSON.parse(text) };
}

describe('GET /v1/events', () => {
  it('sends a create as GET /v1/object answers it to that session', async () => {
    const s = await service();
    const alice = await login(s, 'alice');
    const events = await stream(s, alice, [{ className: 'Customer' }]);
    const id = await create(s, alice, { Name: 'Realtime GmbH', City: 'Bremen' });
    const event = await events.next();
    expect(event.event).toBe('create');
    expect(event.id).toMatch(/\S/);
    const read = await call(s, 'GET', `/v1/object/${id}`, { headers: { sessionId: alice } });
    expect(event.json).toEqual({ className: 'Customer', '~ObjectID': id, object: read.body.data });
    await events.close();
  });

  it('moving an object to the recycle bin sends delete, restoring it create (the soak saw no event for a restore)', async () => {
    const s = await service();
    const alice = await login(s, 'alice');
    const id = await create(s, alice, { Name: 'Recycled KG', City: 'Bremen' });
    const events = await stream(s, alice, [{ className: 'Customer', query: { City: 'Bremen' } }]);
    expect((await call(s, 'DELETE', `/v1/object/${id}?moveToRecycler=true`, { headers: { sessionId: alice } })).status).toBe(200);
    expect(await events.next()).toMatchObject({ event: 'delete', json: { '~ObjectID': id } });
    const restored = await call(s, 'POST', `/v1/recycleBin/${id}/restore`, { headers: { sessionId: alice } });
    expect(restored.status, restored.text).toBe(200);
    expect(await events.next()).toMatchObject({ event: 'create', json: { '~ObjectID': id, object: restored.body.data } });
    await events.close();
  });

  it('users of different groups see only what they may read: create, enter, update, leave, delete', async () => {
    const s = await service();
    const alice = await login(s, 'alice');
    const bob = await login(s, 'bob');
    const toAlice = await stream(s, alice, [{ className: 'Customer' }]);
    const toBob = await stream(s, bob, [{ className: 'Customer' }]);
    const vip = await create(s, alice, { Name: 'Secret AG', Vip: true });
    expect((await toAlice.next()).event).toBe('create');
    await update(s, alice, vip, { Vip: false }); // now bob may read it: it enters his view
    expect((await toAlice.next()).event).toBe('update');
    const entered = await toBob.next(); // bob never got the create
    expect(entered.event).toBe('enter');
    expect(entered.json.object).toEqual((await call(s, 'GET', `/v1/object/${vip}`, { headers: { sessionId: bob } })).body.data);
    await update(s, alice, vip, { Vip: true }); // hidden from bob again
    expect((await toAlice.next()).event).toBe('update');
    const left = await toBob.next();
    expect(left.event).toBe('leave');
    expect(left.json).toEqual({ className: 'Customer', '~ObjectID': vip, object: { '~ClassName': 'Customer', '~ObjectID': vip, '~StoreTime': expect.any(String) } });
    expect(await call(s, 'DELETE', `/v1/object/${vip}`, { headers: { sessionId: alice } })).toMatchObject({ status: 200 });
    const deleted = await toAlice.next();
    expect(deleted.event).toBe('delete');
    expect(Object.keys(deleted.json.object).sort()).toEqual(['~ClassName', '~ObjectID', '~StoreTime']);
    const plain = await create(s, alice, { Name: 'Open KG' });
    const next = await toBob.next(); // not the delete of an object bob could not read
    expect(next).toMatchObject({ event: 'create', json: { '~ObjectID': plain } });
    await Promise.all([toAlice.close(), toBob.close()]);
  });

  it('a query subscription gets enter and leave as objects start and stop matching', async () => {
    const s = await service();
    const alice = await login(s, 'alice');
    const events = await stream(s, alice, [{ className: 'Customer', query: { City: 'Hamburg' } }]);
    const id = await create(s, alice, { Name: 'Moves GmbH', City: 'Berlin' });
    await update(s, alice, id, { City: 'Hamburg' });
    expect((await events.next())).toMatchObject({ event: 'enter', json: { '~ObjectID': id, object: { City: 'Hamburg' } } });
    await update(s, alice, id, { Name: 'Moves AG' });
    expect((await events.next())).toMatchObject({ event: 'update', json: { object: { Name: 'Moves AG' } } });
    await update(s, alice, id, { City: 'Kiel' });
    expect((await events.next())).toMatchObject({ event: 'leave', json: { '~ObjectID': id } });
    const other = await create(s, alice, { Name: 'Elbe KG', City: 'Hamburg' });
    expect((await events.next())).toMatchObject({ event: 'create', json: { '~ObjectID': other } });
    await events.close();
  });

  it('an objectId subscription follows one object; ids increase', async () => {
    const s = await service();
    const alice = await login(s, 'alice');
    const id = await create(s, alice, { Name: 'Single GmbH' });
    const events = await stream(s, alice, [{ objectId: id }]);
    await create(s, alice, { Name: 'Other GmbH' });
    await update(s, alice, id, { Name: 'Single AG' });
    await call(s, 'DELETE', `/v1/object/${id}`, { headers: { sessionId: alice } });
    const first = await events.next();
    const second = await events.next();
    expect([first.event, second.event]).toEqual(['update', 'delete']);
    expect(Number(second.id!.split('-')[1])).toBeGreaterThan(Number(first.id!.split('-')[1]));
    await events.close();
  });

  it('Last-Event-ID resumes what was missed; beyond the window the first event is reset', async () => {
    const s = await service({ events: { retainEvents: 3 } });
    const alice = await login(s, 'alice');
    const events = await stream(s, alice, [{ className: 'Customer' }]);
    const a = await create(s, alice, { Name: 'A' });
    const seen = await events.next();
    await events.close();
    const b = await create(s, alice, { Name: 'B' });
    const c = await create(s, alice, { Name: 'C' });
    const resumed = await stream(s, alice, [{ className: 'Customer' }], { 'last-event-id': seen.id! });
    expect((await resumed.next()).json['~ObjectID']).toBe(b);
    expect((await resumed.next()).json['~ObjectID']).toBe(c);
    await resumed.close();
    for (const name of ['D', 'E', 'F']) await create(s, alice, { Name: name });
    const tooLate = await stream(s, alice, [{ className: 'Customer' }], { 'last-event-id': seen.id! });
    expect((await tooLate.next()).event).toBe('reset');
    const g = await create(s, alice, { Name: 'G' });
    expect((await tooLate.next()).json['~ObjectID']).toBe(g);
    await tooLate.close();
    const foreign = await stream(s, alice, [{ className: 'Customer' }], { 'last-event-id': 'elsewhere-12' });
    expect((await foreign.next()).event).toBe('reset');
    await foreign.close();
    expect(a).not.toBe(b);
  });

  it('a stream resuming while earlier events are still being sent gets what it missed in order (the soak saw an object go back)', async () => {
    let gate: Promise<void> | undefined;
    let entered!: () => void;
    const s = await service({
      access: {
        rules: RULES.rules,
        // an event about "Held" waits while the gate is shut, so the queue behind it waits too
        authorize: async (context, question) => {
          if (gate && question.object?.fields.Name === 'Held' && new URL(context.request.url).pathname === '/v1/events') {
            entered();
            await gate;
          }
          return true;
        },
      },
    });
    const alice = await login(s, 'alice');
    const first = await stream(s, alice, [{ className: 'Customer' }]);
    await create(s, alice, { Name: 'Before' });
    const seen = await first.next();
    await first.close();
    let open!: () => void;
    gate = new Promise<void>((resolve) => (open = resolve));
    const sending = new Promise<void>((resolve) => (entered = resolve));
    const busy = await stream(s, alice, [{ className: 'Customer' }]);
    const held = await create(s, alice, { Name: 'Held' });
    await sending; // its event is on its way to `busy`
    const after = await create(s, alice, { Name: 'After' }); // its event waits behind it
    const resumed = await stream(s, alice, [{ className: 'Customer' }], { 'last-event-id': seen.id! });
    gate = undefined;
    open();
    expect([(await resumed.next()).json['~ObjectID'], (await resumed.next()).json['~ObjectID']]).toEqual([held, after]);
    expect((await busy.next()).json['~ObjectID']).toBe(held);
    await Promise.all([resumed.close(), busy.close()]);
  });

  it('Last-Event-ID resumes on an instance that had writes before its first stream (the log starts with the first stream)', async () => {
    const s = await service({ events: { retainEvents: 3 } });
    const alice = await login(s, 'alice');
    for (const name of ['A', 'B', 'C', 'D']) await create(s, alice, { Name: name });
    const events = await stream(s, alice, [{ className: 'Customer' }]);
    const e = await create(s, alice, { Name: 'E' });
    const seen = await events.next();
    expect(seen.json['~ObjectID']).toBe(e);
    await events.close();
    const f = await create(s, alice, { Name: 'F' });
    const resumed = await stream(s, alice, [{ className: 'Customer' }], { 'last-event-id': seen.id! });
    expect((await resumed.next()).json['~ObjectID']).toBe(f);
    await resumed.close();
  });

  it('ends the stream with end and the 201 status when the session logs out', async () => {
    const s = await service();
    const alice = await login(s, 'alice');
    const events = await stream(s, alice, [{ className: 'Customer' }]);
    await call(s, 'POST', '/v1/logout', { headers: { sessionId: alice } });
    const end = await events.next();
    expect(end.event).toBe('end');
    expect(end.json).toEqual({ internalStatus: '201', statusMessage: expect.any(String) });
    expect(await events.nextOrEnd()).toBeUndefined();
  });

  it('ends the stream when the session reaches its absolute end', async () => {
    const clock = testClock(Date.now());
    const s = await service({ now: clock.now, session: { absoluteTimeoutMs: 60_000 } });
    const alice = await login(s, 'alice');
    const events = await stream(s, alice, [{ className: 'Customer' }]);
    clock.advance(60_001);
    expect((await events.next()).event).toBe('end');
  });

  it('ends the stream within about a second when the session\'s record goes from the store unannounced', async () => {
    const kv = new MemoryKeyValueStore();
    const s = await service({ kv });
    const alice = await login(s, 'alice');
    const events = await stream(s, alice, [{ className: 'Customer' }]);
    await kv.delete(kvKeys.session(alice)); // as an expiry in Redis, or another process, would
    // the keep-alive (and its renewal) is 25 s away: the end comes from the once-a-second check
    expect(await events.next(5000)).toMatchObject({ event: 'end', json: { internalStatus: '201' } });
  });

  it('sends a keep-alive comment', async () => {
    const s = await service({ events: { keepAliveMs: 20 } });
    const alice = await login(s, 'alice');
    const events = await stream(s, alice, [{ className: 'Customer' }]);
    await events.comment('keep-alive');
    await events.close();
  });

  it('allows 5 streams per session (429) and the instance total (503), each with Retry-After', async () => {
    const s = await service({ events: { maxStreams: 7 } });
    const alice = await login(s, 'alice');
    const bob = await login(s, 'bob');
    const open5 = await Promise.all([1, 2, 3, 4, 5].map(() => stream(s, alice, [{ className: 'Customer' }])));
    const sixth = await errorOf(await open(s, alice, [{ className: 'Customer' }]));
    expectError(sixth, '429', 429);
    expect(sixth.headers.get('retry-after')).toMatch(/^\d+$/);
    await open5[0]!.close();
    const again = await stream(s, alice, [{ className: 'Customer' }]); // a closed stream no longer counts
    const bobs = [await stream(s, bob, [{ className: 'Customer' }]), await stream(s, bob, [{ className: 'Customer' }])];
    const full = await errorOf(await open(s, bob, [{ className: 'Customer' }]));
    expectError(full, '503', 503);
    expect(full.headers.get('retry-after')).toMatch(/^\d+$/);
    await Promise.all([...open5, again, ...bobs].map((reader) => reader.close()));
  });

  it('cuts off a client that does not read instead of buffering without bound', async () => {
    const s = await service({ events: { maxPendingBytes: 64 * 1024 } });
    const alice = await login(s, 'alice');
    const response = await open(s, alice, [{ className: 'Customer' }]);
    const id = await create(s, alice, { Name: 'Big', Notes: 'x'.repeat(8000) });
    for (let i = 0; i < 40; i++) await update(s, alice, id, { Notes: `${i}${'y'.repeat(8000)}` });
    const text = await response.text(); // ends: the stream was closed, not kept growing
    const sent = text.split('\nevent: ').length - 1;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(41);
    // the closed stream no longer counts against the session's five
    const more = await Promise.all([1, 2, 3, 4, 5].map(() => stream(s, alice, [{ className: 'Customer' }])));
    await Promise.all(more.map((reader) => reader.close()));
  });

  describe('refusals', () => {
    const cases: Array<[string, string, string]> = [
      ['no subscribe', '', 'subscribe is required'],
      ['not JSON', '?subscribe=%7Bnope', 'subscribe is not JSON'],
      ['not a list', `?subscribe=${encodeURIComponent('{"className":"Customer"}')}`, 'subscribe must be a JSON list'],
      ['an empty list', `?subscribe=${encodeURIComponent('[]')}`, 'subscribe must be a JSON list'],
      ['21 subscriptions', `?subscribe=${encodeURIComponent(JSON.stringify(Array.from({ length: 21 }, () => ({ className: 'Customer' }))))}`, 'at most 20'],
      ['an unknown member', `?subscribe=${encodeURIComponent('[{"className":"Customer","where":{}}]')}`, 'unknown member where'],
      ['a bad class name', `?subscribe=${encodeURIComponent('[{"className":"1x"}]')}`, 'className must match'],
      ['className and objectId', `?subscribe=${encodeURIComponent('[{"className":"Customer","objectId":"A"}]')}`, 'objectId stands alone'],
      ['a bad query', `?subscribe=${encodeURIComponent('[{"className":"Customer","query":{"City":{"$near":1}}}]')}`, 'unknown operator $near'],
      ['a query of the wrong type', `?subscribe=${encodeURIComponent('[{"className":"Customer","query":5}]')}`, 'query must be'],
      ['a reference path (an event is tested without what it references)', `?subscribe=${encodeURIComponent('[{"className":"Customer","query":"AccountManager.Name1 = Alice"}]')}`, 'reference paths (A.B = ...) cannot be subscribed to'],
      ['an unknown parameter', `?subscribe=${encodeURIComponent('[{"className":"Customer"}]')}&since=5`, 'unknown query parameter since'],
      ['a malformed ticket', `?subscribe=${encodeURIComponent('[{"className":"Customer"}]')}&ticket=%24%24`, 'ticket must be'],
    ];
    it.each(cases)('%s: 400 naming it', async (_, query, message) => {
      const s = await service();
      const alice = await login(s, 'alice');
      const answer = await call(s, 'GET', `/v1/events${query}`, { headers: { sessionId: alice } });
      expectError(answer, '400', 400);
      expect(answer.body.status.statusMessage).toContain(message);
    });

    it('no app key, no credential, a macro-only session, an internal or unreadable class', async () => {
      const s = await service({ access: { ...RULES, rules: { ...RULES!.rules, Secret: { read: ['nobody'] } } } });
      const subscribe = `?subscribe=${encodeURIComponent('[{"className":"Customer"}]')}`;
      const alice = await login(s, 'alice');
      expectError(await call(s, 'GET', `/v1/events${subscribe}`, { headers: { sessionId: alice }, noAppKey: true }), '100', 401);
      expectError(await call(s, 'GET', `/v1/events${subscribe}`), '204', 401);
      const dave = await login(s, 'dave', []);
      expectError(await call(s, 'GET', `/v1/events${subscribe}`, { headers: { sessionId: dave } }), '307', 403);
      expectError(await call(s, 'GET', `/v1/events?subscribe=${encodeURIComponent('[{"className":"OAuthProvider"}]')}`, { headers: { sessionId: alice } }), '404', 404);
      expectError(await call(s, 'GET', `/v1/events?subscribe=${encodeURIComponent('[{"className":"Secret"}]')}`, { headers: { sessionId: alice } }), '403', 403);
    });
  });

  describe('tickets', () => {
    it('a ticket opens one stream without headers, once', async () => {
      const s = await service();
      const alice = await login(s, 'alice');
      const issued = await call(s, 'POST', '/v1/events/ticket', { headers: { sessionId: alice } });
      expect(issued.body.status).toEqual({ internalStatus: '0', statusMessage: 'ok' });
      const ticket = issued.body.data.ticket as string;
      expect(ticket).toMatch(/^[A-Za-z0-9_-]{22,64}$/);
      const url = subscribeUrl([{ className: 'Customer' }], `&ticket=${ticket}`);
      const response = await s.fetch(new Request(url));
      expect(response.status).toBe(200);
      const events = new SseReader(response);
      const id = await create(s, alice, { Name: 'Ticketed' });
      expect((await events.next()).json['~ObjectID']).toBe(id);
      await events.close();
      const reused = await errorOf(await s.fetch(new Request(url)));
      expectError(reused, '201', 401);
      const forged = await errorOf(await s.fetch(new Request(subscribeUrl([{ className: 'Customer' }], `&ticket=${'A'.repeat(32)}`))));
      expectError(forged, '201', 401);
    });

    it('a ticket expires after 60 s and ends with its session', async () => {
      const clock = testClock(Date.now());
      const s = await service({ now: clock.now });
      const alice = await login(s, 'alice');
      const ticket = (await call(s, 'POST', '/v1/events/ticket', { headers: { sessionId: alice } })).body.data.ticket;
      clock.advance(60_001);
      expectError(await errorOf(await s.fetch(new Request(subscribeUrl([{ className: 'Customer' }], `&ticket=${ticket}`)))), '201', 401);
      const second = (await call(s, 'POST', '/v1/events/ticket', { headers: { sessionId: alice } })).body.data.ticket;
      await call(s, 'POST', '/v1/logout', { headers: { sessionId: alice } });
      expectError(await errorOf(await s.fetch(new Request(subscribeUrl([{ className: 'Customer' }], `&ticket=${second}`)))), '201', 401);
    });
  });
});
