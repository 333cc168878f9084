import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { OdbRestError, type OdbRestClient } from 'odbrest/client';

const known = new WeakMap<OdbRestClient, Promise<boolean>>();

/**
 * Whether the session's user is in `users.admins` (PROTOCOL.md 6.12 *admin*): asked once per session
 * with the smallest admin read (a minute of metrics); its `403` means no. Any other failure says
 * nothing, so the next screen asks again.
 */
export function isAdmin(client: OdbRestClient): Promise<boolean> {
  let answer = known.get(client);
  if (!answer) {
    answer = client.admin.metrics(1).then(
      () => true,
      (cause) => {
        if (!(cause instanceof OdbRestError && cause.internalStatus === '403')) known.delete(client);
        return false;
      },
    );
    known.set(client, answer);
  }
  return answer;
}

/** `isAdmin` for a component: undefined until known. */
export function useAdmin(client: OdbRestClient | undefined): boolean | undefined {
  const admin = useSignal<boolean | undefined>(undefined);
  useEffect(() => {
    admin.value = undefined;
    if (!client) return;
    let current = true;
    void isAdmin(client).then((yes) => current && (admin.value = yes));
    return () => void (current = false);
  }, [client]);
  return admin.value;
}
