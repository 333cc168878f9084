/**
 * Session consistency in a store (`ObjectStore.inSession`, docs/scaling.md): the position a request's
 * reads must reflect, and the position its writes reached, carried through the request's asynchronous
 * work (Node's AsyncLocalStorage), so the store's methods keep their signatures.
 *
 * A position is a PostgreSQL WAL position written as two 8-digit hexadecimal halves (`0000001A/0B3C4D5E`):
 * as strings they sort as the positions do, which is what the service compares.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

interface Scope {
  /** What the session's earlier writes reached (from its session record). */
  after: string | undefined;
  /** What this request's own writes reached. */
  wrote: string | undefined;
  /** A position that a round trip made for a read of this request has passed (later reads need none for it). */
  passed: string | undefined;
}

/** The later of two positions (either may be absent). */
export function later(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  return b === undefined || a >= b ? a : b;
}

/** PostgreSQL's text of a WAL position (`1A/B3C4D5E`) as a position that sorts as a string. */
export function positionOf(lsn: string): string {
  const [high = '0', low = '0'] = lsn.split('/');
  return `${high.toUpperCase().padStart(8, '0')}/${low.toUpperCase().padStart(8, '0')}`;
}

/** The statement that answers the current WAL position, after everything committed before it. */
export const POSITION_SQL = 'SELECT pg_current_wal_insert_lsn()::text AS lsn';

export class SessionScopes {
  readonly #storage = new AsyncLocalStorage<Scope>();

  /**
   * Runs `work` as a request of a session whose writes reached `position`; `wrote` is told the
   * position of the writes `work` made, when it made any, before this resolves (or rejects). A scope
   * inside another (a `/v1/multi` item) starts from its parent's position and raises it.
   */
  async run<T>(position: string | undefined, work: () => Promise<T>, wrote: (position: string) => Promise<void>): Promise<T> {
    const parent = this.#storage.getStore();
    const scope: Scope = { after: later(position, parent && later(parent.after, parent.wrote)), wrote: undefined, passed: undefined };
    try {
      return await this.#storage.run(scope, work);
    } finally {
      if (scope.wrote !== undefined) {
        if (parent) parent.wrote = later(parent.wrote, scope.wrote);
        await wrote(scope.wrote);
      }
    }
  }

  /**
   * The position a read must reflect: the session's, raised by this request's writes; `undefined` for
   * a session that never wrote; `null` outside any session (the service's own reads, events).
   */
  floor(): string | undefined | null {
    const scope = this.#storage.getStore();
    if (!scope) return null;
    const floor = later(scope.after, scope.wrote);
    return floor !== undefined && scope.passed !== undefined && scope.passed >= floor ? undefined : floor;
  }

  /** Records that the reads of this request have passed `floor` (a round trip was made for one after it). */
  passed(floor: string): void {
    const scope = this.#storage.getStore();
    if (scope) scope.passed = later(scope.passed, floor);
  }

  /** Whether a session's request runs here (a write then tells its position). */
  active(): boolean {
    return this.#storage.getStore() !== undefined;
  }

  /** Records the position a write of this request reached. */
  wrote(position: string): void {
    const scope = this.#storage.getStore();
    if (scope) scope.wrote = later(scope.wrote, position);
  }

  /** Runs `work` outside any session (connections opened there keep no request's scope in their callbacks). */
  outside<T>(work: () => T): T {
    return this.#storage.exit(work);
  }
}
