import { sha256 } from '@noble/hashes/sha2.js';
import { base64urlnopad } from '@scure/base';
import type { SeatCounter } from '../auth/seats.js';
import type { Session, SessionStore } from '../auth/sessions.js';

const encoder = new TextEncoder();

/**
 * The handle that names a session in the list of sessions (PROTOCOL.md 2.8): 128 bits of a SHA-256
 * of its id. It names the session without being its credential: the id cannot be had from it, and a
 * handle sent as a credential names no session.
 */
export function sessionHandle(sessionId: string): string {
  return base64urlnopad.encode(sha256(encoder.encode(`odbrest session handle\0${sessionId}`)).subarray(0, 16));
}

/**
 * A principal's live sessions, from the slots of its last logins in the key-value store, and their
 * end: the session's entry goes and its seats are given back, so every instance answers its next
 * request `201` (each reads the session from the store on every request).
 */
export class UserSessions {
  constructor(
    private readonly sessions: SessionStore,
    private readonly seats: SeatCounter,
  ) {}

  /** The principal's live sessions, newest first. */
  async live(principalId: string): Promise<Session[]> {
    const ids = [...new Set(await this.sessions.slotIds(principalId))];
    const found = await Promise.all(ids.map((id) => this.sessions.read(id)));
    return found
      .flatMap((stored) => (stored && stored.session.principalId === principalId ? [stored.session] : []))
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1));
  }

  /** Ends one session and gives back its seats. */
  async end(session: Pick<Session, 'id' | 'principalId'>): Promise<void> {
    await this.sessions.delete(session.id);
    await this.seats.release(session.principalId, session.id);
  }

  /** Ends every live session of the principal but `except`; answers how many ended. */
  async endAll(principalId: string, except?: string): Promise<number> {
    const ending = (await this.live(principalId)).filter((session) => session.id !== except);
    await Promise.all(ending.map((session) => this.end(session)));
    return ending.length;
  }
}
