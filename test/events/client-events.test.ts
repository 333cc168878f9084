/** `client.subscribe()` (odbrest/client) against the real service: iterator, callbacks, secure sessions, reconnection. */
import { describe, expect, test } from 'vitest';
import { demoAccess } from '../../examples/demo-access.mjs';
import { createClient, OdbRestProtocolError, type ChangeEvent, type FetchFunction } from '../../src/client/index.js';
import type { Service } from '../../src/index.js';
import { APP_KEY, demoService, USERS } from '../helpers.js';

const alice = { user: 'alice', password: USERS.alice, appNames: ['crm'] };

function clientOf(service: Service, fetchFn?: FetchFunction) {
  return createClient({ baseUrl: 'http://odbrest.test/', appKey: APP_KEY, fetch: fetchFn ?? ((input, init) => service.fetch(new Request(input, init))) });
}

/** A fetch whose event streams' bodies pass through `rewrite` (an attacker on the path, or a cut connection). */
function rewritingFetch(service: Service, rewrite: (body: ReadableStream<Uint8Array>, nth: number) => ReadableStream<Uint8Array>): FetchFunction & { streams: number; lastIds: Array<string | null> } {
  const fetchFn = (async (input: string, init: RequestInit) => {
    const request = new Request(input, init);
    if (new URL(input).pathname === '/v1/events') fetchFn.lastIds.push(request.headers.get('last-event-id'));
    const response = await service.fetch(request);
    if (!response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
    return new Response(rewrite(response.body!, fetchFn.streams++), { status: response.status, headers: response.headers });
  }) as FetchFunction & { streams: number; lastIds: Array<string | null> };
  fetchFn.streams = 0;
  fetchFn.lastIds = [];
  return fetchFn;
}

/** A fetch whose first event stream breaks (a reset connection) right after its first `create`; `cut` is called then. */
function cutAfterFirstCreate(service: Service, cut: () => void) {
  return rewritingFetch(service, (body, nth) => {
    if (nth > 0) return body;
    const reader = body.getReader();
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        controller.enqueue(value);
        if (new TextDecoder().decode(value).includes('event: create')) {
          await reader.cancel();
          controller.error(new Error('connection reset'));
          cut();
        }
      },
    });
  });
}

