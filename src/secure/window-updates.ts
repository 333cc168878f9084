import type { Session, SessionStore } from '../auth/sessions.js';
import { gone, rejected } from './refusals.js';
import { acceptCounter, type SecureSessionState } from './replay.js';

interface Pending {
  n: number;
  resolve: (session: Session) => void;
  reject: (error: unknown) => void;
}

function refusal(n: number, why: 'replayed' | 'out of window') {
  return rejected(why === 'replayed' ? `Secure-Counter ${n} was already used` : `Secure-Counter ${n} is below the replay window`);
}

/**
 * Records message numbers in a session's replay window with the store's atomic `update`, several at
 * a time (group commit): at most one update per session runs in this process, and the numbers that
 * arrive meanwhile are applied together by the next one. One read-modify-write per request would
 * queue concurrent requests of one session behind each other, or turn a burst into a storm of failed
 * compare-and-sets; the compare-and-set still makes every update atomic across processes. The
 * store's `update` starts from the session as this process last wrote it, so the compare-and-set is
 * the only store operation while no other request or instance changed the session.
 */
export class WindowUpdates {
  /** Sessions with an update running, each with the numbers waiting for the next one. */
  readonly #waiting = new Map<string, Pending[]>();

  constructor(private readonly sessions: SessionStore) {}

  /** Accepts `n` once; resolves with the updated session, or rejects with `205` (a used or too old number) or `201` (no secure session). */
  accept(sessionId: string, n: number): Promise<Session> {
    return new Promise<Session>((resolve, reject) => {
      const waiting = this.#waiting.get(sessionId);
      if (waiting) {
        waiting.push({ n, resolve, reject });
        return;
      }
      this.#waiting.set(sessionId, []);
      void this.#apply(sessionId, [{ n, resolve, reject }]);
    });
  }

  async #apply(sessionId: string, batch: Pending[]): Promise<void> {
    let outcomes: Array<'replayed' | 'out of window' | 'ok'> = [];
    try {
      const session = await this.sessions.update(sessionId, (current) => {
        if (current.kind !== 'secure') throw gone();
        const state = current.extra as SecureSessionState;
        let window = state.window;
        outcomes = batch.map(({ n }) => {
          const result = acceptCounter(window, n);
          if ('refused' in result) return result.refused;
          window = result.window;
          return 'ok';
        });
        return { ...current, extra: { ...state, window } };
      });
      batch.forEach((pending, i) => {
        const outcome = outcomes[i]!;
        if (outcome === 'ok') pending.resolve(session);
        else pending.reject(refusal(pending.n, outcome));
      });
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    }
    const next = this.#waiting.get(sessionId)!;
    if (next.length === 0) {
      this.#waiting.delete(sessionId);
      return;
    }
    this.#waiting.set(sessionId, []);
    void this.#apply(sessionId, next);
  }
}
