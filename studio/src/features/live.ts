import { useEffect } from 'preact/hooks';
import type { ChangeEvent, EventSubscription, OdbRestClient } from 'odbrest/client';

/**
 * Follows changes (PROTOCOL.md 8) while the component lives: one stream through the client's
 * `subscribe` (reconnecting, and decrypting on a secure session), closed when it unmounts or `key`
 * changes. Off when `subscription` is undefined.
 */
export function useLive(client: OdbRestClient, subscription: EventSubscription | undefined, onEvent: (event: ChangeEvent) => void, key: string): void {
  useEffect(() => {
    if (!subscription) return;
    const handle = client.subscribe([subscription], { onEvent: (event) => event.type !== 'end' && onEvent(event), onError: () => undefined });
    return () => handle.close();
  }, [client, key]);
}