describe('client.subscribe', () => {
  test('as an async iterator: the event holds the object getObject reads', async () => {
    const service = await demoService({ access: demoAccess });
    const odb = clientOf(service);
    await odb.login(alice);
    const subscription = odb.subscribe([{ className: 'Customer', query: { City: 'Kiel' } }]);
    const iterator = subscription[Symbol.asyncIterator]();
    const first = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 50)); // let it connect first (no timing is asserted)
    const created = await odb.createObject('Customer', { Name: 'Iterated', City: 'Kiel' });
    const { value } = await first;
    expect(value).toMatchObject({ type: 'create', className: 'Customer', objectId: created['~ObjectID'] });
    expect(value!.object).toEqual(await odb.getObject(created['~ObjectID']));
    expect(subscription.lastEventId).toBe(value!.id);
    subscription.close();
    expect((await iterator.next()).done).toBe(true);
  });

  test('with callbacks; logout ends it with end', async () => {
    const service = await demoService({ access: demoAccess });
    const odb = clientOf(service);
    await odb.login(alice);
    const seen: ChangeEvent[] = [];
    let ended!: () => void;
    const done = new Promise<void>((resolve) => (ended = resolve));
    odb.subscribe([{ className: 'Customer' }], { onEvent: (event) => (seen.push(event), event.type === 'end' && ended()) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await odb.createObject('Customer', { Name: 'Called back' });
    while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await odb.logout();
    await done;
    expect(seen.map((event) => event.type)).toEqual(['create', 'end']);
    expect(seen[1]!.status?.internalStatus).toBe('201');
  });

  test('on a secure session each event is encrypted and signed, and the client opens it', async () => {
    const service = await demoService({ access: demoAccess });
    const raw: string[] = [];
    const tap = rewritingFetch(service, (body) => body.pipeThrough(new TransformStream({ transform: (chunk, c) => (raw.push(new TextDecoder().decode(chunk)), c.enqueue(chunk)) })));
    const odb = clientOf(service, tap);
    await odb.loginSecure(alice);
    const subscription = odb.subscribe([{ className: 'Customer' }]);
    const iterator = subscription[Symbol.asyncIterator]();
    const first = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const created = await odb.createObject('Customer', { Name: 'Sealed Secret KG' });
    const { value } = await first;
    expect(value).toMatchObject({ type: 'create', objectId: created['~ObjectID'], object: { Name: 'Sealed Secret KG' } });
    subscription.close();
    const wire = raw.join('');
    expect(wire).toContain('event: create');
    expect(wire).not.toContain('Sealed Secret KG');
    expect(wire).toMatch(/data: \{"Secure-Counter":"\d+","Secure-Signature":"[A-Za-z0-9+/=]+","body":"[A-Za-z0-9+/=]+"\}/);
  });

  test('on a secure session an unsigned event is refused', async () => {
    const service = await demoService({ access: demoAccess });
    const forge = rewritingFetch(service, (body) =>
      body.pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>).pipeThrough(
        new TransformStream<string, Uint8Array>({
          transform: (text, c) => c.enqueue(new TextEncoder().encode(text.replace(/^data: .*$/m, 'data: {"className":"Customer","~ObjectID":"FORGED","object":{}}'))),
        }),
      ),
    );
    const odb = clientOf(service, forge);
    await odb.loginSecure(alice);
    const iterator = odb.subscribe([{ className: 'Customer' }])[Symbol.asyncIterator]();
    const first = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await odb.createObject('Customer', { Name: 'Forged in transit' });
    await expect(first).rejects.toBeInstanceOf(OdbRestProtocolError);
  });

  test('reconnects with Last-Event-ID after a cut connection, losing nothing', async () => {
    const service = await demoService({ access: demoAccess });
    let cut!: () => void;
    const cutting = cutAfterFirstCreate(service, () => cut());
    const odb = clientOf(service, cutting);
    await odb.login(alice);
    const cutDone = new Promise<void>((resolve) => (cut = resolve));
    const subscription = odb.subscribe([{ className: 'Customer' }], { minDelayMs: 300 });
    const iterator = subscription[Symbol.asyncIterator]();
    const first = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const a = await odb.createObject('Customer', { Name: 'Before the cut' });
    expect((await first).value).toMatchObject({ objectId: a['~ObjectID'] });
    await cutDone;
    const b = await odb.createObject('Customer', { Name: 'While away' }); // written before the client reconnects
    expect((await iterator.next()).value).toMatchObject({ type: 'create', objectId: b['~ObjectID'] });
    expect(cutting.streams).toBe(2);
    expect(cutting.lastIds).toEqual([null, (await first).value!.id]);
    subscription.close();
  });

  test('issue 50, item 7: a CRLF stream cut anywhere between chunks loses nothing, and retry: sets the reconnection wait (with jitter)', async () => {
    const service = await demoService({ access: demoAccess });
    const encoder = new TextEncoder();
    let cut!: () => void;
    const cutNow = new Promise<void>((resolve) => (cut = resolve));
    // the first stream: `retry: 4000` first, then the service's own stream with CRLF line ends, one
    // byte per chunk (so every `\r\n` and every field is cut between two chunks), broken once `cut` is called
    const chunked = rewritingFetch(service, (body, nth) => {
      if (nth > 0) return body;
      const reader = body.getReader();
      const decoder = new TextDecoder();
      const pending: Uint8Array[] = [...encoder.encode('retry: 4000\r\n\r\n')].map((byte) => Uint8Array.of(byte));
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          while (pending.length === 0) {
            const next = await Promise.race([reader.read(), cutNow.then(() => 'cut' as const)]);
            if (next === 'cut') return void (await reader.cancel(), controller.error(new Error('connection reset')));
            if (next.done) return controller.close();
            const text = decoder.decode(next.value, { stream: true }).replace(/\n/g, '\r\n');
            pending.push(...[...encoder.encode(text)].map((byte) => Uint8Array.of(byte)));
          }
          controller.enqueue(pending.shift()!);
        },
      });
    });
    const odb = clientOf(service, chunked);
    await odb.login(alice);
    const waits: number[] = [];
    const subscription = odb.subscribe([{ className: 'Customer' }], { minDelayMs: 10, onConnection: (state) => state.open || waits.push(state.retryInMs) });
    const iterator = subscription[Symbol.asyncIterator]();
    const first = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const a = await odb.createObject('Customer', { Name: 'Zoë über CRLF' });
    const event = (await first).value as ChangeEvent;
    expect(event).toMatchObject({ type: 'create', className: 'Customer', objectId: a['~ObjectID'], object: { Name: 'Zoë über CRLF' } });
    expect(event.id).toMatch(/\S/);
    const second = iterator.next();
    await odb.updateObject(a['~ObjectID'], { Name: 'changed' });
    expect((await second).value).toMatchObject({ type: 'update', objectId: a['~ObjectID'], object: { Name: 'changed' } });
    const third = iterator.next(); // the subscription reads on (and meets the cut)
    cut();
    await expect.poll(() => waits.length).toBe(1);
    // the server's 4000 ms, not minDelayMs (10), plus at most half of it at random
    expect(waits[0]).toBeGreaterThanOrEqual(4000);
    expect(waits[0]).toBeLessThanOrEqual(6000);
    subscription.close();
    expect(await third).toEqual({ done: true, value: undefined });
  });

  test('with relogin, a secure subscription whose session ended while it was away logs in again and goes on (the soak saw it stop)', async () => {
    const service = await demoService({ access: demoAccess });
    const other = clientOf(service);
    await other.login(alice);
    let cut!: () => void;
    const cutting = cutAfterFirstCreate(service, () => cut());
    const odb = createClient({ baseUrl: 'http://odbrest.test/', appKey: APP_KEY, fetch: cutting, relogin: true });
    await odb.loginSecure(alice);
    const cutDone = new Promise<void>((resolve) => (cut = resolve));
    const subscription = odb.subscribe([{ className: 'Customer' }], { minDelayMs: 300 });
    const iterator = subscription[Symbol.asyncIterator]();
    const first = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await other.createObject('Customer', { Name: 'Before the cut' });
    await first;
    await cutDone;
    await other.accounts.endOtherSessions(); // the secure session ends while its stream is away: it reconnects to an unsigned 201
    const b = await other.createObject('Customer', { Name: 'After the new login' });
    expect((await iterator.next()).value).toMatchObject({ type: 'create', objectId: b['~ObjectID'] });
    subscription.close();
  });
});
