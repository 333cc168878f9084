import { ApiError, clip } from '../http/errors.js';
import type { FieldValue, KeyValueStore } from '../storage/types.js';

/** One application a login asks for and the seats its licence allows (`undefined`: any number). */
export interface SeatRequest {
  app: string;
  parallel: number | undefined;
}

/** The session a seat belongs to: its id and absolute end (epoch ms). */
export interface SeatHolder {
  id: string;
  expiresAt: number;
}

/** Whether a session still exists (for seats held by sessions that logged out unseen or timed out idle). */
export type IsLive = (sessionId: string) => Promise<boolean>;

/** Per application, the sessions holding a seat and when each ends: `{app: {sessionId: expiresAt}}`. */
type Seats = Record<string, Record<string, number>>;

const MAX_ATTEMPTS = 100;
/** Lifetime of an emptied entry: it must outlive a concurrent compare-and-set that read it. */
const EMPTY_TTL_MS = 60_000;

/**
 * A principal's licences from its `_licences` field (PROTOCOL.md 2.7): application name to seat count,
 * `undefined` for a licence without seats (`"crm"`). Entries of another shape are no licence; of two
 * entries for one application, the one with the fewest seats holds.
 */
export function readLicences(licences: FieldValue | undefined): Map<string, number | undefined> {
  const held = new Map<string, number | undefined>();
  if (!Array.isArray(licences)) return held;
  for (const entry of licences) {
    if (typeof entry === 'string') {
      if (!held.has(entry)) held.set(entry, undefined);
    } else if (isSeatLicence(entry)) {
      held.set(entry.app, Math.min(entry.parallel, held.get(entry.app) ?? Infinity));
    }
  }
  return held;
}

function isSeatLicence(entry: FieldValue): entry is { app: string; parallel: number } {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return false;
  return typeof entry.app === 'string' && typeof entry.parallel === 'number' && Number.isSafeInteger(entry.parallel) && entry.parallel >= 0;
}

/**
 * Licence seats (PROTOCOL.md 2.7) in the KeyValueStore. All seats of one principal live in one entry,
 * `seat:{<principalId>}`, changed only by compare-and-set, so taking the seats of several applications
 * is one atomic step, and instances sharing the store never hand out more than `parallel`.
 *
 * Seats free themselves lazily: a seat past its session's absolute end is dropped on the next change,
 * and when an application is full, the seats of sessions `isLive` no longer knows (logged out
 * elsewhere, idle timeout) are dropped before refusing. The entry lives as long as its last seat.
 */
export class SeatCounter {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Takes one seat of each requested application with a seat count for `session`, all or nothing:
   * throws `101` naming a full application and takes nothing then. Store the session before taking
   * its seats: a seat whose session `isLive` cannot find is free for others.
   */
  async take(principalId: string, requests: readonly SeatRequest[], session: SeatHolder, isLive: IsLive): Promise<void> {
    const counted = requests.filter((request): request is { app: string; parallel: number } => request.parallel !== undefined);
    if (counted.length === 0) return;
    await this.#change(principalId, async (seats) => {
      for (const { app, parallel } of counted) {
        const holders = (seats[app] ??= Object.create(null) as Record<string, number>);
        if (session.id in holders) continue;
        if (Object.keys(holders).length >= parallel) await dropDead(holders, isLive);
        if (Object.keys(holders).length >= parallel) {
          throw new ApiError('101', `all ${parallel} seats of the licence for application ${JSON.stringify(clip(app))} are taken`);
        }
        holders[session.id] = session.expiresAt;
      }
      return seats;
    });
  }

  /** Gives back the seats `sessionId` holds: of `apps` only (`/v1/license/release`), or all (logout). */
  async release(principalId: string, sessionId: string, apps?: readonly string[]): Promise<void> {
    await this.#change(principalId, async (seats) => {
      let changed = false;
      for (const app of apps ?? Object.keys(seats)) {
        const holders = Object.hasOwn(seats, app) ? seats[app] : undefined;
        if (holders && sessionId in holders) {
          delete holders[sessionId];
          changed = true;
        }
      }
      return changed ? seats : undefined;
    });
  }

  /** The seats of `app` held now (sessions past their end not counted; idle ones are, until a take drops them). */
  async count(principalId: string, app: string): Promise<number> {
    const seats = this.#live(await this.kv.get(key(principalId)));
    return Object.keys(Object.hasOwn(seats, app) ? seats[app]! : {}).length;
  }

  /**
   * Compare-and-set loop on the principal's entry: `change` gets a fresh copy without expired seats and
   * returns it changed, or `undefined` to write nothing; it runs again when another writer came first.
   */
  async #change(principalId: string, change: (seats: Seats) => Promise<Seats | undefined>): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const raw = await this.kv.get(key(principalId));
      const next = await change(this.#live(raw));
      if (next === undefined) return;
      for (const app of Object.keys(next)) if (Object.keys(next[app]!).length === 0) delete next[app];
      if (await this.kv.compareAndSet(key(principalId), raw, JSON.stringify(next), this.#ttl(next))) return;
    }
    throw new ApiError('503', 'licence seats are too busy, retry later');
  }

  /** The seats in a stored entry, without those past their session's end. A corrupt entry counts as empty. */
  #live(raw: string | undefined): Seats {
    const seats: Seats = Object.create(null);
    let stored: unknown;
    try {
      stored = raw === undefined ? {} : JSON.parse(raw);
    } catch {
      return seats;
    }
    if (!isRecord(stored)) return seats;
    const now = this.now();
    for (const [app, holders] of Object.entries(stored)) {
      if (!isRecord(holders)) continue;
      const live: Record<string, number> = Object.create(null);
      for (const [id, expiresAt] of Object.entries(holders)) if (typeof expiresAt === 'number' && expiresAt > now) live[id] = expiresAt;
      seats[app] = live;
    }
    return seats;
  }

  /** The entry lives until its last seat's session ends. */
  #ttl(seats: Seats): number {
    const ends = Object.values(seats).flatMap((holders) => Object.values(holders));
    return ends.length === 0 ? EMPTY_TTL_MS : Math.max(1, Math.max(...ends) - this.now());
  }
}

const key = (principalId: string) => `seat:{${principalId}}`;

async function dropDead(holders: Record<string, number>, isLive: IsLive): Promise<void> {
  const ids = Object.keys(holders);
  const live = await Promise.all(ids.map(isLive));
  ids.forEach((id, i) => {
    if (!live[i]) delete holders[id];
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
