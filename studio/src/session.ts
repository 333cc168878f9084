import { signal } from '@preact/signals';
import { createClient, type OdbRestClient, type SavedCredential } from 'odbrest/client';
import { config } from './config.js';
import { prefs } from './prefs.js';

/**
 * The studio's one client of the service (odbrest/client) and the session it holds. Credentials live
 * in memory (the client's), and in sessionStorage only when the person asks to stay logged in in this
 * tab; never in cookies or localStorage.
 */
export type Transport = 'secure' | 'plain';

export interface Session {
  client: OdbRestClient;
  user: string;
  transport: Transport;
}

export const session = signal<Session | undefined>(undefined);
/** Why the login shows again, when it was not the person's own logout (the session ended). */
export const loginNotice = signal('');

const SAVED = 'odbrest-studio:session';

export const newClient = (): OdbRestClient => createClient({ baseUrl: config.apiBase, appKey: config.appKey });

export function startSession(client: OdbRestClient, user: string, remember: boolean): void {
  const transport: Transport = client.sessionKind === 'secure' ? 'secure' : 'plain';
  if (remember && client.credential) {
    try {
      sessionStorage.setItem(SAVED, JSON.stringify({ credential: client.credential, user }));
    } catch {
      // storage refused: the session lasts while the page is open
    }
  }
  loginNotice.value = '';
  session.value = { client, user, transport };
}

/** The person logs out: the session ends at the service, and what is private to them in this browser goes. */
export async function endSession(): Promise<void> {
  const current = session.value;
  if (current) prefs.forgetPrivate(current.user);
  forget();
  await current?.client.logout().catch(() => undefined);
}

/** The service says the session ended: back to the login, which says why. */
export function sessionEnded(): void {
  forget();
  loginNotice.value = 'sessionEnded';
}

/** Drops the session without asking the service (it already ended). */
export function forget(): void {
  try {
    sessionStorage.removeItem(SAVED);
  } catch {
    // nothing saved
  }
  session.value = undefined;
}

/** Continues a plain session saved in this tab, if it still lives. */
export async function resumeSaved(): Promise<void> {
  let saved: { credential: SavedCredential; user: string } | undefined;
  try {
    saved = JSON.parse(sessionStorage.getItem(SAVED) ?? 'null') ?? undefined;
  } catch {
    saved = undefined;
  }
  if (!saved) return;
  const client = newClient();
  try {
    await client.resume(saved.credential);
    session.value = { client, user: saved.user, transport: 'plain' };
  } catch {
    forget();
  }
}
