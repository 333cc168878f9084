import { signal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import type { ChangeEvent, EventSubscription, EventSubscriptionHandle, OdbRestClient } from 'odbrest/client';
import { sessionEnded } from '../session.js';

/**
 * The console's one event stream (PROTOCOL.md 8): screens and panels follow what they show through
 * `useLive`, and the stream holds the subscriptions of them all (at most `MOST_SUBSCRIPTIONS`, the
 * newest followers first). When the list changes the stream is opened again with the new list,
 * resuming after the last event it received (`Last-Event-ID`), so a session holds one stream however
 * many panels and screens are open (it may hold five).
 */

/** A stream's most subscriptions (PROTOCOL.md 8). */
export const MOST_SUBSCRIPTIONS = 20;

/** Whether live updates flow: none followed, flowing, refused or cut (retried after `retryInMs`), or ended with an error. */
export type LiveState = { kind: 'idle' } | { kind: 'live' } | { kind: 'waiting'; code: string; retryInMs: number } | { kind: 'failed'; message: string };
export const liveState = signal<LiveState>({ kind: 'idle' });
/** The subscriptions the stream holds (by `keyOf`): what is left out beyond the most a stream takes is not live. */
export const followed = signal<ReadonlySet<string>>(new Set());

export const keyOf = (subscription: EventSubscription): string => JSON.stringify(subscription);

interface Follower {
  subscriptions: EventSubscription[];
  onEvent: (event: ChangeEvent) => void;
}

/** By age: a newer follower's subscriptions come first. */
const followers = new Set<Follower>();
let stream: { client: OdbRestClient; handle: EventSubscriptionHandle; keys: string } | undefined;
let pending: ReturnType<typeof setTimeout> | undefined;
let streamClient: OdbRestClient | undefined;

/** Whether `event` concerns `subscription` (a class's events reach its followers whatever their query). */
function concerns(subscription: EventSubscription, event: ChangeEvent): boolean {
  if ('objectId' in subscription) return event.objectId === subscription.objectId;
  return event.className === subscription.className;
}

function dispatch(event: ChangeEvent): void {
  liveState.value = { kind: 'live' };
  if (event.type === 'end') return sessionEnded();
  for (const follower of [...followers]) {
    if (event.type === 'reset' || follower.subscriptions.some((subscription) => concerns(subscription, event))) follower.onEvent(event);
  }
}

/** The subscriptions the stream should hold: distinct, newest followers first, at most `MOST_SUBSCRIPTIONS`. */
function wanted(): EventSubscription[] {
  const chosen = new Map<string, EventSubscription>();
  for (const follower of [...followers].reverse()) {
    for (const subscription of follower.subscriptions) {
      if (chosen.size < MOST_SUBSCRIPTIONS) chosen.set(keyOf(subscription), subscription);
    }
  }
  return [...chosen.values()];
}

/** Opens the stream again when what it should hold changed (once per turn, however many followers came and went). */
function reconcile(): void {
  pending = undefined;
  const list = wanted();
  const keys = list.map(keyOf).join('\n');
  if (stream && stream.keys === keys && stream.client === streamClient) return;
  const lastEventId = stream?.client === streamClient ? stream?.handle.lastEventId : undefined;
  stream?.handle.close();
  stream = undefined;
  followed.value = new Set(list.map(keyOf));
  if (list.length === 0 || !streamClient) {
    liveState.value = { kind: 'idle' };
    return;
  }
  const client = streamClient;
  const handle = client.subscribe(list, {
    lastEventId,
    onEvent: dispatch,
    onConnection: (state) => {
      if (stream?.handle !== handle) return;
      if (state.open) liveState.value = { kind: 'live' };
      else liveState.value = { kind: 'waiting', code: (state.error as { internalStatus?: string }).internalStatus ?? '', retryInMs: state.retryInMs };
    },
    onError: (cause) => {
      if (stream?.handle === handle) liveState.value = { kind: 'failed', message: cause instanceof Error ? cause.message : String(cause) };
    },
  });
  stream = { client, handle, keys };
}

function schedule(): void {
  pending ??= setTimeout(reconcile, 0);
}

/** Follows `subscriptions` until the returned function is called. */
export function follow(client: OdbRestClient, subscriptions: EventSubscription[], onEvent: (event: ChangeEvent) => void): () => void {
  streamClient = client;
  const follower: Follower = { subscriptions, onEvent };
  followers.add(follower);
  schedule();
  return () => {
    followers.delete(follower);
    schedule();
  };
}

/**
 * Follows changes while the component lives, through the console's one stream; follows anew when
 * `key` changes. Off when `subscriptions` is empty or undefined.
 */
export function useLive(client: OdbRestClient, subscriptions: EventSubscription | EventSubscription[] | undefined, onEvent: (event: ChangeEvent) => void, key: string): void {
  const latest = useRef(onEvent);
  latest.current = onEvent;
  useEffect(() => {
    const list = subscriptions === undefined ? [] : Array.isArray(subscriptions) ? subscriptions : [subscriptions];
    if (list.length === 0) return;
    return follow(client, list, (event) => latest.current(event));
  }, [client, key]);
}
